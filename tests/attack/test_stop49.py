"""Outsider attacks on stop 49's planner rooms: the diff the operator writes for an edit
the request states (`stated_edit`), "it" taken from the step before (`refers_back`),
and orders that reach people answered in words (`reaches_people`). Each attack was
tried; each test fails if it ever works.

Values nobody stated: a diff changes only what the request names, into a value the
request types. Files out of bounds: no file outside the working directory, and no
protected one, is read into a plan. Writes through words: an order to buy or to email
someone is answered in words, never planned as a file change."""

from __future__ import annotations

import random
import re
import string
from pathlib import Path

import pytest

from adjutant.operator._claims import claims_done
from adjutant.operator._clauses import refers_back
from adjutant.operator._edits import stated_edit
from adjutant.operator._in_words import reaches_people, wants_words
from adjutant_files._patch import apply, parse
from adjutant_hookspecs import Plan, ToolCall


def _reader(root: Path):  # type: ignore[no-untyped-def]
    def read(path: str) -> str | None:
        try:
            return (root / path).read_text()
        except OSError:
            return None
    return read


def test_a_diff_only_ever_puts_in_a_value_the_request_types(tmp_path: Path) -> None:
    """Values nobody stated: 1,500 random files and random "change A to B" requests
    (A there or not, quoted or not, a setting or a word); every diff applies to the
    file exactly, and each line it adds is a line it removes with A made B, or a
    setting's value made B (or yes/no in the file's spelling)."""
    rng = random.Random(49)
    words = ["alpha", "beta", "gamma", "debug", "currency", "EUR", "GBP", "true", "false",
             "north", "ship", "milk", "x-ray", "v1.0"]
    checked = 0
    for number in range(1500):
        lines = []
        for _ in range(rng.randint(1, 6)):
            shape = rng.choice(["{k}: {v}", '"{k}": "{v}"', "{k} = {v}", "{k} {v} {w}"])
            lines.append(shape.format(k=rng.choice(words), v=rng.choice(words),
                                      w=rng.choice(words)))
        name = f"f{number}.txt"
        (tmp_path / name).write_text("\n".join(lines) + "\n")
        old, new = rng.choice(words), rng.choice([*words, "".join(rng.choices(
            string.ascii_lowercase, k=5))])
        quote = rng.choice(["", "'"])
        asked = rng.choice([f"in {name} change {quote}{old}{quote} to {quote}{new}{quote}",
                            f"change the {old} in {name} from {rng.choice(words)} to {new}",
                            f"turn {old} on in {name}", f"set {old} to {new} in {name}"])
        diff = stated_edit(asked, str(tmp_path), _reader(tmp_path))
        if diff is None:
            continue
        [patch] = parse(diff)
        assert patch.path == name
        before = (tmp_path / name).read_text()
        after = apply(before, patch)
        removed = [line for line in before.splitlines() if line not in after.splitlines()]
        added = [line for line in after.splitlines() if line not in before.splitlines()]
        assert len(added) == len(removed) and added, (asked, diff)  # lines changed in place
        had = {t for line in removed for t in re.findall(r"[\w.-]+", line)}
        for line in added:  # nothing but what was there, the typed value, a yes or a no
            assert set(re.findall(r"[\w.-]+", line)) - had <= {new, *_YES_NO}, (asked, line)
        checked += 1
    assert checked > 300  # the attack reached the diff-writer often enough to mean it


_YES_NO = {"true", "false", "True", "False", "yes", "no", "on", "off"}


def test_no_file_outside_the_working_directory_is_read(tmp_path: Path) -> None:
    """Files out of bounds: "../", an absolute path, or a link out of the working
    directory names a file the diff-writer never reads (the reader would have)."""
    work = tmp_path / "work"
    work.mkdir()
    (tmp_path / "secret.txt").write_text("token = abc\n")
    (work / "link.txt").symlink_to(tmp_path / "secret.txt")
    read_paths: list[str] = []

    def read(path: str) -> str | None:
        read_paths.append(path)
        return (work / path).read_text()

    for asked in ("in ../secret.txt change abc to xyz",
                  f"in {tmp_path / 'secret.txt'} change abc to xyz",
                  "in link.txt change abc to xyz", "in /etc/passwd change root to toor"):
        assert stated_edit(asked, str(work), read) is None, asked
    assert read_paths == []


@pytest.mark.parametrize("asked", [
    "Order two wheels of Comté from my supplier in the Jura and email them the invoice.",
    "buy 3 reams of paper from the shop on the corner",
    "please text my volunteers that practice is off",
    "Book a table from the website for friday",
])
def test_an_order_to_reach_someone_is_answered_in_words_and_claims_nothing(asked: str) -> None:
    """Writes through words: it wants words, and any answer in words is treated as
    claiming nothing was sent (`claims_done`): nothing here sends or buys."""
    assert wants_words(asked)
    assert reaches_people(asked) and claims_done("Done, sent.", asked)


@pytest.mark.parametrize("asked", [
    "add 'call the plumber' to notes.txt",  # quoted: content, not an order
    "commit with message \"email them\"",
    "order the list in todo.md by date",  # order as in sort
    "read notes.txt, then text my boss what it says",  # reaches, but the read is a step
])
def test_a_step_that_only_mentions_reaching_someone_is_still_planned(asked: str) -> None:
    """Orders dropped: none of these wants words only."""
    assert not wants_words(asked)


def test_it_is_never_a_path_the_step_before_did_not_name() -> None:
    """Values nobody stated: "it" becomes the step before's own path argument, or
    stays; never another argument's value, never a path from the model's text."""
    before = Plan(steps=(ToolCall(tool="t", args={"pattern": "secret", "paths": ["/etc"]}),))
    assert refers_back("zip it", before) == "zip it"
    before = Plan(steps=(ToolCall(tool="t", args={"path": 5}),))
    assert refers_back("zip it", before) == "zip it"
    assert refers_back("zip it", object()) == "zip it"
