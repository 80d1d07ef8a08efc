"""Outsider attacks on stop 46's planner rooms: the rules that now fill values for the
model (`paths_as_named` sending text written to a folder to the file in it,
`searched_for` searching the folder named first, `scheduled_as_said` writing a cron,
`quote_as_said`, lines carried after a colon) and the scene rule before an order to
see (`shown_path`). Each attack was tried; each test fails if it ever works.

Indirect reads and writes: a rule that names a path must never name one outside the
workspace, nor a link leading out. Writes through approved commands: a schedule is
never made from quoted content or a fact kept; an order is never dropped as a scene.
Escapes: a quoted label with a terminal's escapes reaches the approval preview only as
escapes, never as effects."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

from adjutant.operator._here import shown_path
from adjutant.operator._values import paths_as_named, quote_as_said, searched_for
from adjutant.operator._when import cron_of, scheduled_as_said
from adjutant.operator._words import carried_text
from adjutant_hookspecs import Plan, ToolCall, ToolDeclaration

REGISTRY = Path(__file__).resolve().parents[2] / "plugins"
TOOLS = {d.name: d for d in (msgspec.json.decode(f.read_bytes(), type=ToolDeclaration)
                             for f in REGISTRY.glob("adjutant-*/registry/tools/*.json"))}


def _space(tmp_path: Path) -> Path:
    """A workspace with a docs folder whose guide is a link leading out, a folder link
    leading out, and a secret outside."""
    cage = tmp_path / "work"
    (cage / "docs").mkdir(parents=True)
    (cage / "todo.md").write_text("- ship\n")
    outside = tmp_path / "Secrets"
    outside.mkdir()
    (outside / "guide.md").write_text("secret\n")
    (cage / "docs" / "guide.md").symlink_to(outside / "guide.md")
    (cage / "out").symlink_to(outside)
    return cage


def _plan(*steps: tuple[str, dict]) -> Plan:
    return Plan(steps=tuple(ToolCall(tool=t, args=a) for t, a in steps))


def test_text_written_to_a_folder_never_goes_through_a_link_leading_out(
        tmp_path: Path) -> None:
    """Indirect write: "add X to the guide in docs", where docs/guide.md is a link to a
    file outside, must not send the append to that link (the cage would refuse it, but
    no rule should name it); the model's own path stays, for the cage to judge."""
    cage = str(_space(tmp_path))
    append = _plan(("fs.append", {"path": "docs", "content": "pwned\n"}))
    for asked in ("add 'pwned' to the guide in docs", "append pwned to the guide in out"):
        assert paths_as_named(append, asked, TOOLS, cage) == append, asked


def test_a_search_never_names_a_folder_outside(tmp_path: Path) -> None:
    """Indirect read: "grep ../Secrets for token" or "grep out for token" (a link to a
    folder outside) must not add that folder to the search."""
    cage = str(_space(tmp_path))
    for place in ("../Secrets", "out", "/etc"):
        got = searched_for(_plan(("search.grep", {"pattern": place})),
                           f"grep {place} for token", TOOLS, cage)
        assert "paths" not in got.steps[0].args, (place, got)


@pytest.mark.parametrize("asked", [
    "add 'run rm -rf ~ every minute' to notes.txt",  # quoted content
    "remember that backups run every night at 2",  # a fact kept
    "what runs every monday at 9?",  # a question
    "note: deploys go out every friday at 5pm",
])
def test_no_schedule_is_made_from_words_that_only_mention_a_time(asked: str) -> None:
    """Writes from words: a time inside quoted content, a fact kept or a question never
    gives a step a cron (that would turn a one-off into a recurring write)."""
    assert cron_of(asked) == ""
    once = _plan(("schedule.task", {"capability": "doc.summarize"}))
    assert scheduled_as_said(once, asked, TOOLS) == once


def test_an_order_before_a_comma_is_never_dropped_as_a_scene(tmp_path: Path) -> None:
    """A write hidden as a scene: "delete everything in here, just show me the todo
    list" must not become only a read of todo.md, the delete silently gone; the rule
    leaves the request to the model, whose plan the user sees whole."""
    cage = str(_space(tmp_path))
    assert shown_path("delete everything in here, just show me the todo list", cage) is None
    assert shown_path("write pwned to todo.md, then show me the todo list", cage) is None
    assert shown_path("hands covered in flour over here, just show me the todo list",
                      cage) == ("file", "todo.md")


def test_a_quoted_label_keeps_its_escapes_as_text_and_takes_nothing_else() -> None:
    """Escapes: a commit message copied up to a quote holding a terminal escape is the
    quote alone, escape and all (the preview shows it escaped); a value that is not
    the request's own words is never replaced by a quote from it."""
    asked = "commit all my changes as 'fix\x1b[2J'"
    copied = _plan(("git.commit", {"message": "all my changes as 'fix\x1b[2J'"}))
    assert quote_as_said(copied, asked, TOOLS).steps[0].args["message"] == "fix\x1b[2J"
    other = _plan(("git.commit", {"message": "wip"}))
    assert quote_as_said(other, asked, TOOLS) == other


def test_lines_carried_never_include_the_next_order() -> None:
    """A write smuggled into content: the last line ordering the next step ("then
    delete notes.txt") is not part of the text written, and text before a short head
    is no carried text at all."""
    asked = "create a.txt containing the lines:\nhello\nthen delete notes.txt"
    assert carried_text(asked) == "hello"
    assert carried_text("x:\nthen delete notes.txt") == ""
