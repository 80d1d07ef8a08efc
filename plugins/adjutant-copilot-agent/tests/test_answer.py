"""The model's answer: compact (every generated token costs about 0.1 s on the embedded
0.5B model), bounded (a looping model cannot run on), and read whatever its state.

The grammar is checked two ways: llama.cpp accepts it (test_pipeline), and here it is
translated to a regular expression (it has no recursion) and matched against answers
it must take and answers it must refuse."""

from __future__ import annotations

import json
import re

import pytest

from adjutant_copilot_agent._analysis import (
    CONTEXT_WORDS,
    GRAMMAR,
    ITEM_WORDS,
    JSON_SCHEMA,
    ORDER,
    SUMMARY_WORDS,
    SYSTEM,
    WORD_CHARS,
)
from adjutant_copilot_agent._parse import parse_cycle_result

_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|\[(?:[^\]\\]|\\.)*\]|\{\d*,?\d*\}|[A-Za-z_]\w*|[()|?*+]'
                    r'|\s+')


def _regex(grammar: str) -> re.Pattern[str]:
    """The GBNF ``grammar`` (no recursion) as one Python regular expression."""
    rules = {}
    for line in grammar.splitlines():
        name, _, body = line.partition("::=")
        rules[name.strip()] = body.strip()

    def expand(name: str, depth: int = 0) -> str:
        assert depth < 20, "recursive grammar"
        out = []
        for tok in _TOKEN.findall(rules[name]):
            if tok.isspace():
                continue
            if tok.startswith('"'):
                out.append(re.escape(json.loads(tok)))
            elif tok.startswith("["):
                out.append(tok)
            elif tok == "(":
                out.append("(?:")
            elif tok[0].isalpha() or tok[0] == "_":
                out.append(f"(?:{expand(tok, depth + 1)})")
            else:
                out.append(tok)
        return "".join(out)

    return re.compile(expand("root"), re.DOTALL)


GOOD = {"decisions": ["Move the demo to Tuesday"],
        "action_items": ["Dana will book the room", "Bob sends the notes"],
        "key_points": [], "updated_summary": "The team moved the demo; Dana books the room.",
        "suggested_questions": ["What is the catering budget?"],
        "key_concepts": ["Dana: books the room", "Lisbon offsite: cheaper than Porto"]}


def _answer(**fields: object) -> str:
    return json.dumps({**GOOD, **fields}, ensure_ascii=False)


def test_the_grammar_takes_the_compact_answer_of_the_system_prompts_example() -> None:
    grammar = _regex(GRAMMAR)
    assert grammar.fullmatch(_answer())
    example = SYSTEM.split("Example answer:\n", 1)[1]
    assert grammar.fullmatch(example), "the worked example must be an answer it allows"
    assert list(json.loads(example)) == list(ORDER)
    assert set(JSON_SCHEMA["required"]) == set(ORDER) == set(JSON_SCHEMA["properties"])


@pytest.mark.parametrize("bad", [
    # fields the cues fill or nothing reads: tokens the merge would throw away
    '{"decisions": [], "action_items": [], "open_questions": ["Who pays?"], '
    '"key_points": [], "updated_summary": "x", "suggested_questions": [], "key_concepts": []}',
    _answer(suggested_questions=[{"question": "Who pays?", "reason": "nobody said"}]),
    _answer(key_concepts=[{"term": "Dana", "context": "books the room"}]),
    # a looping model: bounded in words
    _answer(decisions=[" ".join(["we met"] * (ITEM_WORDS // 2 + 1))]),
    _answer(updated_summary=" ".join(["word"] * (SUMMARY_WORDS + 1))),
    _answer(key_concepts=["Dana: " + " ".join(["books"] * (CONTEXT_WORDS + 1))]),
    _answer(key_concepts=["a very long term name: x"]),
    # a word run on without spaces ("appointment,appointment,...")
    _answer(decisions=["appointment," * 4]),
    _answer(updated_summary="We met. " + "x" * (WORD_CHARS + 1)),
    _answer(action_items=["one", "two", "three", "four", "five"]),
    _answer(key_concepts=["a: b", "c: d", "e: f"]),
    # free whitespace costs tokens
    _answer().replace('", "', '",  "', 1),
    _answer().replace("{", "{ ", 1),
])
def test_the_grammar_refuses_what_the_merge_would_throw_away_and_runaway_strings(
        bad: str) -> None:
    assert not _regex(GRAMMAR).fullmatch(bad)


def test_the_bounds_are_the_longest_the_grammar_takes() -> None:
    grammar = _regex(GRAMMAR)
    assert grammar.fullmatch(_answer(decisions=[" ".join(["w"] * ITEM_WORDS)]))
    assert grammar.fullmatch(_answer(updated_summary=" ".join(["w"] * SUMMARY_WORDS)))
    assert grammar.fullmatch(_answer(key_points=[" ".join(["w" * WORD_CHARS] * 3)]))
    assert grammar.fullmatch(_answer(key_concepts=["Big Term Here: "
                                                   + " ".join(["c"] * CONTEXT_WORDS)]))


def test_a_concept_as_term_colon_context_is_split_and_a_bare_term_kept() -> None:
    parsed = parse_cycle_result(_answer(key_concepts=["Lisbon offsite: cheaper: than Porto",
                                                      "Postgres", "odd:"]))
    assert [(c.term, c.context) for c in parsed.key_concepts] == [
        ("Lisbon offsite", "cheaper: than Porto"), ("Postgres", ""), ("odd:", "")]
    assert [q.question for q in parsed.suggested_questions] == ["What is the catering budget?"]
    assert parsed.suggested_questions[0].reason == ""


def test_a_compact_answer_cut_anywhere_keeps_every_field_complete_before_the_cut() -> None:
    """What ``max_tokens`` does to an answer: whatever the cut, no exception, and each
    field whose value was complete before it is read whole."""
    answer = _answer()
    whole = parse_cycle_result(answer)
    for at in range(len(answer) + 1):
        head = answer[:at]
        parsed = parse_cycle_result(head)
        for name in ORDER:
            value = json.dumps(GOOD[name], ensure_ascii=False)
            if f'"{name}": {value}' in head:
                assert getattr(parsed, name) == getattr(whole, name), (at, name)
