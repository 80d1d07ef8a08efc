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
import msgspec
import pytest
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


def test_any_capability_waits_for_a_human_through_the_shared_context_across_kills(
        tmp_path: Path) -> None:
    """``test.publish`` is no capability of this plugin: it uses only
    `adjutant_hookspecs.TaskContext` (``confirm``, then ``call_tool``). Each question
    survives a SIGKILL while it waits; each answer is bound to what was asked; the
    write happens once, approved; the work done before a question is not done again."""
    home, work = tmp_path / "home", tmp_path / "work"
    work.mkdir()
    out = work / "team.txt"
    first = _start(home, "publish", str(work))
    try:
        queued = _until(first, lambda e: "id" in e)
        task_id = str(queued["id"])
        _until(first, lambda e: e.get("event") == "task.waiting" and e.get("taskId") == task_id)
    finally:
        _kill(first)
    state = anyio.run(_stored, home)
    asked = state["tasks"][task_id]
    assert asked.status == "waiting_for_human" and asked.question.level == "guardrail"
    assert asked.question.preview == "Publish team.txt to the team?"
    third = _start(home, "answer", task_id, "grant", "then-serve")
    try:  # the yes; then the write asks, and the process is killed while it waits
        _until(third, lambda e: e.get("event") == "task.waiting" and e.get("taskId") == task_id)
    finally:
        _kill(third)
    state = anyio.run(_stored, home)
    asked = state["tasks"][task_id]
    assert asked.status == "waiting_for_human" and asked.question.tool == "fs.write"
    assert asked.question.args == {"path": "team.txt", "content": "published\n"}
    assert "+published" in asked.question.preview and not out.exists()
    done = subprocess.run([sys.executable, str(KIT), str(home), "answer", task_id, "grant"],
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    drained = subprocess.run([sys.executable, str(KIT), str(home), "drain"],
                             capture_output=True, text=True, timeout=120, check=False)
    assert drained.returncode == 0, drained.stderr
    assert out.read_text() == "published\n"
    state = anyio.run(_stored, home)
    task = state["tasks"][task_id]
    assert task.status == "done" and task.outputs == {"published": "team.txt"}, task.error
    assert (Path(queued["dir"]) / "prepared").read_text() == "1\n"  # prepared once
    answers = [(r["step"], r["action"]) for r in state["records"]
               if r["kind"] == "tasks_answer"]
    assert answers == [("go", "grant"), ("write", "grant")]
    calls = [r for r in state["records"] if r["kind"] == "tool_call"
             and r["tool"] == "fs.write"]
    assert len(calls) == 1 and calls[0]["approved"] is True


@pytest.mark.anyio
async def test_a_capability_that_needs_a_human_is_never_handed_to_a_worker(
        tmp_path: Path) -> None:
    """With a broker set, ``needs_human`` keeps a capability on this machine; a worker
    that receives one anyway refuses it, and a handed-off task that asks is failed."""
    from adjutant_tasks._celery import Message, Worker
    from adjutant_tasks._queue import input_hash

    broker = f"filesystem://{tmp_path / 'broker'}"
    async with kernel_at(tmp_path / "home", broker=broker) as (h, plugin):
        task, _ = await plugin.submit("test.publish", {"path": "x.txt", "cwd": str(tmp_path)})
        assert task.handoff is None  # runs where it was queued
        counted, _ = await plugin.submit("test.count", {})
        assert counted.handoff is not None
        from adjutant_tasks import tasks_settings

        worker = Worker(h.kernel, tasks_settings(h.kernel), "w-test")
        inputs = {"path": "x.txt", "cwd": str(tmp_path)}
        outcome = await worker.handle(msgspec.to_builtins(Message(
            v=1, task_id="0" * 20, capability="test.publish", inputs=inputs,
            input_hash=input_hash(inputs), attempt=1, timeout_s=60.0,
            created_at=task.created_at)))
        assert outcome == "refused"
