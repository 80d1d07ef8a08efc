"""Property tests: the plan parser and the policy chain never let the unparseable through."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from adjutant import parse_reply
from adjutant.operator._pipeline import combine
from adjutant.operator._replies import closed_answer, closed_plan
from adjutant.testing import Harness
from adjutant_hookspecs import ContractError, Plan, Response, ToolCall, ToolContext, Verdict

json_scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text()
json_values = st.recursive(json_scalars, lambda inner: st.lists(inner, max_size=4)
                           | st.dictionaries(st.text(max_size=8), inner, max_size=4),
                           max_leaves=16)
steps = st.lists(st.fixed_dictionaries(
    {"tool": st.text(max_size=12)},
    optional={"args": st.dictionaries(st.text(max_size=6), json_values, max_size=3),
              "explain": st.text(max_size=20), "dry_run": st.booleans()}), max_size=3)
replies = st.one_of(
    st.fixed_dictionaries({"type": st.just("plan"), "steps": steps}),
    st.fixed_dictionaries({"type": st.just("response"), "text": st.text()}),
    st.dictionaries(st.text(max_size=8), json_values, max_size=4),
)


@given(st.text(max_size=300))
def test_any_text_parses_or_is_refused_with_a_reason(text: str) -> None:
    try:
        reply = parse_reply(text)
    except ContractError as exc:
        reason = str(exc)
    else:
        assert isinstance(reply, Plan | Response)
        return
    assert reason  # refused, and it says why


@given(replies, st.sampled_from(["", " trailing", "}", "\n{}", ""]))
def test_structured_replies(data: dict[str, Any], suffix: str) -> None:
    text = json.dumps(data) + suffix
    try:
        reply = parse_reply(text)
    except ContractError:
        return
    # whatever was accepted is exactly what was sent, and well-formed
    assert suffix.strip() == ""
    assert data["type"] in ("plan", "response")
    if isinstance(reply, Plan):
        assert reply.steps
        assert [s.tool for s in reply.steps] == [s["tool"] for s in data["steps"]]
        assert all(isinstance(s.args, dict) for s in reply.steps)


@pytest.mark.parametrize("text", [
    '{"type":"plan","steps":[{"tool":"a","args":{"x":1,"x":2}}]}',
    '{"type":"response","text":"a","text":"b"}',
    '{"type":"plan","steps":[]}',
    '{"type":"plan","steps":[{"tool":"a","args":{"n":NaN}}]}',
    '[{"type":"response","text":"a"}]',
    "```json\n{\"type\":\"response\",\"text\":\"a\"}\n```",
])
def test_known_bad_replies(text: str) -> None:
    with pytest.raises(ContractError):
        parse_reply(text)


decisions = st.sampled_from(["allow", "ask", "deny"])


@given(st.lists(decisions, max_size=6))
def test_deny_beats_ask_beats_allow(chosen: list[str]) -> None:
    verdict = combine([Verdict(decision=d, reason=f"r{i}", policy=f"p{i}")  # type: ignore[arg-type]
                       for i, d in enumerate(chosen)])
    if "deny" in chosen:
        assert verdict.decision == "deny"
        assert verdict.policy == f"p{chosen.index('deny')}"
    elif "ask" in chosen or not chosen:
        assert verdict.decision == "ask"
    else:
        assert verdict.decision == "allow"


class Strict:
    from adjutant_hookspecs import ToolDeclaration

    declaration = ToolDeclaration(
        name="t.strict", version="1", description="strict",
        args_schema={"type": "object", "additionalProperties": False, "required": ["n"],
                     "properties": {"n": {"type": "integer", "minimum": 0, "maximum": 9}}})

    async def dry_run(self, call: ToolCall, ctx: ToolContext) -> Any:
        from adjutant_hookspecs import ExecutionResult

        return ExecutionResult(tool=call.tool, args=call.args, status="dry_run",
                               dry_run_diff="n")

    async def execute(self, call: ToolCall, ctx: ToolContext) -> Any:
        raise AssertionError("never executed here")


class Plugin:
    from adjutant_hookspecs import hookimpl

    @hookimpl
    def register_tools(self, register: Any) -> None:
        register(Strict())


@pytest.mark.anyio
@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(args=st.dictionaries(st.text(max_size=4), json_values, max_size=3))
async def test_arguments_that_break_the_schema_are_always_denied(args: dict[str, Any]) -> None:
    n = args.get("n")
    # JSON Schema: 3.0 is an integer, True is not
    integral = type(n) is int or (type(n) is float and math.isfinite(n) and n.is_integer())
    valid = set(args) == {"n"} and integral and 0 <= n <= 9  # type: ignore[operator]
    async with Harness(Plugin()) as h:
        pipeline = h.copilot.pipeline
        ctx = ToolContext(cwd=str(h.workspace))
        step = await pipeline.check(0, ToolCall(tool="t.strict", args=args), ctx=ctx,
                                    mode="execute-auto", run_id="r")
    if not valid:
        assert (step.verdict.decision, step.verdict.policy) == ("deny", "schema")
    else:
        assert step.verdict.decision == "ask"  # no policy installed: everything asks


@pytest.mark.parametrize("text", ["{", " { ", "}]", "[]", "{\"", "{...}"])
def test_an_answer_that_says_nothing_in_words_is_refused(text: str) -> None:
    """The 0.5B model once answered "show me readme.md" with ``{"type":"response",
    "text":"{"}`` (a plan begun inside the answer), and "{" was shown as the answer:
    refused, so the operator retries and says it failed if every attempt does."""
    with pytest.raises(ContractError, match="nothing in words"):
        parse_reply(json.dumps({"type": "response", "text": text}))
    for fine in ("42", "Oui.", "是的", "v2", "...", "?", "[1]"):
        assert parse_reply(json.dumps({"type": "response", "text": fine})).text == fine


@settings(max_examples=200)
@given(st.text(min_size=1, max_size=200), st.data())
def test_a_cut_answer_is_closed_to_what_it_said_and_a_cut_plan_never_is(
        said: str, data: st.DataObject) -> None:
    """The token limit cuts a rambling answer mid-string: it is closed to a prefix of
    what the model said (whole sentences), never to anything it did not say; cut in its
    first sentence, it stays malformed. A plan cut anywhere stays malformed."""
    whole = json.dumps({"type": "response", "text": said})
    cut = whole[:data.draw(st.integers(27, len(whole)))]
    closed = closed_answer(cut)
    if closed != cut:
        answer = parse_reply(closed)
        assert isinstance(answer, Response)
        assert said.startswith(answer.text) and answer.text.strip()
        assert answer.text.rstrip()[-1] in ".!?"  # whole sentences only
    cut_plan = json.dumps({"type": "plan", "steps": [{"tool": "a", "args": {"x": said}}]})
    cut_plan = cut_plan[:data.draw(st.integers(1, len(cut_plan) - 1))]
    assert closed_answer(cut_plan) == cut_plan


@pytest.mark.anyio
async def test_an_answer_cut_by_the_token_limit_is_answered_not_asked_again() -> None:
    """"What's the weather in Lisbon tomorrow?" rambled past the 0.5B model's 200
    tokens; the malformed reply was asked again with the free simpler prompt, which
    planned a read of src/util.py. The whole sentences are the answer now."""
    cut = ('{"type": "response", "text": "I cannot see the weather from here. '
           'It is usually mild in Lisbon in spring, with a light breeze and a pleas')
    async with Harness(script=[cut]) as h:
        run = await h.run("what's the weather going to be like in Lisbon tomorrow?")
    assert run.status == "answered" and run.tools == []
    assert run.text == "I cannot see the weather from here."  # its last whole sentence
    assert h.provider.pending == 0 and [r["ok"] for r in run.logged("attempt")] == [True]


@pytest.mark.anyio
async def test_an_answer_the_model_ended_inside_its_text_is_answered() -> None:
    """Asked for a haiku, the 0.5B model wrote its first line and then the end
    sentinel inside the text (a line break's place): the stop sequence ended the reply
    mid-string, and three attempts gave no answer. A reply the model ended (not the
    token limit) on a whole sentence is that answer; one cut by the limit there, or
    ended mid-sentence, is not."""
    first_line = '{"type":"response","text":"Autumn whispers softly, leaves dance in the breeze.'
    async with Harness(script=[first_line]) as h:
        run = await h.run("write me a haiku about autumn, just say it here")
    assert run.status == "answered"
    assert run.text == "Autumn whispers softly, leaves dance in the breeze."
    assert closed_answer(first_line) == first_line  # the token limit: maybe mid-thought
    mid = '{"type":"response","text":"The file says: invent'
    assert closed_answer(mid, ended=True) == mid


@pytest.mark.parametrize(("cut", "closed"), [
    # the user's words, then a ramble to the token limit: ended after the words
    ('{"type":"plan","steps":[{"tool":"n","args":{"text":"Tests use pytest\\n\\n- add the',
     '{"type":"plan","steps":[{"tool":"n","args":{"text":"Tests use pytest"}}]}'),
    # a step more after them, cut: the first value that holds them ends the plan
    ('{"type":"plan","steps":[{"tool":"n","args":{"text":"tests use pytest. Also"}},'
     '{"tool":"a","args":{"path":"x","content":"tests use pytest\\n- b',
     '{"type":"plan","steps":[{"tool":"n","args":{"text":"tests use pytest"}}]}'),
])
def test_a_plan_cut_after_the_words_the_request_carries_ends_with_them(
        cut: str, closed: str) -> None:
    assert closed_plan(cut, "tests use pytest") == closed
    assert closed_plan(cut, "tests use unittest") == cut  # not all of them: malformed
    assert closed_plan(cut[:60], "tests use pytest") == cut[:60]  # cut inside them


@pytest.mark.anyio
@pytest.mark.parametrize(("asked", "ramble", "kept"), [
    # "add to the project notes: tests are run with python3 -m pytest from the repo
    # root": the 0.5B model wrote those words, then lines of its own to the token limit;
    # the malformed reply was asked again freely and planned `shell.exec git add
    # tests.py python3 ...`. The plan now holds the user's words, and nothing more.
    ("add to notes.txt: tests are run with python3 -m pytest from the repo root",
     '"path":"notes.txt","text":"tests are run with python3 -m pytest from the repo root'
     "\\n\\n- add the line 'call mom' to notes.md\\n\\n- add the line 'buy milk",
     {"path": "notes.txt", "text": "tests are run with python3 -m pytest from the repo root"}),
    # the one text the request quotes, likewise (heldout34, run again in stop 54: the
    # heading, then text of its own to the token limit, and the cut reply failed)
    ("Create docs/ferry.md containing exactly '# Ferry timetable office' and nothing else",
     '"path":"docs/ferry.md","text":"# Ferry timetable office\\n\\n## Monday\\n- 06:00 to',
     {"path": "docs/ferry.md", "text": "# Ferry timetable office"}),
])
async def test_a_write_rambling_past_the_users_words_is_planned_with_them(
        asked: str, ramble: str, kept: dict) -> None:
    from adjutant.testing import FakeWrite, fake_tools

    cut = '{"type":"plan","steps":[{"tool":"notes.write","args":{' + ramble
    async with Harness(fake_tools(FakeWrite("notes.write"), name="notes"),
                       script=[cut]) as h:
        run = await h.run(asked)
    [step] = run.plan.steps
    assert step.args == kept
    assert h.provider.pending == 0 and [r["ok"] for r in run.logged("attempt")] == [True]


def test_the_end_sentinel_written_inside_an_answer_ends_it() -> None:
    """"how do I squash my last two commits?" was answered "..., you can use the
    following command in the read-only OS sandbox: <END>" (the worked examples' end,
    written as text, in a whole reply): the text before it, to its last whole sentence;
    an answer without it is left as it is."""
    import json

    from adjutant.operator._replies import closed_answer

    def answer(text: str) -> str:
        return json.dumps({"type": "response", "text": text})

    assert json.loads(closed_answer(answer(
        "Squash them with an interactive rebase. Use this command: <END>")))["text"] \
        == "Squash them with an interactive rebase."
    assert json.loads(closed_answer(answer("Use `git rebase -i HEAD~2`.<END><END>")))[
        "text"] == "Use `git rebase -i HEAD~2`."
    kept = answer("Nothing to add: it is done.")
    assert closed_answer(kept) == kept
