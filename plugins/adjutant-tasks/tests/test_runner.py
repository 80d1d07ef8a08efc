"""The durable queue and its runner on a real LMDB store: statuses, outputs,
artifacts, retries, timeouts, cancels, idempotency, the input hash, one task at a
time per resource, and events on the bus."""

from __future__ import annotations

import itertools
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import msgspec
import pytest
from taskkit import kernel_at

from adjutant_tasks import (
    Runner,
    RunnerBusyError,
    TaskFinished,
    TaskProgress,
    TaskQueued,
    TaskStarted,
)
from adjutant_tasks import tasks_settings as settings_of

pytestmark = pytest.mark.anyio


async def _until(check: Callable[[], Awaitable[bool]], limit: float = 10.0) -> None:
    """Poll the store until ``check`` holds (the runner writes it; no event to wait on
    crosses a process, so the tests read the store as another process would)."""
    with anyio.fail_after(limit):
        for _ in itertools.count():
            if await check():
                return
            await anyio.sleep(0.02)


async def _is(plugin: Any, task_id: str, status: str) -> bool:
    task = await plugin.queue.get(task_id)
    return task is not None and task.status == status


async def _drain(h: Any, plugin: Any) -> Runner:
    runner = Runner(h.kernel, plugin.queue, settings_of(h.kernel))
    with anyio.fail_after(30):
        await runner.serve(until_idle=True)
    return runner


async def test_a_task_runs_with_progress_checkpoints_and_artifacts(tmp_path: Path) -> None:
    async with kernel_at(tmp_path / "home") as (h, plugin):
        task, new = await plugin.submit("test.steps", {"n": 3}, parent_run="run-1")
        assert new and task.status == "queued"
        await _drain(h, plugin)
        done = await plugin.queue.get(task.id)
        assert done is not None and done.status == "done", done
        assert done.outputs == {"steps": 3, "resumed_at": 0, "attempt": 1}
        assert done.progress == 1.0 and done.attempts == 1 and done.finished_at
        folder = Path(done.artifacts)
        assert folder.name == task.id and folder.parent.name == "copilot"
        assert folder.parent.parent.parent == tmp_path / "home" / "runs"
        assert (folder / "steps.log").read_text() == "0\n1\n2\n"
        assert await plugin.queue.open_ids() == []
        assert await plugin.queue.load_checkpoint(task.id) is None  # dropped when done
        kinds = [type(e.event) for e in h.kernel.bus.history() if e.run_id == "run-1"]
        assert kinds[0] is TaskQueued and TaskStarted in kinds and kinds[-1] is TaskFinished
        progress = [e.event.progress for e in h.kernel.bus.history()
                    if isinstance(e.event, TaskProgress)]
        assert progress == pytest.approx([1 / 3, 2 / 3, 1.0])


async def test_retryable_failures_retry_up_to_the_bound(tmp_path: Path) -> None:
    async with kernel_at(tmp_path / "home", max_attempts=3) as (h, plugin):
        ok, _ = await plugin.submit("test.flaky", {"fail": 2})
        never, _ = await plugin.submit("test.flaky", {"fail": 5})
        broken, _ = await plugin.submit("test.broken", {})
        await _drain(h, plugin)
        ok_t, never_t, broken_t = [await plugin.queue.get(t.id) for t in (ok, never, broken)]
        assert ok_t is not None and ok_t.status == "done" and ok_t.outputs == {"attempt": 3}
        assert never_t is not None and never_t.status == "failed" and never_t.attempts == 3
        assert never_t.error == "flaked on attempt 3 (after 3 attempts)"
        # a failure that says it cannot be retried is not, whatever the capability says
        assert broken_t is not None and broken_t.status == "failed" and broken_t.attempts == 1
        assert broken_t.error == "the input file is not a PDF"


async def test_an_attempt_over_its_timeout_fails_and_is_retried(tmp_path: Path) -> None:
    async with kernel_at(tmp_path / "home", max_attempts=2) as (h, plugin):
        task, _ = await plugin.submit("test.hang", {})
        await _drain(h, plugin)
        done = await plugin.queue.get(task.id)
        assert done is not None and done.status == "failed" and done.attempts == 2
        assert done.error == "timed out after 0.3 s (after 2 attempts)"


