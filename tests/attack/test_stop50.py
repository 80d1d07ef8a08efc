"""Outsider attacks on stop 50's planner rules: small talk answered in words
(`_SMALL_TALK`), flags the request turns off (`_flags_as_said`), times said in other
units (`seconds_as_said`), two files compared in the order named (`compared_in_order`),
a time alone joined to the order after it, and "in there" as the step before's path.
Each attack was tried; each test fails if it ever works.

Orders hidden in small talk: a greeting or thanks never swallows an order beside it.
Values nobody stated: no rule turns a flag on, raises a limit beyond what was said, or
puts a path into a plan that was not already there. Lost words: joining a time to its
order drops no word of the request."""

from __future__ import annotations

import random
import re

import pytest

from adjutant.operator._clauses import clauses, refers_back
from adjutant.operator._in_words import wants_words
from adjutant.operator._stated import _flags_as_said
from adjutant.operator._typed import compared_in_order
from adjutant.operator._when import seconds_as_said
from adjutant_hookspecs import Plan, ToolCall

GREETINGS = ["hi", "hi!", "hello", "hey there", "thanks", "thank you so much", "good morning",
             "cheers", "bye", "how are you"]
ORDERS = ["delete notes.txt", "commit everything", "kill 4242", "remove the src folder",
          "push to main", "write 'x' to notes.txt", "run rm -rf build", "zip src"]


@pytest.mark.parametrize("order", ORDERS)
def test_small_talk_never_swallows_an_order(order: str) -> None:
    """A greeting or thanks before or after an order, with any joining, still plans the
    order: 10 greetings x 4 joinings x 2 sides for each order."""
    for greeting in GREETINGS:
        for join in (", ", "! ", " - ", ". "):
            for asked in (f"{greeting}{join}{order}", f"{order}{join}{greeting}"):
                assert not wants_words(asked), asked


def test_small_talk_alone_is_answered_in_words() -> None:
    for greeting in GREETINGS:
        assert wants_words(greeting) and wants_words(greeting.upper() + "!!")


SCHEMA = {"type": "object", "properties": {
    "staged": {"type": "boolean"}, "untracked": {"type": "boolean",
                                                 "description": "List them (default true)."},
    "force": {"type": "boolean"}, "timeout": {"type": "number",
                                              "description": "Seconds before it is killed."},
    "count": {"type": "integer", "description": "How many."}}}


def test_no_rule_turns_a_flag_on_or_adds_one() -> None:
    """Values nobody stated: 3,000 random plans and requests with negations; the flags
    that come out are those that went in, each on only if it was on."""
    rng = random.Random(50)
    words = ["isn't", "not", "don't", "no", "staged", "untracked", "force", "show", "the",
             "files", "without", "never", "aren't", "changes", "push"]
    for _ in range(3000):
        args = {k: rng.choice([True, False]) for k in ("staged", "untracked", "force")
                if rng.random() < 0.6}
        asked = " ".join(rng.choices(words, k=rng.randint(2, 9)))
        lowered = re.findall(r"[a-z0-9]+", asked.lower())
        got = _flags_as_said(ToolCall(tool="t", args=args), SCHEMA, lowered).args
        assert set(got) <= set(args), (asked, args, got)
        assert all(args[k] or not v for k, v in got.items()), (asked, args, got)


def test_a_time_is_never_raised_beyond_what_the_request_says() -> None:
    """2,000 random durations and values: a value changes only when it is the number
    said with its unit, and then to exactly that time in seconds; counts are never
    touched."""
    rng = random.Random(5050)
    units = {"seconds": 1, "minutes": 60, "mins": 60, "hours": 3600, "hrs": 3600}
    for _ in range(2000):
        said, unit = rng.randint(1, 99), rng.choice(list(units))
        value = rng.choice([said, said + 1, rng.randint(1, 600)])
        asked = rng.choice([f"run it and give it {said} {unit}",
                            f"'wait {said} {unit}' then run it",  # quoted: not said
                            f"run it for {said} {unit} then {said + 2} {unit}"])
        args = {"timeout": value, "count": said}
        got = seconds_as_said(ToolCall(tool="t", args=args), SCHEMA, asked).args
        assert got["count"] == said
        if got["timeout"] != value:
            assert value == said and got["timeout"] == said * units[unit], (asked, got)
            assert asked.startswith("run it and give it"), asked


def test_comparing_in_order_puts_in_no_path_and_changes_no_other_step() -> None:
    """1,000 random plans: the values that come out are the values that went in, only
    a swapped pair put in the order named."""
    rng = random.Random(500)
    names = ["notes.txt", "notes.old", "/etc/passwd", "../x", "todo.md", "a b"]
    for _ in range(1000):
        steps = tuple(ToolCall(tool=rng.choice(["fs.diff", "fs.write", "git.diff"]), args={
            k: rng.choice(names) for k in rng.sample(["a", "b", "path", "content"],
                                                     rng.randint(0, 3))})
            for _ in range(rng.randint(1, 3)))
        pair = tuple(rng.sample(names, 2))
        got = compared_in_order(Plan(steps=steps), pair)  # type: ignore[arg-type]
        for before, after in zip(steps, got.steps, strict=True):
            assert before.tool == after.tool and set(before.args) == set(after.args)
            assert sorted(before.args.values()) == sorted(after.args.values())


@pytest.mark.parametrize("asked", [
    "every Monday at 7am, delete notes.txt and then zip src",
    "each night at 2am, run the backup, then commit everything",
    "every weekday at 9, show git status; push to main",
    "daily, kill 4242 and zip logs",
])
def test_joining_a_time_to_its_order_drops_no_word(asked: str) -> None:
    """Lost words: every word of the request but the joining ones ("and then") is in
    the clauses planned."""
    said = " ".join(clauses(asked))
    for word in set(re.findall(r"[\w.]+", asked)) - {"and", "then"}:
        assert word in said, (word, clauses(asked))


def test_in_there_is_only_ever_the_path_of_the_step_before() -> None:
    before = Plan(steps=(ToolCall(tool="fs.read", args={"path": "config/settings.json"}),))
    assert refers_back("turn debug on in there", before) == \
        "turn debug on in config/settings.json"
    assert refers_back("is there anything in there", Plan(steps=())) == \
        "is there anything in there"  # no step before: left as said
    assert refers_back("what's there to do", before) == "what's there to do"
    assert refers_back("write 'in there' to notes.txt", before) == \
        "write 'in there' to notes.txt"  # quoted text is no reference
