"""A task waiting for approval survives real SIGKILLs: before the question, while it
waits, and right after the answer; the approval inside a nested flow holds its parent
until the nested step has run; so does one inside any plugin's nested task
(``TaskContext.run_child``), approved or denied."""

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


def _kit(home: Path, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """The crash kit's command, run to its end (``answer``, ``drain``)."""
    return subprocess.run([sys.executable, str(KIT), str(home), *args], capture_output=True,
                          text=True, timeout=timeout, check=False)


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
    refused = _kit(home, "answer", outer, "grant")
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
    drained = _kit(home, "drain", timeout=120)
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
    done = _kit(home, "answer", task_id, "grant")
    assert done.returncode == 0, done.stderr
    drained = _kit(home, "drain", timeout=120)
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


def _cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ADJUTANT_")}
    env.update(ADJUTANT_HOME=str(home), NO_COLOR="1")
    return subprocess.run([sys.executable, "-m", "adjutant.cli", *args], text=True,
                          capture_output=True, env=env, timeout=120, check=False)


def test_a_nested_task_through_the_shared_context_holds_its_parent_across_kills(
        tmp_path: Path) -> None:
    """``test.nest`` (no capability of this plugin) runs ``test.publish`` as its child
    through `adjutant_hookspecs.TaskContext.run_child`. The child's first question
    puts the parent in ``waiting_for_human`` too; SIGKILL while it waits: both still
    wait; answered, the child asks its write; SIGKILL again; answered after the
    restart, the child writes once and the parent goes on with the child's outputs.
    The parent is never released early and cannot be answered in the child's place;
    ``tasks show`` shows the relation both ways."""
    home, work = tmp_path / "home", tmp_path / "work"
    work.mkdir()
    out = work / "team.txt"
    first = _start(home, "nest", str(work))
    try:
        queued = _until(first, lambda e: "id" in e)
        parent = str(queued["id"])
        held = _until(first, lambda e: e.get("event") == "task.waiting"
                      and e.get("taskId") == parent)
    finally:
        _kill(first)
    child = str(held["waitingOn"])
    state = anyio.run(_stored, home)
    p, c = state["tasks"][parent], state["tasks"][child]
    assert p.status == "waiting_for_human" and p.waiting_on == child and p.question is None
    assert c.status == "waiting_for_human" and c.parent_task == parent
    assert c.capability == "test.publish" and c.question.preview == \
        "Publish team.txt to the team?"
    # the relation, as `adjutant tasks show` (a real process) shows it
    shown = _cli(home, "tasks", "show", parent, "--json")
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["children"] == [
        {"id": child, "capability": "test.publish", "status": "waiting_for_human"}]
    shown = _cli(home, "tasks", "show", child)
    assert shown.returncode == 0, shown.stderr
    assert f"nested in:       task {parent}" in shown.stdout
    refused = _kit(home, "answer", parent, "grant")
    assert refused.returncode != 0 and "answer that one" in refused.stderr
    # the yes; the child goes on to its write, which asks: killed while it waits
    second = _start(home, "answer", child, "grant", "then-serve")
    try:
        _until(second, lambda e: e.get("event") == "task.waiting" and e.get("taskId") == child)
    finally:
        _kill(second)
    state = anyio.run(_stored, home)
    p, c = state["tasks"][parent], state["tasks"][child]
    assert c.status == "waiting_for_human" and c.question.tool == "fs.write"
    assert p.status == "waiting_for_human" and p.waiting_on == child  # still held
    assert not out.exists() and not (Path(queued["dir"]) / "after").exists()
    # answered after the restart: the child writes, then the parent goes on
    done = _kit(home, "answer", child, "grant")
    assert done.returncode == 0, done.stderr
    drained = _kit(home, "drain", timeout=120)
    assert drained.returncode == 0, drained.stderr
    assert out.read_text() == "published\n"
    state = anyio.run(_stored, home)
    p, c = state["tasks"][parent], state["tasks"][child]
    assert c.status == "done", c.error
    assert p.status == "done" and p.outputs == {
        "child_outputs": {"published": "team.txt"}}, p.error
    assert json.loads((Path(queued["dir"]) / "after").read_text()) == {"published": "team.txt"}
    assert (Path(queued["dir"]) / "prepared").read_text() == "1\n"  # the parent's work, once
    assert (Path(c.artifacts) / "prepared").read_text() == "1\n"
    answers = [(r["task_id"], r["step"], r["action"]) for r in state["records"]
               if r["kind"] == "tasks_answer" and not r.get("refused")]
    assert answers == [(child, "go", "grant"), (child, "write", "grant")]
    asked = [r["digest"] for r in state["records"] if r["kind"] == "tasks_asked"]
    assert asked[-1] == c.question.digest  # the write approved is the one previewed
    calls = [r for r in state["records"] if r["kind"] == "tool_call"
             and r["tool"] == "fs.write"]
    assert len(calls) == 1 and calls[0]["approved"] is True


@pytest.mark.anyio
async def test_a_denied_nested_task_is_its_parent_s_to_decide_and_a_cancel_takes_both(
        tmp_path: Path) -> None:
    """A deny inside the child: the child fails with the reason, and the parent's code
    gets `ChildTaskFailed` (here it returns the refusal). Cancelling a parent while
    its child waits cancels the child; nothing is written."""
    import adjutant_files
    import adjutant_guard
    import adjutant_write_gate
    from adjutant_tasks import Runner, tasks_settings
    from adjutant_tasks._control import change_task
    from adjutant_tasks._human import answer

    work = tmp_path / "work"
    work.mkdir()
    async with kernel_at(tmp_path / "home", adjutant_files, adjutant_guard,
                         adjutant_write_gate, mode="execute-with-confirmation") as (h, plugin):
        plugin.notifier.program = None

        async def drain() -> None:
            await Runner(h.kernel, plugin.queue, tasks_settings(h.kernel)).serve(
                until_idle=True)

        inputs = {"path": "team.txt", "cwd": str(work)}
        parent, _ = await plugin.submit("test.nest", inputs)
        await drain()
        held = await plugin.queue.get(parent.id)
        child = await plugin.queue.get(held.waiting_on)
        assert held.status == child.status == "waiting_for_human"
        await answer(h.kernel, plugin.queue, child, "deny", digest=child.question.digest,
                     by="test")
        await drain()
        child = await plugin.queue.get(child.id)
        assert child.status == "failed" and child.error == "the user said no"
        decided = await plugin.queue.get(parent.id)
        assert decided.status == "done", decided.error
        assert decided.outputs == {"child": child.id, "refused": "failed",
                                   "why": "the user said no"}
        assert await plugin.queue.children(parent.id) == [child.id]
        # a cancel of the parent takes its waiting child with it
        other, _ = await plugin.submit("test.nest", inputs)
        await drain()
        other = await plugin.queue.get(other.id)
        assert other.status == "waiting_for_human"
        cancelled = await change_task(h.kernel, plugin.queue, other, "cancel")
        assert cancelled.status == "cancelled"
        its_child = await plugin.queue.get(other.waiting_on)
        assert its_child.status == "cancelled" and its_child.question is not None
        await drain()
        assert (await plugin.queue.get(its_child.id)).status == "cancelled"
        assert not (work / "team.txt").exists()
