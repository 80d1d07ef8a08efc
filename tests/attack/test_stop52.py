"""Outsider attacks on stop 52's changes: "that file" after a search is the one file the
search finds (`found_by`), read at planning time. Each attack was tried; each test fails
if it ever works.

The planning-time look reads only regular files inside the workspace: never a file
outside it by a link, a ``..`` or an absolute path, never a hidden one, never one over
256 KiB, never a binary; a pattern that is not plain words is never run (no regex, so
none can take long); and two files holding the words name neither. A request of one ask
is planned with room for one step (`one_ask`).

Advice and opinions (`_in_words._COUNSEL`): a question asking whether one should, needs
to, or whether it is ok, or an opinion, is answered in words even of a file here,
whatever the model scores; the same words before an order, after it or quoted make no
such question, and the order keeps its write."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from adjutant.operator._clauses import one_ask, refers_back
from adjutant.operator._found import found_by
from adjutant_hookspecs import Plan, ToolCall


def _search(**args: object) -> Plan:
    return Plan(steps=(ToolCall(tool="search.grep", args=dict(args)),))


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "src" / "app.py").write_text("# TODO: handle it\nfrom util import average\n")
    (ws / "src" / "util.py").write_text("def average(values):\n    return 0\n")
    (tmp_path / "outside.txt").write_text("SECRET-WORD\n")
    return ws


def test_that_file_is_the_one_file_the_search_finds(workspace: Path) -> None:
    assert refers_back("open that file", _search(pattern="TODO"), str(workspace)) == \
        "open src/app.py"
    # two files hold "average": the one defining it, only when a definition was asked for
    assert refers_back("open that file", _search(pattern="average"), str(workspace),
                       "where is average defined?") == "open src/util.py"
    assert refers_back("open that file", _search(pattern="average"), str(workspace),
                       "find average") == "open that file"
    assert refers_back("open that file", _search(pattern="nowhere"), str(workspace)) == \
        "open that file"


def test_a_link_out_of_the_workspace_is_never_read(workspace: Path) -> None:
    os.symlink(workspace.parent / "outside.txt", workspace / "link.txt")
    os.symlink(workspace.parent, workspace / "up")
    for folder in (None, ".", "up", "../", "..", str(workspace.parent), "link.txt"):
        args = {"pattern": "SECRET-WORD"} | ({"path": folder} if folder else {})
        assert found_by(args, str(workspace)) is None, folder


def test_hidden_large_and_binary_files_are_never_read(workspace: Path) -> None:
    (workspace / ".env").write_text("TOKEN-WORD=1\n")
    (workspace / "big.txt").write_text("x" * (300 * 1024) + "BIG-WORD")
    (workspace / "blob.bin").write_bytes(b"\0\1BIN-WORD")
    for word in ("TOKEN-WORD", "BIG-WORD", "BIN-WORD"):
        assert found_by({"pattern": word}, str(workspace)) is None, word


@pytest.mark.parametrize("pattern", ["(a+)+$", "def \\w+", ".*", "a|b", "x{1000}", ""])
def test_a_pattern_of_more_than_words_is_never_run(workspace: Path, pattern: str) -> None:
    (workspace / "evil.txt").write_text("a" * 50_000 + "!")
    assert found_by({"pattern": pattern}, str(workspace)) is None  # "(a+)+$" run would hang


def test_a_question_typed_in_haste_is_never_a_change() -> None:
    """"wich branch am i on right now" had made a branch (heldout32, after its run): a
    question opened by a question word as typed only reads, whatever the scores."""
    import random

    from adjutant.operator.planner import Planner

    planner = Planner(TOOLS, bank_weight=0)
    choices = [*TOOLS, "response"]
    rng = random.Random(32)
    for _ in range(1000):
        asked = rng.choice(["wich branch am i on right now", "waht changed in notes.txt",
                            "wat is staged", "whcih files did i touch"])
        scores = [rng.uniform(-5, 10) for _ in choices]
        got = choices[planner.decide(asked, choices, scores, existing=["notes.txt"])]
        assert got == "response" or TOOLS[got].safety.level == "read", (asked, got)


def test_a_request_of_one_ask_never_joins_a_second() -> None:
    for joined in ("show the log and the diff", "show the log, the diff", "log; diff",
                   "log\ndiff", "log. Then diff", "show the log thne the diff"):
        assert not one_ask(joined), joined
    assert one_ask("show the history of release/1.0")


packs = [pytest.importorskip(m) for m in ("adjutant_files", "adjutant_git", "adjutant_system")]
TOOLS = {cls.declaration.name: cls.declaration for pack in packs for cls in pack.TOOLS}


@pytest.mark.parametrize("order", [
    "is it ok to delete notes.old? delete it",
    "what do you think? commit notes.txt",
    "your opinion doesn't matter, commit notes.txt",
    "good idea: append 'x' to notes.txt",
    "append 'good idea, what do you think?' to notes.txt",
    "Should notes.txt be committed? Commit it if so.",
])
def test_an_order_beside_words_of_advice_keeps_its_write(order: str) -> None:
    """Advice words before an order, or quoted, make no question of advice
    (`wants_words_anyway`): the order keeps the model's write."""
    from adjutant.operator._in_words import wants_words_anyway
    from adjutant.operator.planner import Planner

    assert not wants_words_anyway(order)
    planner = Planner(TOOLS, bank_weight=0)
    choices = ["fs.append", "git.commit", "fs.read", "response"]
    write = "git.commit" if "commit" in order.lower() else "fs.append"
    scores = [5.0 if c == write else 0.0 for c in choices]
    assert choices[planner.decide(order, choices, scores, existing=["notes.txt"])] == write


def test_a_question_of_advice_is_never_a_change() -> None:
    """2,000 random score vectors, the writes often far ahead, for questions of advice
    naming files that exist: always the answer in words."""
    import random

    from adjutant.operator.planner import Planner

    planner = Planner(TOOLS, bank_weight=0)
    choices = [*TOOLS, "response"]
    rng = random.Random(52)
    asks = ["Should notes.txt be committed or is that a bad idea?",
            "do I need to stage notes.txt myself before a commit?",
            "Honest opinion: is it ok to keep a password in config/settings.json?",
            "is it safe to delete notes.old?", "what do you think of src/app.py?",
            # heldout32, after its run: a commit, a run of the app
            "what would `git commit -a` include that a plain commit wouldn't?",
            "what does `python3 src/app.py` do, in a sentence? no need to run it",
            "shoud I commit notes.txt before I make a new branch, or does it not matter?",
            "what's the difference between git diff and git diff --staged?"]
    for _ in range(2000):
        asked = rng.choice(asks)
        scores = [rng.uniform(-5, 10) for _ in choices]
        got = choices[planner.decide(asked, choices, scores,
                                     existing=["notes.txt", "notes.old", "src/app.py"])]
        assert got == "response", (asked, got)
