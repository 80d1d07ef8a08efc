"""``schedule.task`` through the operator's pipeline (preview, approval under the
mode, action log) and cron schedules on a controlled clock."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import anyio
import pytest
from taskkit import kernel_at

from adjutant.testing import ScriptedApprover, plan
from adjutant_tasks import Runner, tasks_settings
from adjutant_tasks._runner import add_schedule
from adjutant_tasks._tools import when_of

pytestmark = pytest.mark.anyio

CALL = {"capability": "test.steps", "inputs": {"n": 2}, "at": "2031-05-04T09:15:00"}


async def test_the_preview_says_exactly_what_will_run_and_when(tmp_path: Path) -> None:
    async with kernel_at(tmp_path / "home") as (h, plugin):
        result = await h.dry_run("schedule.task", **CALL)
        assert result.status == "dry_run", result.stderr
        assert result.dry_run_diff == (
            "queue task capability test.steps\n"
            f"when: at {datetime(2031, 5, 4, 9, 15).strftime('%Y-%m-%d %H:%M:%S')} "
            f"{datetime(2031, 5, 4, 9, 15).astimezone().strftime('%Z')}\n"
            'inputs: {\n  "n": 2\n}\n')
        assert [t async for t in plugin.queue.all()] == []  # a preview queues nothing
        bad = await h.dry_run("schedule.task", capability="nope")
        assert bad.status == "error" and "no task capability 'nope'" in bad.stderr
        both = await h.dry_run("schedule.task", capability="test.steps", at="2031-01-01",
                               cron="* * * * *")
        assert both.status == "error" and "not both" in both.stderr
        cron = await h.dry_run("schedule.task", capability="test.steps", cron="61 * * * *")
        assert cron.status == "error" and "not a cron expression" in cron.stderr


async def test_a_denied_step_queues_nothing_and_a_granted_one_queues_what_it_showed(
        tmp_path: Path) -> None:
    async with kernel_at(tmp_path / "home", mode="execute-with-confirmation",
                         approver=ScriptedApprover(steps=["deny"])) as (h, plugin):
        denied = await h.run("queue the steps task", reply=plan(("schedule.task", CALL)))
        assert len(denied.asked) == 1 and "test.steps" in str(denied.asked[0].preview)
        assert [t async for t in plugin.queue.all()] == []
        h.approver = ScriptedApprover(steps=["grant"])
        granted = await h.run("queue the steps task", reply=plan(("schedule.task", CALL)))
        assert granted.asked[0].preview == denied.asked[0].preview
        tasks = [t async for t in plugin.queue.all()]
        assert len(tasks) == 1
        task = tasks[0]
        assert task.capability == "test.steps" and task.inputs == {"n": 2}
        assert task.parent_run == granted.run_id and task.status == "queued"
        assert task.not_before == datetime(2031, 5, 4, 9, 15).timestamp()


async def test_propose_only_queues_nothing(tmp_path: Path) -> None:
    async with kernel_at(tmp_path / "home", mode="propose-only") as (h, plugin):
        await h.run("queue the steps task", reply=plan(("schedule.task", CALL)))
        assert [t async for t in plugin.queue.all()] == []


def test_the_cron_preview_lists_the_next_times() -> None:
    now = datetime(2030, 1, 1, 6, 0).timestamp()
    words, not_before, cron = when_of({"cron": "30 7 * * *"}, now)
    assert not_before is None and cron == "30 7 * * *"
    assert "2030-01-01 07:30:00" in words and "2030-01-02 07:30:00" in words
    assert "2030-01-03 07:30:00" in words
    assert when_of({"at": "2000-01-01T00:00"}, now)[1] is None  # passed: now


async def test_a_cron_schedule_queues_once_per_firing_on_a_controlled_clock(
        tmp_path: Path) -> None:
    clock = [datetime(2030, 1, 1, 6, 0).timestamp()]
    async with kernel_at(tmp_path / "home") as (h, plugin):
        schedule = await add_schedule(h.kernel, plugin.queue, "test.steps", {"n": 1},
                                      "30 7 * * *", now=clock[0], parent_run="run-9")
        assert schedule.next_at == datetime(2030, 1, 1, 7, 30).timestamp()

        async def tick(at: datetime) -> list[str]:
            clock[0] = at.timestamp()
            runner = Runner(h.kernel, plugin.queue, tasks_settings(h.kernel),
                            clock=lambda: clock[0])
            with anyio.fail_after(20):
                await runner.serve(until_idle=True)
            return [t.id async for t in plugin.queue.all()]

        assert await tick(datetime(2030, 1, 1, 7, 0)) == []
        first = await tick(datetime(2030, 1, 1, 7, 31))
        assert len(first) == 1
        assert await tick(datetime(2030, 1, 1, 7, 45)) == first  # not again that day
        second = await tick(datetime(2030, 1, 2, 7, 30, 5))
        assert len(second) == 2
        tasks = [t async for t in plugin.queue.all()]
        assert {t.status for t in tasks} == {"done"}
        assert {t.schedule_id for t in tasks} == {schedule.id}
        assert {t.parent_run for t in tasks} == {"run-9"}
        (stored,) = await plugin.queue.schedules()
        assert stored.next_at == datetime(2030, 1, 3, 7, 30).timestamp()


async def test_a_path_in_the_inputs_outside_the_cage_is_refused(tmp_path: Path) -> None:
    async with kernel_at(tmp_path / "home") as (h, plugin):
        inside = h.workspace / "report.pdf"
        ok = await h.dry_run("schedule.task", capability="test.steps",
                             inputs={"n": 1, "paths": [str(inside)]})
        assert ok.status == "dry_run", ok.stderr
        for outside in ("/etc/passwd", "~/.ssh/id_rsa", str(h.workspace / ".." / "x")):
            bad = await h.dry_run("schedule.task", capability="test.steps",
                                  inputs={"n": 1, "deep": [{"path": outside}]})
            assert bad.status == "error", outside
            assert "outside the cage" in bad.stderr and "path-outside-cage" in bad.stderr
        (h.workspace / "link").symlink_to("/etc")
        linked = await h.dry_run("schedule.task", capability="test.steps",
                                 inputs={"n": 1, "path": str(h.workspace / "link" / "hosts")})
        assert linked.status == "error" and "outside the cage" in linked.stderr
        assert [t async for t in plugin.queue.all()] == []


async def test_a_live_runner_removes_a_schedule_when_asked(tmp_path: Path) -> None:
    async with kernel_at(tmp_path / "home") as (h, plugin):
        schedule = await add_schedule(h.kernel, plugin.queue, "test.steps", {"n": 1},
                                      "* * * * *", now=datetime(2030, 1, 1).timestamp())
        runner = Runner(h.kernel, plugin.queue, tasks_settings(h.kernel))
        async with anyio.create_task_group() as tg:
            await tg.start(runner.serve)
            await plugin.queue.request(schedule.id, "unschedule")
            runner.wake()
            with anyio.fail_after(10):
                # the schedule goes, then the request (a write after it): both
                while await plugin.queue.get_schedule(schedule.id) is not None \
                        or await plugin.queue.requests():  # noqa: ASYNC110
                    await anyio.sleep(0.02)
            tg.cancel_scope.cancel()
        assert await plugin.queue.schedules() == []
        assert await plugin.queue.requests() == []
