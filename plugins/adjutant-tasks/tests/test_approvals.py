"""Approvals bound to what was previewed, in process: a file changed since the
preview is refused and asked again, changed inputs are refused and never run, a deny
goes through the pipeline, and every answer is in the action log."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from taskkit import kernel_at

import adjutant_files
import adjutant_guard
import adjutant_write_gate
from adjutant_tasks import Runner, tasks_settings
from adjutant_tasks._human import AnswerRefusedError, answer

pytestmark = pytest.mark.anyio

PIPELINE = (adjutant_files, adjutant_guard, adjutant_write_gate)


async def _drain(h: Any, plugin: Any) -> None:
    await Runner(h.kernel, plugin.queue, tasks_settings(h.kernel)).serve(until_idle=True)


async def test_a_file_changed_since_the_preview_is_refused_and_asked_again(
        tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    target = work / "notes.txt"
    target.write_text("old\n")
    async with kernel_at(tmp_path / "home", *PIPELINE,
                         mode="execute-with-confirmation") as (h, plugin):
        task, _ = await plugin.submit("tool.call", {"tool": "fs.write", "cwd": str(work),
                                                    "args": {"path": "notes.txt",
                                                             "content": "new\n"}})
        await _drain(h, plugin)
        waiting = await plugin.queue.get(task.id)
        assert waiting.status == "waiting_for_human"
        first = waiting.question
        assert "-old" in first.preview and "+new" in first.preview
        target.write_text("changed by someone else\n")  # after the preview was shown
        await answer(h.kernel, plugin.queue, waiting, "grant", digest=first.digest, by="t")
        await _drain(h, plugin)
        again = await plugin.queue.get(task.id)
        assert target.read_text() == "changed by someone else\n"  # not run
        assert again.status == "waiting_for_human"
        assert again.question.digest != first.digest
        assert "+new" in again.question.preview and "-changed by" in again.question.preview
        assert "the step changed since it was approved" in again.message
        # an answer for the question shown before is refused, and logged as refused
        with pytest.raises(AnswerRefusedError, match="the question changed"):
            await answer(h.kernel, plugin.queue, again, "grant", digest=first.digest,
                         by="t")
        await answer(h.kernel, plugin.queue, again, "grant",
                     digest=again.question.digest, by="t")
        await _drain(h, plugin)
        assert target.read_text() == "new\n"
        assert (await plugin.queue.get(task.id)).status == "done"
        answers = [(r["action"], r.get("refused")) for r in await h.records("tasks_answer")]
        assert answers[0] == ("grant", None) and answers[2] == ("grant", None)
        assert answers[1][1] is not None and "changed" in answers[1][1]


async def test_changed_inputs_are_refused_and_a_deny_is_never_run(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    async with kernel_at(tmp_path / "home", *PIPELINE,
                         mode="execute-with-confirmation") as (h, plugin):
        one, _ = await plugin.submit("tool.call", {"tool": "fs.write", "cwd": str(work),
                                                   "args": {"path": "a.txt", "content": "a"}})
        two, _ = await plugin.submit("tool.call", {"tool": "fs.write", "cwd": str(work),
                                                   "args": {"path": "b.txt", "content": "b"}})
        await _drain(h, plugin)
        tampered = await plugin.queue.get(one.id)
        tampered.inputs["args"]["path"] = "../../escape.txt"  # changed at rest
        await plugin.queue.put(tampered)
        with pytest.raises(AnswerRefusedError, match="inputs changed"):
            await answer(h.kernel, plugin.queue, tampered, "grant", digest=None, by="t")
        denied = await answer(h.kernel, plugin.queue, await plugin.queue.get(two.id), "deny",
                              digest=None, by="t")
        assert denied.status == "queued"
        await _drain(h, plugin)
        after = await plugin.queue.get(two.id)
        assert after.status == "failed" and "denied" in after.error
        assert not (work / "b.txt").exists() and not (tmp_path / "escape.txt").exists()
        assert (await plugin.queue.get(one.id)).status == "waiting_for_human"
        steps = await h.records("approval")
        assert any(r.get("action") == "deny" and not r.get("unanswered") for r in steps)
        assert not [r for r in await h.records("tool_call") if r["tool"] == "fs.write"]


async def test_the_bus_answers_a_waiting_task_and_a_cancelled_parent_takes_its_child(
        tmp_path: Path) -> None:
    import anyio

    from adjutant_tasks import TaskAnswer
    from adjutant_tasks._automations import FlowStore
    from adjutant_tasks._runner import apply_request

    work = tmp_path / "work"
    work.mkdir()
    async with kernel_at(tmp_path / "home", *PIPELINE,
                         mode="execute-with-confirmation") as (h, plugin):
        task, _ = await plugin.submit("tool.call", {"tool": "fs.write", "cwd": str(work),
                                                    "args": {"path": "bus.txt",
                                                             "content": "via the bus"}})
        runner = Runner(h.kernel, plugin.queue, tasks_settings(h.kernel))
        ending = anyio.Event()

        async def slow_to_end(_: object) -> None:  # answers come while the attempt ends
            await ending.wait()
        runner.on_waiting.append(slow_to_end)
        async with anyio.create_task_group() as tg:
            await tg.start(runner.serve)
            with anyio.fail_after(20):
                while (await plugin.queue.get(task.id)).status != "waiting_for_human":  # noqa: ASYNC110
                    await anyio.sleep(0.02)
                question = (await plugin.queue.get(task.id)).question
                h.kernel.bus.publish(TaskAnswer(task_id=task.id, action="grant",
                                                digest="f" * 64, by="dock"))  # stale
                await anyio.sleep(0.1)
                ending.set()  # the attempt ends now; the answer was kept, not dropped
                while not await h.records("tasks_answer"):  # noqa: ASYNC110
                    await anyio.sleep(0.02)
                h.kernel.bus.publish(TaskAnswer(task_id=task.id, action="grant",
                                                digest=question.digest, by="dock"))
                while (await plugin.queue.get(task.id)).status != "done":  # noqa: ASYNC110
                    await anyio.sleep(0.02)
            tg.cancel_scope.cancel()
        assert (work / "bus.txt").read_text() == "via the bus"
        answers = await h.records("tasks_answer")
        assert [(r["by"], bool(r.get("refused"))) for r in answers] == [("dock", True),
                                                                         ("dock", False)]
        FlowStore(h.kernel.home).put({"name": "inner", "cwd": str(work), "steps": [
            {"id": "w", "tool": "fs.write", "args": {"path": "c.txt", "content": "c"}}]})
        FlowStore(h.kernel.home).put({"name": "outer", "steps": [
            {"id": "sub", "flow": "inner"}]})
        outer, _ = await plugin.submit("automation.run", {"flow": "outer"})
        await _drain(h, plugin)
        parent = await plugin.queue.get(outer.id)
        assert parent.status == "waiting_for_human" and parent.waiting_on
        await apply_request(h.kernel, plugin.queue, parent, "cancel")
        child = await plugin.queue.get(parent.waiting_on)
        assert child.status == "cancelled" and not (work / "c.txt").exists()
        # the other way round: the nested task cancelled, its parent fails fast on it
        again, _ = await plugin.submit("automation.run", {"flow": "outer"})
        await _drain(h, plugin)
        held = await plugin.queue.get(again.id)
        await apply_request(h.kernel, plugin.queue, await plugin.queue.get(held.waiting_on),
                            "cancel")
        await _drain(h, plugin)
        failed = await plugin.queue.get(again.id)
        assert failed.status == "failed" and "flow inner cancelled" in failed.error
