"""Automations through the real pipeline (the files tools, the guard, the write-gate):
a condition, variables and an approval gate; an early return; variables are data
(shell metacharacters stay literal, a path outside the cage is refused); a paused run
keeps the definition it started with; mixed execution; each flow as a tool; cron and
bus-event triggers; an `ask` step runs the plan that was approved, never a new one."""

from __future__ import annotations

import contextlib
import json
from datetime import datetime
from pathlib import Path
from typing import Any

import anyio
import pytest
from taskkit import kernel_at

import adjutant_files
import adjutant_guard
import adjutant_write_gate
from adjutant.testing import ScriptedApprover
from adjutant_hookspecs import Plan, ToolCall
from adjutant_tasks import Runner, tasks_settings
from adjutant_tasks._automations import FlowStore, resolve
from adjutant_tasks._human import answer

pytestmark = pytest.mark.anyio

PIPELINE = (adjutant_files, adjutant_guard, adjutant_write_gate)


def _flow(work: Path, **extra: Any) -> dict[str, Any]:
    return {"name": "triage", "cwd": str(work), "steps": [
        {"id": "s1", "tool": "fs.read", "args": {"path": "item.json"}},
        {"id": "c", "condition": {"value": "${s1.data.count}", "op": "gt", "than": 0},
         "else": "return", "returns": {"skipped": "${s1.data.id}"}},
        {"id": "w", "tool": "fs.write",
         "args": {"path": "out-${s1.data.id}.md", "content": "${s1.data.items[0].title}"}},
        {"id": "n", "notify": {"title": "wrote out-${s1.data.id}.md", "priority": "low"}}],
        **extra}


async def _drain(h: Any, plugin: Any, clock: Any = None) -> None:
    runner = Runner(h.kernel, plugin.queue, tasks_settings(h.kernel),
                    **({"clock": clock} if clock else {}))
    await runner.serve(until_idle=True)


async def _grant(h: Any, plugin: Any, task_id: str) -> Any:
    task = await plugin.queue.get(task_id)
    assert task.status == "waiting_for_human", (task.status, task.error)
    return await answer(h.kernel, plugin.queue, task, "grant",
                        digest=task.question.digest, by="test")


def test_variables_resolve_as_data_and_unresolved_ones_stay_literal() -> None:
    scope = {"step1": {"data": {"id": 7}}, "items": [{"title": "a ${b}"}]}
    assert resolve("${step1.data.id}", scope) == 7
    assert resolve("n=${step1.data.id}", scope) == "n=7"
    assert resolve("${items[0].title}", scope) == "a ${b}"  # a value is never re-read
    assert resolve("${items[3].title} ${nope.x}", scope) == "${items[3].title} ${nope.x}"
    assert resolve({"a": ["${step1.data.id}"]}, scope) == {"a": [7]}


async def test_a_condition_a_variable_and_an_approval_gate(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "item.json").write_text(json.dumps(
        {"id": 7, "count": 2, "items": [{"title": "Hello"}]}))
    async with kernel_at(tmp_path / "home", *PIPELINE,
                         mode="execute-with-confirmation") as (h, plugin):
        plugin.notifier.program = None  # no desktop here: the bus only
        FlowStore(h.kernel.home).put(_flow(work))
        task, _ = await plugin.submit("automation.run", {"flow": "triage"})
        await _drain(h, plugin)
        waiting = await plugin.queue.get(task.id)
        assert waiting.status == "waiting_for_human"
        assert waiting.question.args == {"path": "out-7.md", "content": "Hello"}
        assert not (work / "out-7.md").exists()
        await _grant(h, plugin, task.id)
        await _drain(h, plugin)
        done = await plugin.queue.get(task.id)
        assert done.status == "done", done.error
        assert (work / "out-7.md").read_text() == "Hello"
        assert done.outputs["results"]["c"]["data"] == {"result": True}
        notes = [e.event for e in h.events.envelopes if type(e.event).__name__ == "Notification"]
        assert [n.title for n in notes] == ["Adjutant waits for your approval", "wrote out-7.md"]
        # the same flow returns early when the condition does not hold: nothing asked
        (work / "item.json").write_text(json.dumps({"id": 8, "count": 0, "items": []}))
        early, _ = await plugin.submit("automation.run", {"flow": "triage"})
        await _drain(h, plugin)
        ended = await plugin.queue.get(early.id)
        assert ended.status == "done" and ended.outputs["early"] is True
        assert ended.outputs["returned"] == {"skipped": 8}
        assert ended.question is None and not (work / "out-8.md").exists()


