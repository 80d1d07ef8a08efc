"""Outsider attacks on stop 48's planner rooms: a name mended to the one the request
types (`typed_as_said`), text carried after "with:" (`clauses`), and a quoted cron line
read as no command (`is_question`). Each attack was tried; each test fails if it ever
works.

Values nobody stated: a mended value is always a word the request types, never one
made up, and content is never mended. Orders dropped: carried text ends at "then", so
the order after it is still planned. Writes through a question: a quoted cron line
makes a question no order, and anything else quoted still counts as a command."""

from __future__ import annotations

import random
import string

from adjutant.operator._clauses import clauses
from adjutant.operator._typed import one_letter_apart, typed_as_said
from adjutant.operator._words import is_question
from adjutant_hookspecs import Plan, ToolCall


def _mended(value: object, asked: str) -> object:
    return typed_as_said(Plan(steps=(ToolCall(tool="t", args={"v": value}),)),
                         asked).steps[0].args["v"]


def test_a_mended_name_is_always_a_word_the_request_types() -> None:
    """Values nobody stated: 2,000 random one-letter slips of random names, in random
    requests; whatever the mender does, the value is the model's own or a word typed."""
    rng = random.Random(48)
    letters = string.ascii_lowercase + "./-_"
    for _ in range(2000):
        words = ["".join(rng.choices(letters, k=rng.randint(3, 10))) for _ in range(6)]
        asked = " ".join(words)
        base = rng.choice(words)
        cut = rng.randrange(len(base))
        value = rng.choice([base[:cut] + base[cut + 1:], base[:cut] + "x" + base[cut:],
                            base[:cut] + "q" + base[cut + 1:],
                            "".join(rng.sample(base, len(base)))])
        got = _mended(value, asked)
        # a word as typed, less the full stop that ends the sentence
        assert got == value or got in [w.rstrip(".") for w in words], (value, asked, got)
        if got != value:
            assert one_letter_apart(value.lower(), str(got).lower())


def test_content_is_never_mended() -> None:
    """Values nobody stated: text with a space or a line end is the model's content, even
    one letter from a word the request types ("hello\\n" for "hello")."""
    assert _mended("hello\n", "write hello to a.txt") == "hello\n"
    assert _mended("walk schedule", "commit as 'walks schedule'") == "walk schedule"
    assert _mended(["walk.md", "x y"], "add walks.md") == ["walks.md", "x y"]


def test_a_name_between_two_typed_names_is_left_as_written() -> None:
    """Values nobody stated: one letter from two words the request types is a guess
    either way; the mender never picks."""
    assert _mended("note.txt", "notes.txt or nose.txt") == "note.txt"
    assert _mended("walks.md", "walks.md") == "walks.md"  # typed: untouched


def test_carried_text_never_swallows_the_order_after_then() -> None:
    """Orders dropped: the text after "with:" ends at "then" or a semicolon, so the step
    after it is still planned (and a "then" inside quotes in it stays text)."""
    assert clauses("write a.md with: hi there, then commit it") == [
        "write a.md with: hi there", "commit a.md"]
    assert clauses("write a.md with: hi; delete b.md") == ["write a.md with: hi",
                                                          "delete b.md"]
    assert clauses("write a.md with: 'x, then y' and z") == ["write a.md with: 'x, then y' and z"]


def test_only_a_quoted_cron_line_is_no_command() -> None:
    """Writes through a question: a quoted cron line leaves a question a question (it
    had been scheduled); the exception is for cron's characters alone, so a quoted
    command, or a cron line with a command in it, still counts as one to run."""
    assert is_question("what does `*/5 * * * *` mean?")
    assert is_question("in plain words, what is `0 6 * * 1` saying?")
    for asked in ("what does `ls` show?", "what is `0 6 * * 1 backup.sh` saying?",
                  "what does `1 2 3 4 5 && rm -rf ~` do?"):
        assert not is_question(asked), asked
