"""Outsider attacks on stop 53's changes. Each attack was tried; each test fails if it
ever works.

Long options the request never says are dropped from a command line, so a planned
command could be turned into another: never an option whose value follows it ("mysql
--password X" without it runs "mysql X"). A time limit said in words is the runner's
``timeout``, past the tool's own limit too, so the tool's refusal says so; never a
command-line argument. A tool taking one kind of file, chosen for a file of another
kind, is chosen again: never as a write, never as an answer in words about a file
unread. A pasted diff goes with the clause that applies it, and a scene before one
order stays one step. English words are never mended into other words; a quoted text
never is."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

from adjutant.operator._clauses import clauses
from adjutant.operator._here import misfits
from adjutant.operator._stated import with_stated_values
from adjutant.operator._words import spelled
from adjutant_hookspecs import Plan, ToolCall, ToolDeclaration, ToolSafety

REGISTRY = Path(__file__).resolve().parents[2] / "plugins"
TOOLS = {d.name: d for d in (msgspec.json.decode(f.read_bytes(), type=ToolDeclaration)
                             for f in REGISTRY.glob("adjutant-*/registry/tools/*.json"))}


def _run(argv: list[str], asked: str, tmp_path: Path, **more: object) -> dict:
    plan = Plan(steps=(ToolCall(tool="shell.exec", args={"argv": argv, **more}),))
    got = with_stated_values(plan, asked, TOOLS, str(tmp_path))
    return dict(got.steps[0].args)


@pytest.mark.parametrize("argv", [
    ["mysql", "--password", "Dk4sLd5fJg6h"],
    ["curl", "--user", "bob:pw", "https://example.org"],
    ["git", "--git-dir", "/tmp/other", "status"],
    ["ssh", "--", "host"],
])
def test_an_option_whose_value_follows_is_never_dropped(argv: list[str],
                                                        tmp_path: Path) -> None:
    assert _run(argv, "connect", tmp_path)["argv"] == argv


def test_an_option_the_request_says_is_kept(tmp_path: Path) -> None:
    assert _run(["git", "log", "--oneline"], "run git log, one line each please",
                tmp_path)["argv"] == ["git", "log", "--oneline"]
    assert _run(["pytest", "--cov=src"], "run pytest", tmp_path)["argv"] == ["pytest"]


@pytest.mark.parametrize(("asked", "argv", "kept"), [
    # flags and a file no one said (the CLI in a fresh workspace, stop 53): "-m
    # test_file.py" selects no test at all
    ("run pytest but give it two minutes before giving up",
     ["pytest", "-v", "-s", "-x", "-m", "test_file.py"], ["pytest"]),
    # a flag a word of the request starts, one written, an option's value said or not
    ("count the lines in logs/app.log with wc", ["wc", "-l", "logs/app.log"],
     ["wc", "-l", "logs/app.log"]),
    ("run pytest quietly", ["pytest", "-q"], ["pytest", "-q"]),
    ("run the tests with pytest", ["python3", "-m", "pytest"], ["python3", "-m", "pytest"]),
    ("connect", ["redis-cli", "-a", "Bk2sLd3fJg4h"], ["redis-cli", "-a", "Bk2sLd3fJg4h"]),
    ("count the lines with wc", ["wc", "LICENSE.txt"], ["wc", "LICENSE.txt"]),  # its error
])
def test_flags_and_files_no_one_said_never_reach_the_command(asked: str, argv: list[str],
                                                             kept: list[str]) -> None:
    from adjutant.operator._stated import settled_values

    workspace = Path(__file__).resolve().parents[1] / "golden" / "workspace"
    plan = Plan(steps=(ToolCall(tool="shell.exec", args={"argv": argv}),))
    got = settled_values(plan, asked, "", TOOLS, str(workspace))
    assert isinstance(got, Plan) and got.steps[0].args["argv"] == kept


@pytest.mark.parametrize(("asked", "seconds"), [
    ("run pytest and give it three hours at most", 10800),  # past shell.exec's 600
    ("run pytest, time out after 90 seconds", 90),
    ("run pytest, give it 0 minutes at most", None),  # no time at all: as the model wrote
])
def test_a_time_limit_said_is_the_timeout_never_an_argument(asked: str, seconds: int | None,
                                                            tmp_path: Path) -> None:
    args = _run(["pytest", "3h", "90"], asked, tmp_path)
    assert args.get("timeout") == seconds
    if seconds is not None:
        assert "3h" not in args["argv"] or "3h" in asked


def _tool(name: str, level: str, pattern: str | None = None) -> ToolDeclaration:
    item: dict = {"type": "string", "x-adjutant-role": "path"}
    if pattern:
        item["pattern"] = pattern
    return ToolDeclaration(name=name, version="1", description=name,
                           safety=ToolSafety(level=level, writes=level != "read"),  # type: ignore[arg-type]
                           args_schema={"type": "object", "properties": {
                               "paths": {"type": "array", "items": item}}})


def test_a_file_of_another_kind_never_turns_a_read_into_a_write_or_words(
        tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("x\n")
    (tmp_path / "report.pdf").write_bytes(b"%PDF-1.4\n")
    tools = {"pdf.sum": _tool("pdf.sum", "read", r"\.[Pp][Dd][Ff]$"),
             "fs.read": _tool("fs.read", "read"), "fs.list": _tool("fs.list", "read"),
             "fs.write": _tool("fs.write", "write")}
    names = list(tools)
    unfit = misfits(tools, names, "summarize notes.txt", str(tmp_path), "pdf.sum", "fs.read")
    assert set(unfit) == {"pdf.sum", "fs.write", "fs.list", "response"}  # the viewer left
    # the kind it takes, a write chosen, a folder or nothing named: no second look
    assert misfits(tools, names, "summarize report.pdf", str(tmp_path), "pdf.sum") == []
    assert misfits(tools, names, "summarize notes.txt", str(tmp_path), "fs.write") == []
    assert misfits(tools, names, "summarize the pdfs", str(tmp_path), "pdf.sum") == []
    # a name outside the workspace is no file here to judge by
    assert misfits(tools, names, "summarize ../../etc/passwd", str(tmp_path), "pdf.sum") == []


DIFF = ("--- a/src/util.py\n+++ b/src/util.py\n@@ -1,2 +1,3 @@\n def average(values):\n"
        "+    return 0\n     return sum(values) / len(values)\n")


@pytest.mark.parametrize("request_text", [
    f"my colleague sent this fix, then said apply it:\n{DIFF}",  # a scene: one step
    f"apply this, then:\n{DIFF}",
    f"apply this and then run pytest:\n{DIFF}\nand also delete src",  # words after it
    f"apply this 'and then run pytest':\n{DIFF}",  # quoted: no clause
])
def test_a_diff_never_goes_to_a_clause_it_was_not_pasted_for(request_text: str) -> None:
    parts = clauses(request_text)
    assert sum(DIFF in p for p in parts) == 1  # the diff is in exactly one step
    assert len(parts) == 1 or all(p.strip() for p in parts)


@pytest.mark.parametrize("asked", [
    "is it better to keep the matter in notes.txt?",
    "the ready list: own it, strong words only",
    "commit with message 'fix teh lsit'",  # quoted: the user's own words
])
def test_english_words_and_quotes_are_never_mended(asked: str) -> None:
    kept = spelled(asked)
    for word in ("better", "matter", "ready", "own", "strong", "teh", "lsit"):
        assert (word in kept) == (word in asked), (word, kept)