async def test_a_variable_is_data_never_a_shell_and_the_cage_still_applies(
        tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    hostile = "; rm -rf ~ $(touch pwned) `touch pwned2` && echo gotcha"
    (work / "item.json").write_text(json.dumps(
        {"id": 1, "count": 1, "items": [{"title": hostile}]}))
    async with kernel_at(tmp_path / "home", *PIPELINE,
                         mode="execute-with-confirmation") as (h, plugin):
        plugin.notifier.program = None
        FlowStore(h.kernel.home).put(_flow(work))
        task, _ = await plugin.submit("automation.run", {"flow": "triage"})
        await _drain(h, plugin)
        assert (await plugin.queue.get(task.id)).question.args["content"] == hostile
        await _grant(h, plugin, task.id)
        await _drain(h, plugin)
        assert (await plugin.queue.get(task.id)).status == "done"
        assert (work / "out-1.md").read_text() == hostile  # literally, as data
        assert not list(work.glob("pwned*")) and not list(tmp_path.glob("pwned*"))
        # a path from a variable outside the cage: refused by the pipeline, nothing asked
        outside = tmp_path / "outside.txt"
        (work / "item.json").write_text(json.dumps({"path": str(outside)}))
        FlowStore(h.kernel.home).put({"name": "escape", "cwd": str(work), "steps": [
            {"id": "s1", "tool": "fs.read", "args": {"path": "item.json"}},
            {"id": "w", "tool": "fs.write",
             "args": {"path": "${s1.data.path}", "content": "x"}},
            {"id": "never", "tool": "fs.write", "args": {"path": "never.txt",
                                                         "content": "x"}}]})
        escape, _ = await plugin.submit("automation.run", {"flow": "escape"})
        await _drain(h, plugin)
        failed = await plugin.queue.get(escape.id)
        assert failed.status == "failed" and "step w (fs.write): denied" in failed.error
        assert failed.question is None  # refused outright, never offered for approval
        assert not outside.exists() and not (work / "never.txt").exists()  # fail fast


async def test_a_paused_run_keeps_its_definition_and_safe_calls_run_while_one_waits(
        tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "a.txt").write_text("alpha")
    flow = {"name": "mixed", "cwd": str(work), "steps": [
        {"id": "both", "calls": [
            {"tool": "fs.write", "args": {"path": "b.txt", "content": "version 1"}},
            {"tool": "fs.read", "args": {"path": "a.txt"}}]}]}
    async with kernel_at(tmp_path / "home", *PIPELINE,
                         mode="execute-with-confirmation") as (h, plugin):
        store = FlowStore(h.kernel.home)
        store.put(flow)
        task, _ = await plugin.submit("automation.run", {"flow": "mixed"})
        await _drain(h, plugin)
        reads = [r for r in await h.records("tool_call") if r["tool"] == "fs.read"]
        assert len(reads) == 1  # the safe call ran while the write waits
        assert (await plugin.queue.get(task.id)).status == "waiting_for_human"
        flow["steps"][0]["calls"][0]["args"]["content"] = "version 2"  # an edit
        store.put(flow)
        await _grant(h, plugin, task.id)
        await _drain(h, plugin)
        done = await plugin.queue.get(task.id)
        assert done.status == "done", done.error
        assert (work / "b.txt").read_text() == "version 1"  # as it started
        assert done.outputs["results"]["both"]["data"][1] == "alpha"
        reads = [r for r in await h.records("tool_call") if r["tool"] == "fs.read"]
        assert len(reads) == 1  # not run again on resume


async def test_a_flow_is_a_tool_and_its_triggers_fire(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    home = tmp_path / "home"
    FlowStore(home).put({"name": "hello", "cwd": str(work),
                         "trigger": {"event": "task.finished"},
                         "steps": [{"id": "r", "return": {"got": "${event.status}"}}]})
    async with kernel_at(home, *PIPELINE, mode="execute-with-confirmation",
                         approver=ScriptedApprover(steps=["grant"])) as (h, plugin):
        assert "flow.hello" in h.kernel.tools
        called = await h.call("flow.hello", input={"x": 1})
        assert called.outcome.status == "executed", called.outcome.error
        assert "queue automation hello" in str(called.asked[0].preview)
        queued = json.loads(called.outcome.results[0].stdout)
        runner = Runner(h.kernel, plugin.queue, tasks_settings(h.kernel))
        async with anyio.create_task_group() as tg:
            await tg.start(runner.serve)
            _noop, _ = await plugin.submit("test.noop", {})
            runner.wake()
            with anyio.fail_after(20):
                while True:
                    runs = [t async for t in plugin.queue.all()
                            if t.capability == "automation.run" and t.id != queued["task"]
                            and t.status == "done"]
                    if runs:
                        break
                    await anyio.sleep(0.05)
            tg.cancel_scope.cancel()
        assert runs[0].outputs["returned"] == {"got": "done"}
        assert (await plugin.queue.get(queued["task"])).status == "done"


async def test_a_cron_triggered_flow_runs_on_a_controlled_clock_unless_disabled(
        tmp_path: Path) -> None:
    from adjutant_tasks._autocli import _schedule

    clock = [datetime(2030, 1, 1, 6, 0).timestamp()]
    async with kernel_at(tmp_path / "home") as (h, plugin):
        store = FlowStore(h.kernel.home)
        flow = store.put({"name": "morning", "trigger": {"cron": "30 7 * * *"},
                          "steps": [{"id": "r", "return": 1}]})
        await _schedule(h.kernel, plugin, flow)
        (schedule,) = await plugin.queue.schedules()
        schedule.next_at = datetime(2030, 1, 1, 7, 30).timestamp()
        await plugin.queue.put_schedule(schedule)
        clock[0] = datetime(2030, 1, 1, 7, 31).timestamp()
        await _drain(h, plugin, clock=lambda: clock[0])
        runs = [t async for t in plugin.queue.all()]
        assert [(t.capability, t.status) for t in runs] == [("automation.run", "done")]
        store.put({**flow, "enabled": False})
        clock[0] = datetime(2030, 1, 2, 7, 31).timestamp()
        await _drain(h, plugin, clock=lambda: clock[0])
        assert len([t async for t in plugin.queue.all()]) == 1  # disabled: not queued


async def test_nothing_writes_unattended_even_in_execute_auto(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    async with kernel_at(tmp_path / "home", *PIPELINE, mode="execute-auto") as (h, plugin):
        plugin.notifier.program = None
        FlowStore(h.kernel.home).put({"name": "auto", "cwd": str(work), "steps": [
            {"id": "w", "tool": "fs.write", "args": {"path": "a.txt", "content": "a"}}]})
        task, _ = await plugin.submit("automation.run", {"flow": "auto"})
        await _drain(h, plugin)
        waiting = await plugin.queue.get(task.id)
        assert waiting.status == "waiting_for_human"
        assert any(r.startswith("write-gate:") for r in waiting.question.reasons)
        assert not (work / "a.txt").exists()


@pytest.mark.parametrize(("flow", "message"), [
    ({"name": "x", "steps": []}, "`steps` is a non-empty list"),
    ({"name": "../x", "steps": [{"return": 1}]}, "a flow's name is"),
    ({"name": "x", "steps": [{"id": "a", "return": 1}, {"id": "a", "return": 2}]},
     "a unique id is needed"),
    ({"name": "x", "steps": [{"id": "a", "tool": "fs.read", "return": 1}]}, "one of"),
    ({"name": "x", "steps": [{"id": "a", "calls": [{"args": {}}]}]}, "`calls` is a list"),
    ({"name": "x", "steps": [{"id": "a", "flow": "../../etc"}]}, "names a stored flow"),
    ({"name": "x", "steps": [{"id": "a", "delay": -1}]}, "`delay` is seconds"),
    ({"name": "x", "trigger": {"cron": "61 * * * *"}, "steps": [{"return": 1}]},
     "not a cron expression"),
])
def test_a_bad_flow_is_refused_with_the_step_at_fault(flow: dict[str, Any],
                                                      message: str) -> None:
    from adjutant_tasks._automations import FlowError, validate_flow

    with pytest.raises(FlowError, match=message.replace("(", r"\(")):
        validate_flow(flow)


async def test_a_flow_s_own_runs_never_trigger_it_again(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "a.txt").write_text("a")
    home = tmp_path / "home"
    store = FlowStore(home)
    store.put({"name": "loop", "cwd": str(work), "trigger": {"event": "RUN_FINISHED"},
               "steps": [{"id": "r", "tool": "fs.read", "args": {"path": "a.txt"}}]})
    store.put({"name": "marker", "trigger": {"event": "task.notification"},
               "steps": [{"id": "r", "return": 1}]})
    async with kernel_at(home, *PIPELINE, mode="execute-with-confirmation") as (h, plugin):
        plugin.notifier.program = None
        runner = Runner(h.kernel, plugin.queue, tasks_settings(h.kernel))

        async def runs(name: str) -> list[Any]:
            return [t async for t in plugin.queue.all() if t.capability == "automation.run"
                    and t.inputs["flow"] == name and t.status == "done"]

        async with anyio.create_task_group() as tg:
            await tg.start(runner.serve)
            await h.call("fs.read", path=str(work / "a.txt"))  # one run of the user's
            with anyio.fail_after(20):
                while not await runs("loop"):  # noqa: ASYNC110
                    await anyio.sleep(0.02)
                # every event before this one has reached the runner once it triggers
                await plugin.notify({"title": "sentinel"})
                while not await runs("marker"):  # noqa: ASYNC110
                    await anyio.sleep(0.02)
            tg.cancel_scope.cancel()
        assert len(await runs("loop")) == 1  # its own fs.read run did not start it again


async def test_an_ask_step_runs_the_plan_approved_never_a_second_plan(tmp_path: Path) -> None:
    """Adversarial: the model's second plan differs from the first (another file, other
    content). After the approval, the plan shown and approved runs, bound to its digest;
    the model is not asked again; the second plan never runs. A kept plan changed at rest
    is refused; a deny runs nothing."""
    work = tmp_path / "work"
    work.mkdir()
    (work / "in.txt").write_text("input")
    shown = {"path": "report.md", "content": "the plan shown"}
    flow = {"name": "asker", "cwd": str(work), "steps": [
        {"id": "op", "ask": "write the report"}, {"id": "r", "return": "${op.data.results}"}]}

    async def asked(n: int) -> tuple[contextlib.AsyncExitStack, Any, Any, str]:
        """A fresh kernel whose model plans a read and the write ``shown`` first, then
        (asked again) a write of ``evil<n>.md``; the run queued and waiting."""
        stack = contextlib.AsyncExitStack()
        h, plugin = await stack.enter_async_context(kernel_at(
            tmp_path / f"home{n}", *PIPELINE, mode="execute-with-confirmation"))
        plugin.notifier.program = None
        FlowStore(h.kernel.home).put(flow)
        h.provider.queue(
            Plan(steps=(ToolCall(tool="fs.read", args={"path": "in.txt"}),
                        ToolCall(tool="fs.write", args=shown))),
            Plan(steps=(ToolCall(tool="fs.write", args={"path": f"evil{n}.md",
                                                        "content": "a second plan"}),)))
        task, _ = await plugin.submit("automation.run", {"flow": "asker"})
        await _drain(h, plugin)
        waiting = await plugin.queue.get(task.id)
        assert waiting.status == "waiting_for_human", waiting.error
        assert waiting.question.args == shown
        assert h.provider.pending == 1
        return stack, h, plugin, task.id

    stack, h, plugin, task_id = await asked(1)
    async with stack:
        await _grant(h, plugin, task_id)
        await _drain(h, plugin)
        done = await plugin.queue.get(task_id)
        assert done.status == "done", done.error
        assert (work / "report.md").read_text() == "the plan shown"
        assert not (work / "evil1.md").exists()
        assert h.provider.pending == 1  # the model was not asked again
        writes = [r["args"] for r in await h.records("tool_call") if r["tool"] == "fs.write"]
        assert writes == [shown]
        reads = [r for r in await h.records("tool_call") if r["tool"] == "fs.read"]
        assert len(reads) == 1  # the read that ran before the question did not run again
        assert done.outputs["returned"][0] == "input"
    (work / "report.md").unlink()

    # a kept plan changed at rest (its checkpoint rewritten) is refused, nothing run
    stack, h, plugin, task_id = await asked(2)
    async with stack:
        state = await plugin.queue.load_checkpoint(task_id)
        state["plans"]["op"]["calls"][1]["args"]["path"] = "evil2.md"
        await plugin.queue.save_checkpoint(task_id, state)
        await _grant(h, plugin, task_id)
        await _drain(h, plugin)
        refused = await plugin.queue.get(task_id)
        assert refused.status == "failed" and "changed at rest" in refused.error
        assert not (work / "evil2.md").exists() and not (work / "report.md").exists()
        assert h.provider.pending == 1

    # a deny: the kept plan's write is denied and not run; the model is not asked again
    stack, h, plugin, task_id = await asked(3)
    async with stack:
        first = await plugin.queue.get(task_id)
        await answer(h.kernel, plugin.queue, first, "deny", digest=first.question.digest,
                     by="test")
        await _drain(h, plugin)
        ended = await plugin.queue.get(task_id)
        assert ended.status == "done", ended.error  # the read ran: the flow goes on
        assert ended.outputs["returned"] == ["input", ""]
        assert not (work / "report.md").exists() and not (work / "evil3.md").exists()
        assert h.provider.pending == 1
        assert [r["action"] for r in await h.records("tasks_answer")] == ["deny"]
