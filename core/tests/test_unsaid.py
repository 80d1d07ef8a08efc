"""A step's list of files holds only files someone stated: for a write, never a word of
the request that names nothing here, never a file hinted at only inside the quoted text;
for a read, never a file neither named nor hinted at (pure; no model; the real tools'
declarations)."""

from __future__ import annotations

from pathlib import Path

import pytest

from adjutant.operator._unsaid import (
    created_as_said,
    listed_as_said,
    numbers_as_said,
    refs_as_said,
)
from adjutant_hookspecs import Plan, ToolCall

from .test_stated import TOOLS


def commit(**args: object) -> Plan:
    return Plan(steps=(ToolCall(tool="git.commit", args={"message": "m", **args}),))


@pytest.mark.parametrize(("asked", "paths", "kept"), [
    # heldout38, after its run: "staged" committed as a path, notes.txt from the message
    ("comit whatever is staged as 'Fix empty inventory crash'", ["staged"], None),
    ("commit all tracked changes with the message 'Add sailing school roster notes'",
     ["notes.txt"], None),
    # named, or hinted at outside the quote and here: kept
    ("commit notes.txt with message 'update notes'", ["notes.txt"], ["notes.txt"]),
    ("commit the readme with the message 'Docs: tidy'", ["README.md"], ["README.md"]),
    ("commit build/out.txt as 'x'", ["build/out.txt"], ["build/out.txt"]),  # named, not here
    ("commit the readme and staged as 'x'", ["README.md", "staged"], ["README.md"]),
    # a file a step before it writes (tests/test_flows.py: NOTES.md, not here yet)
    ("create a feature branch and commit a notes file", ["NOTES.md"], ["NOTES.md"]),
])
def test_a_commit_lists_only_files_someone_stated(tmp_path: Path, asked: str,
                                                  paths: list[str], kept: list[str] | None
                                                  ) -> None:
    for name in ("notes.txt", "README.md"):
        (tmp_path / name).write_text("x\n")
    got = listed_as_said(commit(paths=paths), asked, TOOLS, str(tmp_path))
    assert got == (commit(paths=kept) if kept else commit())


def test_a_read_is_left_as_it_is(tmp_path: Path) -> None:
    """A search's folders are where to look: the read's own business (a folder not here
    is the preview's to say), not a file committed."""
    plan = Plan(steps=(ToolCall(tool="search.grep", args={"pattern": "x", "paths": ["build"]}),))
    assert listed_as_said(plan, "grep for x in the build", TOOLS, str(tmp_path)) == plan


def test_a_search_is_never_narrowed_to_files_no_one_named(tmp_path: Path) -> None:
    """From the CLI in a fresh workspace (stop 54), "search for the literal text
    average(counts):.1f and stop at one match per file" had been narrowed to notes.txt,
    todo.md and README.md thirty times over (the model's run-on): it searches
    everywhere. Places named or hinted at stay, each once."""
    def grep(paths: list[str] | None) -> Plan:
        return Plan(steps=(ToolCall(tool="search.grep", args={
            "pattern": "x", **({"paths": paths} if paths else {})}),))

    asked = "search for the literal text average(counts):.1f and stop at one match per file"
    made_up = grep(["notes.txt", "todo.md", *["README.md"] * 30])
    assert listed_as_said(made_up, asked, TOOLS, str(tmp_path)) == grep(None)
    assert listed_as_said(grep(["src", "tests", "src"]), "search src and tests for x", TOOLS,
                          str(tmp_path)) == grep(["src", "tests"])


