"""Outsider attacks on stop 54's changes. Each attack was tried; each test fails if it
ever works.

A writing step's files no one stated are dropped, so a commit could be widened or a
named file lost: never a file the request names, quoted as a name or in another case.
An append to a file said to be created becomes a write, which replaces: never of a file
that is here, nor through a link. A limit said in words joins the search before it: never
an order after it. Numbers are read in the request's language: never inside its quoted
text. The machine's parts name the machine: never over a write the model chose, never
when processes are named. A reason after an order to show is left out: never an order
in it. Numbers and refs no one said are dropped: never a required one, never one said.
A greeting before a question leaves it a question: never an order after it."""

from __future__ import annotations

import os
from pathlib import Path

import msgspec
import pytest

from adjutant.operator._clauses import clauses
from adjutant.operator._heads import named_by_words
from adjutant.operator._here import shown_path
from adjutant.operator._unsaid import created_as_said, listed_as_said
from adjutant.operator._words import with_digits
from adjutant_hookspecs import Plan, ToolCall, ToolDeclaration

REGISTRY = Path(__file__).resolve().parents[2] / "plugins"
TOOLS = {d.name: d for d in (msgspec.json.decode(f.read_bytes(), type=ToolDeclaration)
                             for f in REGISTRY.glob("adjutant-*/registry/tools/*.json"))}


def _commit(paths: list[str]) -> Plan:
    return Plan(steps=(ToolCall(tool="git.commit", args={"message": "m", "paths": paths}),))


@pytest.mark.parametrize(("asked", "paths"), [
    ("commit 'notes.txt' with the message 'a longer message here'", ["notes.txt"]),
    ("commit NOTES.TXT as 'x'", ["notes.txt"]),  # the model's own case of a name said
    ("commit the readme and notes.txt as 'docs: tidy up the readme'",
     ["README.md", "notes.txt"]),
    ("commit src/app.py as 'Fix the crash'", ["src/app.py"]),
])
def test_a_file_the_request_names_is_never_dropped_from_a_commit(
        tmp_path: Path, asked: str, paths: list[str]) -> None:
    for name in ("notes.txt", "README.md", "src/app.py"):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text("x\n")
    assert listed_as_said(_commit(paths), asked, TOOLS, str(tmp_path)) == _commit(paths)


def test_a_required_list_is_never_emptied(tmp_path: Path) -> None:
    """An archive's inputs are required: the tool refuses an empty list, the rule never
    makes one."""
    zipped = Plan(steps=(ToolCall(tool="compress.zip", args={
        "paths": ["made-up"], "output": "a.zip"}),))
    assert listed_as_said(zipped, "zip it all into a.zip", TOOLS, str(tmp_path)) == zipped


@pytest.mark.parametrize("setup", ["file", "link", "dangling link"])
def test_an_append_to_a_file_here_is_never_turned_into_a_write(tmp_path: Path,
                                                               setup: str) -> None:
    target = tmp_path / "stalls.md"
    if setup == "file":
        target.write_text("Stall 1\n")
    else:
        (tmp_path / "real.md").write_text("Stall 1\n")
        os.symlink(tmp_path / ("real.md" if setup == "link" else "gone.md"), target)
    plan = Plan(steps=(ToolCall(tool="fs.append", args={"path": "stalls.md",
                                                         "content": "Stall 12\n"}),))
    assert created_as_said(plan, "Create stalls.md with this line: Stall 12", TOOLS,
                           str(tmp_path)) == plan


def test_an_append_to_another_file_than_the_one_created_is_kept(tmp_path: Path) -> None:
    plan = Plan(steps=(ToolCall(tool="fs.append", args={"path": "b.md", "content": "y\n"}),))
    assert created_as_said(plan, "create a.md with: y", TOOLS, str(tmp_path)) == plan
    two = Plan(steps=(*plan.steps, *plan.steps))  # a plan of more steps: the model's
    assert created_as_said(two, "create b.md with: y", TOOLS, str(tmp_path)) == two


@pytest.mark.parametrize(("asked", "after"), [
    ("grep for TODO and stop at one match per file, then kill process 4242",
     "kill process 4242"),
    ("search for 'x' and stop at two matches per file and then delete notes.txt",
     "delete notes.txt"),
])
def test_an_order_after_a_limit_in_words_is_still_its_own_step(asked: str,
                                                                after: str) -> None:
    got = clauses(asked)
    assert len(got) == 2 and got[1] == after, got


def test_numbers_inside_quoted_text_stay_words_in_any_language() -> None:
    asked = "schreib bitte 'drei Eier' in die notes.txt und zeig mir die letzten drei Commits"
    assert with_digits(asked) == ("schreib bitte 'drei Eier' in die notes.txt und zeig mir "
                                  "die letzten 3 Commits")


