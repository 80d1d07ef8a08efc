"""Our own greedy loop (`speculate`): the same chunks, byte for byte, as llama-cpp-
python's loop (`speculate=None`), with and without drafted tokens, on the real
shipped model; the drafter alone; the KV cache after a rejected draft."""

from __future__ import annotations

from contextlib import aclosing
from typing import Any

import pytest
from llama_tools import LIST, READ

from adjutant.operator._grammar import reply_grammar
from adjutant_hookspecs import CompletionRequest
from adjutant_llamacpp import LlamaCpp
from adjutant_llamacpp._speculate import _Chooser, draft

pytestmark = pytest.mark.anyio

PROVIDER = LlamaCpp(context_size=2048, speculate=None)
PLAN = reply_grammar({"fs.read": READ, "proc.list": LIST})
#: A key list in the copilot agent's manner: fixed keys, bounded lists of strings.
KEYS = "\n".join([
    'root ::= "{\\"decisions\\":" items ",\\"action_items\\":" items '
    '",\\"key_points\\":" items ",\\"summary\\":" str "}"',
    'items ::= "[" ( str ( "," str ){0,3} )? "]"',
    'str ::= "\\"" [a-zA-Z0-9 ,.\'-]{1,80} "\\""',
])
SYSTEM = ("You plan tool calls for a local assistant. Reply with one JSON object.\n"
          'Example: read notes.txt -> {"type":"plan","steps":[{"tool":"fs.read",'
          '"args":{"path":"notes.txt"}}]}\n'
          'Example: list python processes -> {"type":"plan","steps":[{"tool":"proc.list",'
          '"args":{"name":"python"}}]}')
MEETING = ("Summarise the meeting as JSON.\nHelen: The science museum offered the "
           "fourteenth or the twenty first of March.\nMarcus: The fourteenth clashes "
           "with the swimming gala, so the twenty first.\nHelen: Agreed, the twenty "
           "first. Marcus will book the coach by Friday.")

CASES = {
    # a value copied from the prompt (the drafter finds it there)
    "copied value": CompletionRequest(
        system=SYSTEM, prompt="Read the file docs/release-notes-2026.md please.",
        grammar=PLAN, temperature=0.0, max_tokens=80),
    # a key list, the keys drafted from the grammar's earlier replies
    "key list": CompletionRequest(prompt=MEETING, grammar=KEYS, temperature=0.0,
                                  max_tokens=120),
    # cut by max_tokens in the middle of drafted text
    "max tokens": CompletionRequest(
        system=SYSTEM, prompt="List processes named redis-server, then read notes.txt.",
        grammar=PLAN, temperature=0.0, max_tokens=12),
    # a stop string inside the reply
    "stop string": CompletionRequest(
        system=SYSTEM, prompt="Read the file notes.txt.", grammar=PLAN, temperature=0.0,
        max_tokens=80, stop=('"args"',)),
    # no grammar at all
    "free text": CompletionRequest(
        prompt="Repeat exactly: alpha beta gamma delta, alpha beta gamma delta,",
        temperature=0.0, max_tokens=30),
}


@pytest.fixture(autouse=True, scope="module")
def _free_the_model() -> Any:
    yield
    import anyio

    anyio.run(PROVIDER.aclose)


async def chunks(provider: LlamaCpp, request: CompletionRequest) -> list[tuple[Any, ...]]:
    replies: Any = provider.complete(request)  # an async generator: aclose()
    async with aclosing(replies) as stream:
        return [(c.text, c.finish_reason, c.usage) async for c in stream]


def test_the_drafter_takes_the_latest_longest_match() -> None:
    # "1 2" occurs twice before the end: the later one's continuation is drafted
    assert draft([1, 2, 3, 4, 9, 1, 2, 5, 6, 7, 1, 2], 3) == [5, 6, 7]
    # a longer match wins over a later shorter one
    assert draft([7, 1, 2, 8, 8, 5, 2, 9, 7, 1, 2], 2) == [8, 8]
    # nothing of the last token occurs before: no draft
    assert draft([1, 2, 3, 4], 3) == []
    assert draft([5], 3) == [] and draft([1, 2, 1], 0) == []


def test_the_drafter_stops_at_the_context_end() -> None:
    # the latest match runs into the end of the context: only what follows it
    assert draft([4, 4, 4], 5) == [4]
    assert draft([3, 1, 2, 3, 1], 4) == [2, 3, 1]