@pytest.mark.parametrize(("asked", "path", "tool"), [
    # heldout37, after its run: an append to the file it says to create
    ("Create docs/stalls.md for the night market with exactly this one line: Stall 12",
     "docs/stalls.md", "fs.write"),
    ("make a new file called ideas.md with one line: try rust", "ideas.md", "fs.write"),
    # a file here is appended to; an order that is no "create" is the model's
    ("create notes.txt with: more", "notes.txt", "fs.append"),
    ("add a line to ideas.md: try rust", "ideas.md", "fs.append"),
])
def test_a_file_said_to_be_created_is_written_not_appended_to(
        tmp_path: Path, asked: str, path: str, tool: str) -> None:
    (tmp_path / "notes.txt").write_text("x\n")
    (tmp_path / "docs").mkdir()
    plan = Plan(steps=(ToolCall(tool="fs.append", args={"path": path, "content": "y\n"}),))
    got = created_as_said(plan, asked, TOOLS, str(tmp_path))
    assert [s.tool for s in got.steps] == [tool]
    assert got.steps[0].args == plan.steps[0].args


def test_a_commit_to_start_from_is_one_said_or_here(tmp_path: Path) -> None:
    """"Create a branch named orchard-labels but keep me on the branch I'm on now" had
    started it from "current" (heldout40, after its run); a ref said, or HEAD's, stays."""
    def branch(**args: object) -> Plan:
        return Plan(steps=(ToolCall(tool="git.branch", args={"name": "x", **args}),))

    asked = "Create a branch named x but keep me on the branch I'm on now"
    assert refs_as_said(branch(start="current"), asked, TOOLS, str(tmp_path)) == branch()
    for start in ("develop", "HEAD~2"):
        kept = branch(start=start)
        assert refs_as_said(kept, f"make a branch x from {start}", TOOLS,
                            str(tmp_path)) == kept


def test_a_number_said_only_inside_a_name_is_not_stated() -> None:
    """"show the log of release/1.0" had listed one commit; "the last 5 commits on
    release/1.0" lists five."""
    def log(**args: object) -> Plan:
        return Plan(steps=(ToolCall(tool="git.log", args={"ref": "release/1.0", **args}),))

    assert numbers_as_said(log(max_count=1), "show the log of release/1.0", TOOLS) == log()
    kept = log(max_count=5)
    assert numbers_as_said(kept, "the last five commits on release/1.0", TOOLS) == kept
    assert numbers_as_said(log(max_count=1), "the last 1 commit on release/1.0",
                           TOOLS) == log(max_count=1)


@pytest.mark.parametrize(("asked", "kept"), [
    # "only inside src" says no count (heldout46, after its run: one match a file)
    ("serach for 'average' but only inside src", False),
    ("search for 'average', the first match in each file is enough", True),
    ("grep average, 1 hit per file", True),
])
def test_a_count_of_one_no_one_said_is_dropped(asked: str, kept: bool) -> None:
    wrote = Plan(steps=(ToolCall(tool="search.grep", args={"pattern": "average",
                                                           "max_count": 1}),))
    got = numbers_as_said(wrote, asked, TOOLS)
    assert ("max_count" in got.steps[0].args) is kept


def test_a_file_to_commit_that_nothing_here_or_before_makes_is_dropped(tmp_path: Path) -> None:
    """"..., and if they pass commit all tracked changes as 'Tests pass'" had committed a
    made-up tests.py, and the commit failed (from the CLI, stop 55); a file a step before
    writes, one here and one named stay."""
    from adjutant.operator._unsaid import unmade_dropped

    (tmp_path / "notes.txt").write_text("x\n")
    made_up = Plan(steps=(ToolCall(tool="git.commit", args={
        "message": "Tests pass", "paths": ["tests.py"], "all": True}),))
    assert unmade_dropped(made_up, "run the tests, and if they pass commit all tracked "
                          "changes as 'Tests pass'", TOOLS, str(tmp_path)) == Plan(steps=(
        ToolCall(tool="git.commit", args={"message": "Tests pass", "all": True}),))
    written = Plan(steps=(ToolCall(tool="fs.write", args={"path": "NOTES.md", "content": "n\n"}),
                          ToolCall(tool="git.commit", args={"message": "m", "paths": [
                              "NOTES.md", "notes.txt", "build/out.txt"]})))
    assert unmade_dropped(written, "write a notes file and commit it with notes.txt and "
                          "build/out.txt", TOOLS, str(tmp_path)) == written
