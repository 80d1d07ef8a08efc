"""The static prefix kept evaluated (in memory and on disk), chat templates, and the
scoring of continuations, with the real default model (short prompts: cheap)."""

from __future__ import annotations

import json
from contextlib import aclosing
from pathlib import Path
from typing import Any

import pytest

from adjutant_hookspecs import CompletionRequest
from adjutant_llamacpp import DEFAULT_MODEL, PRESETS, LlamaCpp

pytestmark = pytest.mark.anyio

SYSTEM = ("You are a terse assistant. Answer with one word. " * 12).strip()


async def text_of(provider: LlamaCpp, request: CompletionRequest) -> str:
    async with aclosing(provider.complete(request)) as stream:
        return "".join([c.text async for c in stream])


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh prefix cache; the assembled models stay where they are."""
    from adjutant_llamacpp import _models

    models = _models.cache_dir()
    monkeypatch.setattr("adjutant_llamacpp._provider.cache_dir", lambda: tmp_path)
    monkeypatch.setattr(_models, "cache_dir", lambda: models)
    return tmp_path


async def test_the_static_prefix_is_kept_on_disk_for_the_next_process(cache: Path) -> None:
    request = CompletionRequest(system=SYSTEM, prompt="Colour of the sky?", max_tokens=4,
                                temperature=0.0)
    first = LlamaCpp(context_size=1024)
    try:
        answer = await text_of(first, request)
    finally:
        await first.aclose()
    files = list((cache / "prefixes").glob("*.session"))
    assert len(files) == 1 and files[0].stat().st_size > 0
    second = LlamaCpp(context_size=1024)  # a new process, as far as llama.cpp knows
    try:
        assert await text_of(second, request) == answer
        # a damaged file is deleted and the prefix evaluated again, same answer
        files[0].write_bytes(b"not a session")
        await second.aclose()
        assert await text_of(second, request) == answer
    finally:
        await second.aclose()


async def test_an_instruct_model_is_prompted_through_its_chat_template() -> None:
    provider = LlamaCpp(context_size=512)
    try:
        llama = provider._llama(DEFAULT_MODEL)
        tokens, prefix = provider._tokens(llama, CompletionRequest(system="SYS", prompt="hi"))
        text = llama.detokenize(tokens, special=True).decode()
        if PRESETS[DEFAULT_MODEL].name.startswith("qwen"):
            assert text == ("<|im_start|>system\nSYS<|im_end|>\n<|im_start|>user\nhi"
                            "<|im_end|>\n<|im_start|>assistant\n")
            assert llama.detokenize(tokens[:prefix], special=True).decode().endswith(
                "<|im_start|>user\n")
        raw = LlamaCpp(raw=True)
        tokens, _ = raw._tokens(llama, CompletionRequest(system="SYS", prompt="hi"))
        assert llama.detokenize(tokens).decode().endswith("SYS\n\nhi")
    finally:
        await provider.aclose()


async def test_scores_rank_continuations_by_the_models_own_likelihood(cache: Path) -> None:
    provider = LlamaCpp(context_size=512)
    try:
        request = CompletionRequest(system="Answer with a colour.",
                                    prompt="What colour is a ripe banana?")
        options = ["yellow", "purple", "yellowish green"]
        scores: Any = await provider.score(request, options)
        assert len(scores) == 3 and all(s <= 0 for s in scores)
        assert scores[0] > scores[1]
        # the context holds the prompt again: a completion afterwards is unaffected
        assert (await text_of(provider, CompletionRequest(
            system="Answer with a colour.", prompt="What colour is a ripe banana?",
            max_tokens=3, temperature=0.0))).strip()
    finally:
        await provider.aclose()


async def test_scores_are_kept_on_disk_for_the_next_process(cache: Path) -> None:
    request = CompletionRequest(system=SYSTEM, prompt="What colour is a ripe banana?")
    options = ["yellow", "purple"]
    first = LlamaCpp(context_size=1024)
    try:
        scores = await first.score(request, options)
        assert first.timings["score_prompt_tokens"] > 0
    finally:
        await first.aclose()
    (kept,) = (cache / "scores").glob("*.json")
    second = LlamaCpp(context_size=1024)  # a new process: nothing evaluated
    try:
        assert await second.score(request, options) == scores
        assert second.timings["score_prompt_tokens"] == 0
        # other options are other scores, never the kept ones
        assert len(await second.score(request, ["yellow", "purple", "red"])) == 3
        # a damaged file is scored again (the same up to rounding: the prompt's
        # state was evaluated in other batches) and kept whole again
        kept.write_text("[1.0, ")
        again = await second.score(request, options)
        assert again == pytest.approx(scores, abs=0.05)
        assert json.loads(kept.read_text()) == again
    finally:
        await second.aclose()


PLAN_HEADS = [f'{{"type":"plan","steps":[{{"tool":"{name}"' for name in (
    "fs.read", "fs.list", "fs.write", "git.status", "git.log", "git.diff", "proc.list",
    "proc.kill", "sys.info")] + ['{"type":"response"']


async def test_a_reply_to_kept_scores_is_the_reply_after_scoring(cache: Path) -> None:
    """Scores read from disk leave nothing evaluated; the reply that follows evaluates
    the batch they came from, so it goes on from the same state as in a process that
    scored: the same tokens kept, the same numbers (after a plain evaluation they
    differed in the last digits, and a request asked again in a new process had planned
    other values). Again after another request in the same process."""
    request = CompletionRequest(system=SYSTEM, prompt="list the running python processes",
                                max_tokens=12, temperature=0.0,
                                grammar='root ::= "{\\"type\\":\\"plan\\",\\"steps\\":'
                                        '[{\\"tool\\":\\"proc.list\\",\\"args\\":{" [a-z"]*')
    other = CompletionRequest(system=SYSTEM, prompt="what colour is a ripe banana?",
                              max_tokens=4, temperature=0.0)
    first = LlamaCpp(context_size=1024)
    try:
        await first.score(request, PLAN_HEADS)
        said = await text_of(first, request)
        kept = first.timings["forced_kept"]
    finally:
        await first.aclose()
    assert kept >= 9
    second = LlamaCpp(context_size=1024)  # a new process: the scores come from disk
    try:
        for _ in range(2):
            await second.score(request, PLAN_HEADS)
            assert second.timings["score_prompt_tokens"] == 0
            assert await text_of(second, request) == said
            assert second.timings["forced_kept"] == kept
            await second.score(other, ["yellow", "purple"])
            await text_of(second, other)
    finally:
        await second.aclose()


async def test_the_trie_in_one_batch_scores_as_its_groups_one_by_one(cache: Path) -> None:
    """`tree_scores` (every branching node in one batch, a sequence per option) gives
    the model's own likelihoods: the same ranking as the walk, one small batch per
    group, within the rounding that differs between batch shapes; and the same figures
    again on the same input (a choice must not flip from one run to the next)."""
    from adjutant_llamacpp import _scoring

    provider = LlamaCpp(context_size=1024, keep_scores=False)
    try:
        llama = provider._llama(DEFAULT_MODEL)
        assert llama.context_params.n_seq_max == _scoring.SEQUENCES
        prompt, _ = provider._tokens(llama, CompletionRequest(
            system=SYSTEM, prompt="list the running python processes"))
        options = [llama.tokenize(h.encode(), add_bos=False, special=False)
                   for h in PLAN_HEADS]

        def scored(how: Any, options: list[list[int]]) -> list[float]:
            _scoring.hold(llama, prompt, 0)
            return list(how(llama, options))

        tree = scored(_scoring.tree_scores, options)
        assert scored(_scoring.tree_scores, options) == tree
        # the prompt's last chunk in the trie's batch: one decode, the same ranking
        decode, decodes = llama._ctx.decode, []
        llama._ctx.decode = lambda batch: decodes.append(batch.batch.n_tokens) or decode(batch)
        try:
            _scoring.rewind(llama, _scoring.CHUNK)  # held: its first chunk
            kept, tail = _scoring.hold_but_tail(llama, prompt, 0)
            assert tail and prompt[-len(tail):] == tail and len(tail) <= _scoring.CHUNK
            merged = _scoring.tree_scores(llama, options, tail)
            # each prompt token evaluated once; the last chunk with the trie
            assert kept == _scoring.CHUNK and decodes[-1] > len(tail)
            assert sum(decodes[:-1]) == len(prompt) - kept - len(tail)
        finally:
            del llama._ctx.decode
        assert _scoring.common_prefix(llama, prompt) == len(prompt)
        assert max(abs(a - b) for a, b in zip(tree, merged, strict=True)) < 0.5
        assert merged.index(max(merged)) == tree.index(max(tree))
        assert _scoring.tree_scores(llama, options, _scoring.hold_but_tail(
            llama, prompt, 0)[1]) == merged  # the same figures again
        walk = scored(_scoring.walk_scores, options)
        assert max(abs(a - b) for a, b in zip(tree, walk, strict=True)) < 0.5
        assert tree.index(max(tree)) == walk.index(max(walk))
        # more options than the context has sequences: the walk, same figures as above
        many = options + [llama.tokenize(f'{{"type":"plan","steps":[{{"tool":"t{i}"'.encode(),
                                          add_bos=False, special=False)
                           for i in range(_scoring.SEQUENCES)]
        assert scored(_scoring.tree_scores, many) == scored(_scoring.walk_scores, many)
    finally:
        await provider.aclose()


async def test_after_scoring_the_reply_goes_on_from_the_shared_path(cache: Path) -> None:
    """The context keeps the prompt and the trie's path through its largest groups;
    a reply that starts the same way evaluates only what follows it, and says what
    it would have said from a fresh context."""
    from adjutant_llamacpp import _scoring

    request = CompletionRequest(system=SYSTEM, prompt="list the running python processes",
                                max_tokens=12, temperature=0.0,
                                grammar='root ::= "{\\"type\\":\\"plan\\",\\"steps\\":'
                                        '[{\\"tool\\":\\"proc.list\\",\\"args\\":{" [a-z"]*')
    fresh = LlamaCpp(context_size=1024, keep_scores=False)
    try:
        expected = await text_of(fresh, request)
    finally:
        await fresh.aclose()
    provider = LlamaCpp(context_size=1024, keep_scores=False)
    try:
        await provider.score(request, PLAN_HEADS)
        llama = provider._llama(DEFAULT_MODEL)
        prompt, _ = provider._tokens(llama, request)
        held = llama.detokenize(list(llama.input_ids[len(prompt):llama.n_tokens])).decode()
        assert held.startswith('{"type":"plan","steps":[{"tool":"')
        assert await text_of(provider, request) == expected
        assert provider.timings["forced_kept"] >= 9  # of the 15 the grammar forces
        assert _scoring.common_prefix(llama, prompt) == len(prompt)
    finally:
        await provider.aclose()


async def test_a_request_scores_the_same_whatever_came_before_it(cache: Path) -> None:
    """What follows the static prefix is evaluated in chunks at fixed offsets, and only
    whole chunks held are kept: a request scores the same first, after a request
    sharing its first words (the files listed), and twice in a row (a batch of another
    shape rounds differently, and near choices flipped with the order of requests)."""
    here = ("Files here: README.md, notes.txt, notes.old, todo.md, config/settings.json, "
            "docs/guide.md, logs/app.log, src/app.py, src/util.py, tests/test_app.py\n")
    asked = CompletionRequest(system=SYSTEM, prompt=here + "list the running python processes")
    before = CompletionRequest(system=SYSTEM, prompt=here + "list the running docker things")
    first = LlamaCpp(context_size=1024, keep_scores=False)
    try:
        alone = await first.score(asked, PLAN_HEADS)
    finally:
        await first.aclose()
    second = LlamaCpp(context_size=1024, keep_scores=False)
    try:
        await second.score(before, PLAN_HEADS)
        await text_of(second, CompletionRequest(system=SYSTEM, prompt=before.prompt,
                                                max_tokens=3, temperature=0.0))
        assert await second.score(asked, PLAN_HEADS) == alone
        # the files listed, the same as before, were not evaluated again (a whole chunk)
        from adjutant_llamacpp._scoring import CHUNK

        assert second.timings["score_prompt_tokens"] <= len(
            second._llama(DEFAULT_MODEL).tokenize(asked.prompt.encode())) - CHUNK + 8
        assert await second.score(asked, PLAN_HEADS) == alone
    finally:
        await second.aclose()


CONTEXT_LINE = ('Context: {"git": {"branch": "work", "changed": ["README.md", "notes.txt"], '
                '"dirty": true, "root": "/home/me/project"}, "logs": [], "focus": null, '
                '"selected_files": ["src/app.py", "src/util.py", "docs/guide.md"]}')


async def test_the_prompts_first_line_is_kept_on_disk_for_the_next_process(
        cache: Path) -> None:
    """A cold `adjutant run` in a folder asked before: the whole chunks of the prompt's
    first line (the planner's context) come from disk, only the request's own tokens
    are evaluated, and the scores are exactly those of a process that evaluated it all;
    a damaged file is deleted and evaluated again."""
    options = ["yellow", "purple"]

    def asking(words: str) -> CompletionRequest:
        return CompletionRequest(system=SYSTEM, prompt=f"{CONTEXT_LINE}\nRequest: {words}")

    first = LlamaCpp(context_size=1024, keep_scores=False)
    try:
        whole = await first.score(asking("What colour is a ripe banana?"), options)
        evaluated = first.timings["score_prompt_tokens"]
    finally:
        await first.aclose()
    (kept,) = (cache / "contexts").glob("*.session")
    second = LlamaCpp(context_size=1024, keep_scores=False)  # a new process
    try:
        assert await second.score(asking("What colour is a ripe banana?"), options) == whole
        assert second.timings["score_prompt_tokens"] <= evaluated - 32
        await second.aclose()
        # another request in the same folder: the same context from disk
        await second.score(asking("What colour is the sky?"), options)
        assert second.timings["score_prompt_tokens"] <= evaluated - 32
        await second.aclose()
        kept.write_bytes(b"damaged")
        assert await second.score(asking("What colour is a ripe banana?"), options) == whole
        assert second.timings["score_prompt_tokens"] == evaluated
        assert kept.stat().st_size > 1000  # written whole again
    finally:
        await second.aclose()


def test_kept_states_are_pruned_to_the_most_recently_used(tmp_path: Path) -> None:
    import os

    from adjutant_llamacpp import _states

    for number in range(10):
        file = tmp_path / f"{number}.session"
        file.write_bytes(b"x")
        os.utime(file, (number, number))
    os.utime(tmp_path / "0.session")  # used just now
    _states.prune(tmp_path, 8)
    assert sorted(f.stem for f in tmp_path.glob("*.session")) == [
        "0", "3", "4", "5", "6", "7", "8", "9"]