@pytest.mark.parametrize("grammar", [PLAN, KEYS])
def test_the_chooser_picks_llama_cpps_grammar_and_greedy_token(grammar: str) -> None:
    """At every step, the token the grammar allows with the highest logit, judged on the
    likeliest tokens first, is the one llama.cpp's grammar-then-greedy chain picks
    judging the whole vocabulary."""
    from llama_cpp._internals import LlamaSampler
    from llama_cpp.llama_grammar import LlamaGrammar

    llama = PROVIDER._llama(None)
    parsed = LlamaGrammar.from_string(grammar, verbose=False)
    chain = LlamaSampler()  # type: ignore[no-untyped-call]
    chain.add_grammar(llama._model, parsed)
    chain.add_greedy()  # type: ignore[no-untyped-call]
    chooser = _Chooser(llama, parsed)
    llama.reset()
    llama.eval(llama.tokenize(MEETING.encode(), add_bos=True))
    try:
        for _ in range(40):
            mine, _ = chooser.choose(-1)
            theirs = chain.sample(llama._ctx, -1)  # and accepted by the chain
            assert mine == theirs
            chooser.accept(mine)
            if llama_is_end(llama, mine):
                break
            llama.eval([mine])
    finally:
        chooser.close()
        chain.close()  # type: ignore[no-untyped-call]


def llama_is_end(llama: Any, token: int) -> bool:
    import llama_cpp

    return bool(llama_cpp.llama_vocab_is_eog(llama._model.vocab, token))


@pytest.mark.parametrize("case", list(CASES))
async def test_the_same_chunks_with_and_without_speculation(case: str) -> None:
    request = CASES[case]
    PROVIDER.speculate = None
    plain = await chunks(PROVIDER, request)
    for lookahead in (0, 3):
        PROVIDER.speculate = lookahead
        assert await chunks(PROVIDER, request) == plain, (case, lookahead)
        assert PROVIDER.timings["decode_steps"] >= 1
    PROVIDER.speculate = None
    assert "".join(text for text, _, _ in plain)
    if case == "max tokens":
        assert plain[-1][1] == "length"
    if case == "stop string":
        assert '"args"' not in "".join(text for text, _, _ in plain)


async def test_a_rejected_draft_leaves_the_cache_as_a_fresh_one() -> None:
    """After a reply with rejected guesses, the same Llama answers the next request as
    a fresh process does (the rejected tokens left nothing behind)."""
    PROVIDER.speculate = 3
    await chunks(PROVIDER, CASES["key list"])
    timings = PROVIDER.timings
    assert timings["drafted_tokens"] > timings["accepted_tokens"], timings
    follow = CompletionRequest(prompt=MEETING + "\nMarcus: And the permission slips?",
                               grammar=KEYS, temperature=0.0, max_tokens=60)
    after = await chunks(PROVIDER, follow)
    PROVIDER.speculate = None
    fresh = LlamaCpp(context_size=2048, speculate=None, prefix_cache=False)
    try:
        assert await chunks(fresh, follow) == after
    finally:
        await fresh.aclose()


async def test_a_cancelled_speculative_stream_frees_the_model() -> None:
    import anyio

    PROVIDER.speculate = None
    plain = await chunks(PROVIDER, CASES["key list"])
    PROVIDER.speculate = 3
    got: list[Any] = []
    with anyio.CancelScope() as scope:
        replies: Any = PROVIDER.complete(CASES["key list"])
        async with aclosing(replies) as stream:
            async for chunk in stream:
                got.append((chunk.text, chunk.finish_reason, chunk.usage))
                if len(got) == 4:
                    scope.cancel()
    # trio cancels at the stream's next checkpoint: a chunk of an accepted draft already
    # in hand may come first (CI, stop 49); never a wrong one, and never the whole reply
    assert got == plain[:len(got)] and 4 <= len(got) < len(plain), (got, plain)
    # the model is free at once, and its cache serves the next request faithfully
    assert await chunks(PROVIDER, CASES["stop string"]) == [
        *await _plain(CASES["stop string"])]
    PROVIDER.speculate = None


async def _plain(request: CompletionRequest) -> list[tuple[Any, ...]]:
    was, PROVIDER.speculate = PROVIDER.speculate, None
    try:
        return await chunks(PROVIDER, request)
    finally:
        PROVIDER.speculate = was


async def test_a_reply_the_grammar_ends_ends_without_a_decode() -> None:
    """When the grammar allows nothing but the end (the plan's JSON has closed), the
    loop ends the reply without decoding its last token: the same chunks, one decode
    fewer than llama-cpp-python's loop (which decodes it to choose the end token).
    Without a grammar, or cut by max_tokens, nothing changes."""
    steps = {}
    for lookahead in (None, 0):
        PROVIDER.speculate = lookahead
        got = await chunks(PROVIDER, CASES["copied value"])
        steps[lookahead] = PROVIDER.timings["decode_steps"], got
    PROVIDER.speculate = None
    assert steps[0][1] == steps[None][1]
    assert steps[0][1][-1][1] == "stop"
    assert steps[0][0] == steps[None][0] - 1