async def test_the_same_idempotency_key_queues_and_runs_once(tmp_path: Path) -> None:
    async with kernel_at(tmp_path / "home") as (h, plugin):
        first, new1 = await plugin.submit("test.steps", {"n": 1}, idempotency_key="k1")
        second, new2 = await plugin.submit("test.steps", {"n": 1}, idempotency_key="k1")
        assert new1 and not new2 and second.id == first.id
        await _drain(h, plugin)
        again, new3 = await plugin.submit("test.steps", {"n": 1}, idempotency_key="k1")
        assert not new3 and again.status == "done"
        assert len([t async for t in plugin.queue.all()]) == 1
        assert (Path(first.artifacts) / "steps.log").read_text() == "0\n"


async def test_a_duplicate_delivered_past_the_key_check_runs_once(tmp_path: Path) -> None:
    """Two processes queue with one key at the same moment (both pass the check): the
    runner runs the one the key points at and cancels the other, naming it."""
    async with kernel_at(tmp_path / "home") as (h, plugin):
        first, _ = await plugin.submit("test.steps", {"n": 1}, idempotency_key="k2")
        await plugin.queue.kv.delete("tasks/key/k2")  # the second did not see the first
        second, new = await plugin.submit("test.steps", {"n": 1}, idempotency_key="k2")
        assert new and second.id != first.id
        await _drain(h, plugin)
        a, b = await plugin.queue.get(first.id), await plugin.queue.get(second.id)
        assert a is not None and b is not None
        assert a.status == "cancelled" and f"a duplicate of task {second.id}" in str(a.error)
        assert b.status == "done"
        assert not (Path(first.artifacts) / "steps.log").exists()


async def test_inputs_changed_at_rest_are_refused_never_run(tmp_path: Path) -> None:
    async with kernel_at(tmp_path / "home") as (h, plugin):
        task, _ = await plugin.submit("test.steps", {"n": 2})
        raw = await plugin.queue.kv.get(f"tasks/t/{task.id}")
        tampered = msgspec.json.decode(raw)
        tampered["inputs"]["n"] = 1000
        await plugin.queue.kv.put(f"tasks/t/{task.id}", msgspec.json.encode(tampered))
        await _drain(h, plugin)
        done = await plugin.queue.get(task.id)
        assert done is not None and done.status == "failed" and done.attempts == 0
        assert "inputs changed after it was queued" in str(done.error)
        assert not (Path(task.artifacts) / "steps.log").exists()


async def test_one_task_at_a_time_per_resource(tmp_path: Path) -> None:
    async with kernel_at(tmp_path / "home") as (h, plugin):
        for i in range(3):
            await plugin.submit("test.probe-a", {"i": i})
            await plugin.submit("test.probe-b", {"i": i})
        await plugin.submit("test.steps", {"n": 2, "delay": 0.1})  # another resource
        await _drain(h, plugin)
        caps = h.kernel.task_capabilities
        assert caps["test.probe-a"].resource == caps["test.probe-b"].resource == "model"
        assert caps["test.probe-a"].shared["max"] == 1  # type: ignore[attr-defined]
        assert {t.status async for t in plugin.queue.all()} == {"done"}


async def test_a_running_task_is_cancelled_and_a_queued_one_never_runs(tmp_path: Path) -> None:
    async with kernel_at(tmp_path / "home") as (h, plugin):
        slow, _ = await plugin.submit("test.steps", {"n": 100, "delay": 0.05})
        later, _ = await plugin.submit("test.steps", {"n": 1}, not_before=2e9)
        runner = Runner(h.kernel, plugin.queue, settings_of(h.kernel))
        async with anyio.create_task_group() as tg:
            await tg.start(runner.serve)
            async def started() -> bool:
                task = await plugin.queue.get(slow.id)
                return task is not None and task.progress >= 0.05

            await _until(started)
            await plugin.queue.request(slow.id, "cancel")
            await plugin.queue.request(later.id, "cancel")
            runner.wake()
            await _until(lambda: _is(plugin, slow.id, "cancelled"))
            await _until(lambda: _is(plugin, later.id, "cancelled"))
            tg.cancel_scope.cancel()
        slow_t, later_t = await plugin.queue.get(slow.id), await plugin.queue.get(later.id)
        assert slow_t is not None and slow_t.status == "cancelled"
        assert later_t is not None and later_t.status == "cancelled"
        assert 0 < len((Path(slow.artifacts) / "steps.log").read_text().split()) < 100
        assert not (Path(later.artifacts) / "steps.log").exists()
        assert await plugin.queue.requests() == []
        assert await plugin.queue.open_ids() == []


