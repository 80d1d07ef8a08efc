"""Guardrails on long chains: the same call a third time pauses the run ("I seem to be
stuck"), more than half the steps failing aborts it with a summary, a run over its
time limit asks "still working on X?", and a token budget pauses it while a local
model's zero-cost calls never trip a cost budget. Each pause is a durable question
(``waiting_for_human``) answered like an approval."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from taskkit import kernel_at

import adjutant_files
import adjutant_guard
import adjutant_write_gate
from adjutant_hookspecs import Response
from adjutant_tasks import Runner, tasks_settings
from adjutant_tasks._automations import FlowStore
from adjutant_tasks._human import answer

pytestmark = pytest.mark.anyio

PIPELINE = (adjutant_files, adjutant_guard, adjutant_write_gate)


async def _drain(h: Any, plugin: Any) -> Any:
    await Runner(h.kernel, plugin.queue, tasks_settings(h.kernel)).serve(until_idle=True)


async def _run(h: Any, plugin: Any, flow: dict[str, Any]) -> Any:
    FlowStore(h.kernel.home).put(flow)
    task, _ = await plugin.submit("automation.run", {"flow": flow["name"]})
    await _drain(h, plugin)
    return await plugin.queue.get(task.id)


async def _say(h: Any, plugin: Any, task: Any, action: str) -> Any:
    await answer(h.kernel, plugin.queue, task, action, digest=task.question.digest, by="t")
    await _drain(h, plugin)
    return await plugin.queue.get(task.id)


async def test_the_same_call_a_third_time_pauses_and_half_failing_aborts(
        tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "a.txt").write_text("a")
    read = {"tool": "fs.read", "args": {"path": "a.txt"}}
    async with kernel_at(tmp_path / "home", *PIPELINE,
                         mode="execute-with-confirmation") as (h, plugin):
        stuck = await _run(h, plugin, {"name": "loop", "cwd": str(work), "steps": [
            {"id": "r1", **read}, {"id": "r2", **read}, {"id": "r3", **read}]})
        assert stuck.status == "waiting_for_human"
        assert stuck.question.tool == "guardrail.stuck"
        assert stuck.question.preview.startswith("I seem to be stuck: fs.read")
        assert len([r for r in await h.records("tool_call")]) == 2
        done = await _say(h, plugin, stuck, "grant")
        assert done.status == "done", done.error
        assert len([r for r in await h.records("tool_call")]) == 3
        missing = [{"id": f"m{i}", "tool": "fs.read", "args": {"path": f"no{i}.txt"},
                    "continue_on_error": True} for i in range(3)]
        aborted = await _run(h, plugin, {"name": "bad", "cwd": str(work),
                                         "steps": [{"id": "ok", **read}, *missing,
                                                   {"id": "last", "return": 1}]})
        assert aborted.status == "failed"
        assert aborted.error.startswith("aborted: 2 of 3 steps failed: m0: ")
        assert "m1: " in aborted.error and "no1.txt" in aborted.error


async def test_a_run_over_its_time_limit_asks_whether_to_go_on(tmp_path: Path) -> None:
    async with kernel_at(tmp_path / "home") as (h, plugin):
        flow = {"name": "slow", "limits": {"time_s": 0.1}, "steps": [
            {"id": "wait", "delay": 0.3}, {"id": "r", "return": "finished"}]}
        asked = await _run(h, plugin, flow)
        assert asked.status == "waiting_for_human"
        assert asked.question.preview.startswith("Still working on slow?")
        stopped = await _say(h, plugin, asked, "deny")
        assert stopped.status == "failed" and "stopped by the user" in stopped.error
        again = await _run(h, plugin, flow)
        resumed = await _say(h, plugin, again, "grant")
        assert resumed.status == "done" and resumed.outputs["returned"] == "finished"


async def test_a_token_budget_pauses_and_zero_cost_calls_never_trip_a_cost_budget(
        tmp_path: Path) -> None:
    async with kernel_at(tmp_path / "home", mode="execute-with-confirmation") as (h, plugin):
        steps = [{"id": "q", "ask": "say hello"}, {"id": "r", "return": "${q.data.text}"}]
        h.provider.queue(Response(text="hello there, a short answer"))
        free = await _run(h, plugin, {"name": "free", "limits": {"cost_usd": 0.0},
                                      "steps": steps})
        assert free.status == "done", free.error  # a local model costs nothing
        assert "hello there" in free.outputs["returned"]
        h.provider.queue(Response(text="hello again, a short answer"))
        capped = await _run(h, plugin, {"name": "capped", "limits": {"tokens": 1},
                                        "steps": steps})
        assert capped.status == "waiting_for_human"
        assert capped.question.tool == "guardrail.budget"
        assert "tokens, over its budget of 1" in capped.question.preview
        done = await _say(h, plugin, capped, "grant")
        assert done.status == "done", done.error
