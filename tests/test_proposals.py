"""Propose-only shows what would happen: each proposed step with its
dry-run preview and the pipeline's verdict one mode up, in the terminal and in
``--json``; a step whose preview fails says so plainly. Nothing runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .attack.helpers import Attack, plan


@pytest.fixture
def user(tmp_path: Path) -> Attack:
    pytest.importorskip("adjutant_files")
    pytest.importorskip("adjutant_guard")
    user = Attack(tmp_path)
    (user.work / "notes.txt").write_text("buy milk\n")
    user.script(plan(("fs.list", {}),
                     ("fs.append", {"path": "notes.txt", "content": "call the plumber\n"}),
                     ("fs.read", {"path": "missing.txt"}),
                     ("fs.read", {"path": str(user.id_rsa)})))
    return user


def test_a_proposed_plan_shows_each_preview_and_what_would_happen(user: Attack) -> None:
    done = user.cli("run", "add 'call the plumber' to my notes")
    assert done.returncode == 0, done.stderr
    shown = done.stderr
    assert "list ./ (depth 1)" in shown
    assert "+call the plumber" in shown  # the append's exact diff, though nothing runs
    assert "would run without asking" in shown and "would ask you first" in shown
    assert "would be refused: fs.read: its preview fails" in shown
    assert "missing.txt does not exist" in shown
    assert "would be refused: guard:" in shown and "SSH" in shown
    assert (user.work / "notes.txt").read_text() == "buy milk\n"  # proposed, never run


def test_json_carries_the_same_proposal(user: Attack) -> None:
    done = user.cli("run", "--json", "add 'call the plumber' to my notes")
    out = json.loads(done.stdout)
    assert out["status"] == "proposed" and out["results"] == []
    steps = out["proposal"]
    assert [s["tool"] for s in steps] == ["fs.list", "fs.append", "fs.read", "fs.read"]
    assert [s["would"]["decision"] for s in steps] == ["allow", "ask", "deny", "deny"]
    assert steps[0]["preview"] == "list ./ (depth 1)"
    assert "+call the plumber" in steps[1]["preview"]
    assert "missing.txt does not exist" in steps[2]["would"]["reason"]
    assert steps[3]["preview"] is None  # a refused step is never even dry-run
    assert (user.work / "notes.txt").read_text() == "buy milk\n"
    decisions = [r for r in user.log() if r["kind"] == "decision"]
    assert [r["decision"] for r in decisions] == ["deny"] * 4  # the mode: nothing may run
    assert [r["would"]["decision"] for r in decisions] == ["allow", "ask", "deny", "deny"]