async def test_unknown_capabilities_and_bad_inputs_are_refused(tmp_path: Path) -> None:
    async with kernel_at(tmp_path / "home") as (_, plugin):
        with pytest.raises(LookupError, match=r"no task capability 'nope'.*test\.steps"):
            await plugin.submit("nope", {})
        with pytest.raises(ValueError, match="JSON values"):
            await plugin.submit("test.steps", {"n": float("nan")})
        assert [t async for t in plugin.queue.all()] == []


async def test_one_runner_per_data_home(tmp_path: Path) -> None:
    async with kernel_at(tmp_path / "home") as (h, plugin):
        first = Runner(h.kernel, plugin.queue, settings_of(h.kernel))
        second = Runner(h.kernel, plugin.queue, settings_of(h.kernel))
        async with anyio.create_task_group() as tg:
            await tg.start(first.serve)
            with pytest.raises(RunnerBusyError, match="another process"):
                await second.serve(until_idle=True)
            tg.cancel_scope.cancel()


async def test_the_in_process_runner_runs_what_this_process_queues(tmp_path: Path) -> None:
    async with kernel_at(tmp_path / "home", run_in_process=True) as (_, plugin):
        task, _ = await plugin.submit("test.steps", {"n": 2})
        await _until(lambda: _is(plugin, task.id, "done"))
        assert (Path(task.artifacts) / "steps.log").read_text() == "0\n1\n"


async def test_an_operator_s_first_run_resumes_what_a_previous_process_left(
        tmp_path: Path) -> None:
    from adjutant.testing import plan

    home = tmp_path / "home"
    async with kernel_at(home) as (_, plugin):  # queued, never run (no runner)
        task, _ = await plugin.submit("test.steps", {"n": 2})
    async with kernel_at(home, run_in_process=True) as (h, plugin):
        assert await _is(plugin, task.id, "queued")
        await h.run("what is queued?", reply=plan(("schedule.task", {
            "capability": "test.steps", "inputs": {"n": 1}, "at": "2040-01-01T00:00"})))
        await _until(lambda: _is(plugin, task.id, "done"))
        assert (Path(task.artifacts) / "steps.log").read_text() == "0\n1\n"


async def test_one_commit_per_task_and_every_end_durable(tmp_path: Path) -> None:
    """A task's end is written behind and rides the next task's start commit (it was a
    commit of its own: two per task); a producer queueing while the runner serves
    shares commits with the runner's starts. Nothing written behind is lost: a fresh
    kernel on the same store finds every task done once the runner has stopped."""
    home, count = tmp_path / "home", 60
    async with kernel_at(home) as (h, plugin):
        queue = plugin.queue
        many, commits = queue._many, [0]

        async def counted(items: Any) -> None:
            commits[0] += 1
            await many(items)
        queue._many = counted
        for i in range(count):
            await plugin.submit("test.noop", {"i": i})
        assert commits[0] == count  # queueing: one commit each, returned once durable
        commits[0] = 0
        await Runner(h.kernel, queue, settings_of(h.kernel)).serve(until_idle=True)
        ran = commits[0]
        # while the runner serves (it is woken by `submit`, as a chat's runner is)
        commits[0] = 0
        runner = Runner(h.kernel, queue, settings_of(h.kernel))
        plugin.runner = runner
        async with anyio.create_task_group() as tg:
            await tg.start(runner.serve)
            for i in range(count):
                await plugin.submit("test.noop", {"i": count + i})
            await _until(lambda: _all_done(plugin, 2 * count))
            tg.cancel_scope.cancel()
        plugin.runner = None
        serving = commits[0]
    # one commit per task (two before), with some slack for a loaded machine's 5 ms
    # write-behind timer firing between two tasks
    assert ran <= count * 1.3, ran
    assert serving <= count * 1.5, serving  # (2 per task before: queue, then start)
    async with kernel_at(home) as (h, plugin):
        done = [t async for t in plugin.queue.all()]
        assert len(done) == 2 * count and {t.status for t in done} == {"done"}


async def _all_done(plugin: Any, count: int) -> bool:
    return sum([1 async for t in plugin.queue.all() if t.status == "done"]) == count
