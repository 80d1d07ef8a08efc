"""A task waiting for approval survives real SIGKILLs: before the question, while it
waits, and right after the answer; the approval inside a nested flow holds its parent
until the nested step has run."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
from taskkit import kernel_at

KIT = Path(__file__).parent / "crashkit.py"


def _start(home: Path, *args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    return subprocess.Popen([sys.executable, str(KIT), str(home), *args], text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)


def _until(proc: subprocess.Popen[str], wanted: Any) -> dict[str, Any]:
    """Read the process's event lines until one satisfies ``wanted``."""
    assert proc.stdout is not None
    while True:
        line = proc.stdout.readline()
        if not line:
            raise AssertionError(f"the process ended first: {proc.communicate()[1]}")
        event = json.loads(line)
        if wanted(event):
            return event  # type: ignore[no-any-return]


def _kill(proc: subprocess.Popen[str]) -> None:
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=10)
    assert proc.returncode == -signal.SIGKILL


async def _stored(home: Path) -> dict[str, Any]:
    async with kernel_at(home) as (h, plugin):
        tasks = {t.id: t async for t in plugin.queue.all()}
        from adjutant.operator import ActionLog

        log = ActionLog(h.kernel.stores)
        return {"tasks": tasks, "records": await log.records()}


def test_an_approval_in_a_nested_flow_survives_kills_and_holds_its_parent(
        tmp_path: Path) -> None:
    home, work = tmp_path / "home", tmp_path / "work"
    work.mkdir()
    out = work / "out.txt"
    # 1. killed before the question: the flow started (its delay step is pending)
    first = _start(home, "flows", str(work))
    try:
        outer = str(_until(first, lambda e: "id" in e)["id"])
        _until(first, lambda e: e.get("event") == "task.started")
    finally:
        _kill(first)
    assert not out.exists()
    # 2. a new process recovers it; the nested flow asks; killed while it waits
    second = _start(home, "serve")
    try:
        held = _until(second, lambda e: e.get("event") == "task.waiting"
                      and e.get("taskId") == outer)
    finally:
        _kill(second)
    child = str(held["waitingOn"])
    state = anyio.run(_stored, home)
    parent_task, child_task = state["tasks"][outer], state["tasks"][child]
    assert parent_task.status == "waiting_for_human" and parent_task.waiting_on == child
    assert child_task.status == "waiting_for_human" and child_task.parent_task == outer
    question = child_task.question
    assert question.tool == "fs.write" and question.args == {"path": "out.txt",
                                                            "content": "hello"}
    assert "hello" in question.preview and not out.exists()
    asked = [r for r in state["records"] if r["kind"] == "tasks_asked"]
    assert [r["digest"] for r in asked] == [question.digest]
    # the parent cannot be answered in the child's place
    refused = subprocess.run([sys.executable, str(KIT), str(home), "answer", outer, "grant"],
                             capture_output=True, text=True, timeout=60, check=False)
    assert refused.returncode != 0 and "answer that one" in refused.stderr
    # 3. answered, and killed right after the answer
    third = _start(home, "answer", child, "grant", "then-serve")
    try:
        _until(third, lambda e: e.get("event") == "answered")
    finally:
        _kill(third)
    state = anyio.run(_stored, home)
    answers = [r for r in state["records"] if r["kind"] == "tasks_answer"]
    assert [(r["action"], r["digest"], r.get("refused")) for r in answers] == [
        ("grant", question.digest, None)]
    assert state["tasks"][outer].status == "waiting_for_human"  # held until the child ends
    # 4. the next runner carries on: the write, then the parent's next step
    drained = subprocess.run([sys.executable, str(KIT), str(home), "drain"],
                             capture_output=True, text=True, timeout=120, check=False)
    assert drained.returncode == 0, drained.stderr
    assert out.read_text() == "hello"
    state = anyio.run(_stored, home)
    parent_task, child_task = state["tasks"][outer], state["tasks"][child]
    assert child_task.status == "done", child_task.error
    assert parent_task.status == "done", parent_task.error
    assert parent_task.outputs["results"]["after"]["stdout"].startswith("hello")
    grants = [r for r in state["records"] if r["kind"] == "approval"
              and r.get("action") == "grant"]
    assert grants and grants[-1]["digest"]  # the pipeline's own record of the grant
    calls = [r for r in state["records"] if r["kind"] == "tool_call"
             and r["tool"] == "fs.write"]
    assert len(calls) == 1 and calls[0]["approved"] is True