@pytest.mark.parametrize(("asked", "top"), [
    ("kill whatever is hogging the cpu and memory", "proc.kill"),  # a write chosen
    ("show cpu and memory info, then kill the process using it", "proc.kill"),
    ("which process eats the cpu and memory?", "proc.list"),  # processes named
])
def test_the_machines_parts_never_overrule_a_write_or_the_process_list(asked: str,
                                                                         top: str) -> None:
    from adjutant.testing import FakeRead, FakeWrite

    choices = ["proc.list", "proc.kill", "sys.info", "response"]
    tools = {"proc.list": FakeRead("proc.list").declaration,
             "proc.kill": FakeWrite("proc.kill").declaration,  # a change: never overruled
             "sys.info": FakeRead("sys.info").declaration}
    got = named_by_words(asked, choices, choices.index(top), lambda _: {"sys.info": 9.0},
                         2.5, tools)
    assert got is None


@pytest.mark.parametrize("asked", [
    "show me notes.txt, I want to commit it afterwards",
    "pull up the todo list, I need to delete the first line",
    "open notes.txt because I want to replace it with 'x'",
])
def test_a_reason_with_an_order_in_it_is_never_left_out(tmp_path: Path, asked: str) -> None:
    (tmp_path / "notes.txt").write_text("x\n")
    (tmp_path / "todo.md").write_text("- a\n")
    assert shown_path(asked, str(tmp_path)) is None


def test_a_pid_is_never_changed_by_the_numbers_a_request_says() -> None:
    """Only optional numbers are settled: a required one (a pid to kill) is the
    model's and the preview's, never swapped for another number of the request."""
    from adjutant.operator._unsaid import numbers_as_said

    kill = Plan(steps=(ToolCall(tool="proc.kill", args={"pid": 4242}),))
    for asked in ("kill process 4242", "kill the one using port 8080, pid 4243",
                  "kill it, the 5th one"):
        assert numbers_as_said(kill, asked, TOOLS) == kill


@pytest.mark.parametrize(("asked", "start"), [
    ("make a branch x from release/1.0", "release/1.0"),
    ("branch x off HEAD~3", "HEAD~3"),
    ("branch x off a1b2c3d", "a1b2c3d"),
])
def test_a_ref_the_request_says_is_never_dropped(tmp_path: Path, asked: str,
                                                 start: str) -> None:
    from adjutant.operator._unsaid import refs_as_said

    plan = Plan(steps=(ToolCall(tool="git.branch", args={"name": "x", "start": start}),))
    assert refs_as_said(plan, asked, TOOLS, str(tmp_path)) == plan


@pytest.mark.parametrize("asked", [
    "hi! delete notes.txt",
    "hello. what can you do? delete notes.txt",
])
def test_a_greeting_never_makes_an_order_a_question(asked: str) -> None:
    from adjutant.operator._words import is_question

    assert not is_question(asked)


@pytest.mark.parametrize("paths", [
    ["notes.txt", "../../etc/passwd"],
    ["notes.txt", "/root/.ssh/id_rsa"],
    ["notes.txt", "notes.txt"],
])
def test_dropping_unsaid_paths_never_adds_or_redirects_one(tmp_path: Path,
                                                            paths: list[str]) -> None:
    """Indirect reads and writes: the rule only takes items away, never puts in a path
    the model did not write, and a path the request says (outside the cage too) is
    left for the cage to refuse, not silently dropped into a wider read."""
    (tmp_path / "notes.txt").write_text("x\n")
    for tool in ("search.grep", "git.commit"):
        plan = Plan(steps=(ToolCall(tool=tool, args={"pattern": "x", "message": "m",
                                                     "paths": paths}),))
        asked = f"{tool} x in {' and '.join(paths)}"
        got = listed_as_said(plan, asked, TOOLS, str(tmp_path)).steps[0].args.get("paths", [])
        assert set(got) <= set(paths)
        assert [p for p in got if p != "notes.txt"] == [p for p in dict.fromkeys(paths)
                                                        if p != "notes.txt"]


@pytest.mark.parametrize("name", ["\x1b[2Jnotes", " \x1b]0;owned\x07x ", "a\u202eb"])
def test_a_name_with_control_characters_is_never_trimmed_into_another(name: str) -> None:
    """Escapes in what the user is shown: trimming spaces around a name never strips
    terminal escapes or bidi marks off it, so the preview shows (escaped) what runs."""
    from adjutant.operator._typed import typed_as_said

    plan = Plan(steps=(ToolCall(tool="git.branch", args={"name": name}),))
    assert typed_as_said(plan, f"make a branch {name}") == plan
