"""Durable task queue (adjutant-tasks): no-op tasks per second, and recovery after a
SIGKILL with many tasks queued.

Measures, on a real LMDB store under ``.cache/`` (the checkout's disk; a tmpfs makes
fsync free and the figures meaningless):

1. the floor: durable ``put`` calls per second on the key/value store (each one an
   LMDB commit, fsync'd). The queue groups its writes (group commit: concurrent
   writes share one transaction): queueing a task is one commit, shared by producers
   queueing at the same time; a task's start is one commit made before it runs,
   which also carries the previous task's end; so on one resource the queue runs at
   most as many tasks per second as the disk commits;
2. no-op tasks through the queue: queue N (one producer, then 32 at once), then run
   them all with a `Runner`: tasks per second queued, run, and end to end; and one
   producer queueing while the runner serves (a chat queues and runs in one process:
   the producer's commit and the runner's start share one transaction). Goal: at
   least 500 per second end to end. Each figure comes with the floor measured just
   before it (the disk's commit rate swings with the other sessions' load).
3. recovery: a child process queues 1,000 tasks, starts one long task and is killed
   with SIGKILL; a new runner then starts: the time its recovery takes (the running
   task resumed, nothing queued lost) and the time until the first queued task is
   done. Goal: recovery under 1 s.

Run: ``.venv/bin/python bench/tasks.py [--quick] [--tasks N]``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import anyio

ROOT = Path(__file__).resolve().parents[1]
GOAL_PER_S = 500.0
GOAL_RECOVERY_S = 1.0


class Noop:
    name, resource, timeout_s, retryable = "bench.noop", "cpu", 30.0, False

    async def run(self, context: Any) -> Mapping[str, Any]:
        return {}


class Long:
    name, resource, timeout_s, retryable = "bench.long", "long", 3600.0, False

    async def run(self, context: Any) -> Mapping[str, Any]:
        (context.artifacts / "started").write_text("")
        await anyio.sleep(3600)
        return {}


class BenchCapabilities:
    from adjutant_hookspecs import hookimpl

    @hookimpl
    def register_task_capabilities(self, register: Callable[[Any], None]) -> None:
        register(Noop())
        register(Long())


def harness(home: Path) -> Any:
    import adjutant_lmdb
    from adjutant import ModelPreset, Profile
    from adjutant.testing import Harness, ScriptedProvider
    from adjutant_tasks import TasksPlugin

    profile = Profile(model=ModelPreset(provider=ScriptedProvider().name),
                      plugins={"tasks": {"run_in_process": False}})
    return Harness(adjutant_lmdb, TasksPlugin(), BenchCapabilities(), home=home,
                   profile=profile)


def plugin_of(h: Any) -> Any:
    from adjutant_tasks import tasks_of

    return tasks_of(h.kernel)


async def floor(home: Path, count: int) -> float:
    async with harness(home) as h:
        kv = plugin_of(h).queue.kv
        start = time.perf_counter()
        for i in range(count):
            await kv.put(f"bench/{i}", b"x" * 300)
        return count / (time.perf_counter() - start)


async def serving(home: Path, count: int) -> tuple[float, float]:
    """One producer queueing while the runner serves (as in a chat: the process that
    queues runs the queue): the producer's commits and the runner's share
    transactions. Returns (queued/s, end to end/s: until the last task is done)."""
    from adjutant_hookspecs import event_name
    from adjutant_tasks import Runner, tasks_settings

    async with harness(home) as h:
        plugin = plugin_of(h)
        runner = Runner(h.kernel, plugin.queue, tasks_settings(h.kernel))
        plugin.runner = runner  # `submit` wakes it, as it wakes a chat's runner
        finished = h.kernel.bus.subscribe()
        all_done = anyio.Event()

        async def count_finished() -> None:
            done = 0
            async for env in finished:
                if event_name(type(env.event)) == "task.finished":
                    done += 1
                    if done == count:
                        all_done.set()
                        return

        async with anyio.create_task_group() as tg:
            tg.start_soon(count_finished)
            await tg.start(runner.serve)
            start = time.perf_counter()
            for i in range(count):
                await plugin.submit("bench.noop", {"i": i})  # returns once durable
            queued = time.perf_counter()
            await all_done.wait()
            ran = time.perf_counter()
            tg.cancel_scope.cancel()
        done = sum([1 async for t in plugin.queue.all() if t.status == "done"])
        assert done == count, f"{done} of {count} done"
        return count / (queued - start), count / (ran - start)


async def throughput(home: Path, count: int,
                     producers: int) -> tuple[float, float, float]:
    from adjutant_tasks import Runner, tasks_settings

    async with harness(home) as h:
        plugin = plugin_of(h)

        async def produce(first: int) -> None:
            for i in range(first, count, producers):
                await plugin.submit("bench.noop", {"i": i})  # returns once durable

        start = time.perf_counter()
        async with anyio.create_task_group() as tg:
            for first in range(producers):
                tg.start_soon(produce, first)
        queued = time.perf_counter()
        await Runner(h.kernel, plugin.queue, tasks_settings(h.kernel)).serve(until_idle=True)
        ran = time.perf_counter()
        done = sum([1 async for t in plugin.queue.all() if t.status == "done"])
        assert done == count, f"{done} of {count} done"
        return count / (queued - start), count / (ran - queued), count / (ran - start)


async def child(home: Path, count: int) -> None:
    """Queue ``count`` no-ops behind a long task, run it, wait to be killed."""
    from adjutant_tasks import Runner, tasks_settings

    async with harness(home) as h:
        plugin = plugin_of(h)
        long, _ = await plugin.submit("bench.long", {})
        for i in range(count):
            await plugin.submit("bench.noop", {"i": i}, not_before=time.time() + 3600)
        print(json.dumps({"dir": long.artifacts}), flush=True)
        await Runner(h.kernel, plugin.queue, tasks_settings(h.kernel)).serve()


async def recovery(home: Path) -> tuple[float, int, float, int]:
    from adjutant_tasks import Runner, tasks_settings

    async with harness(home) as h:
        plugin = plugin_of(h)
        runner = Runner(h.kernel, plugin.queue, tasks_settings(h.kernel))
        start = time.perf_counter()
        recovered = await runner.recover()
        recovery_s = time.perf_counter() - start
        open_now = len(await plugin.queue.open_ids())
        # the queued no-ops were due in an hour: make the first due now, and time it
        first = sorted(await plugin.queue.open_ids())[1]
        task = await plugin.queue.get(first)
        task.not_before = time.time()
        await plugin.queue.put(task)
        start = time.perf_counter()
        async with anyio.create_task_group() as tg:
            await tg.start(runner.serve)
            while (await plugin.queue.get(first)).status != "done":  # noqa: ASYNC110
                await anyio.sleep(0.001)
            first_s = time.perf_counter() - start
            tg.cancel_scope.cancel()
        return recovery_s, len(recovered), first_s, open_now


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--tasks", type=int, default=None)
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    opts = parser.parse_args()
    if opts.child:
        anyio.run(child, Path(opts.child[0]), int(opts.child[1]))
        return 0
    count = opts.tasks or (200 if opts.quick else 2000)
    queued_for_kill = 100 if opts.quick else 1000
    base = ROOT / ".cache"
    base.mkdir(exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="bench-tasks-", dir=base))
    try:
        puts = anyio.run(floor, work / "floor", min(count, 1000))
        print(f"durable kv put (LMDB commit, fsync'd): {puts:,.0f}/s (one task on one "
              "resource costs one commit in steady state: its start, which carries the "
              "previous task's end)")
        # The disk's commit rate swings with other load: each figure is printed with
        # the floor measured just before it.
        for producers in (1, 32):
            now = anyio.run(floor, work / f"floor-{producers}", 300)
            q, r, e = anyio.run(throughput, work / f"throughput-{producers}", count,
                                producers)
            met = "met" if e >= GOAL_PER_S else "NOT met"
            print(f"no-op tasks, {count}, queued by {producers} producer(s): queued "
                  f"{q:,.0f}/s, run {r:,.0f}/s, end to end {e:,.0f}/s (goal >= "
                  f"{GOAL_PER_S:.0f}/s: {met}; durable puts just before: {now:,.0f}/s)")
        now = anyio.run(floor, work / "floor-serving", 300)
        q, e = anyio.run(serving, work / "serving", count)
        met = "met" if e >= GOAL_PER_S else "NOT met"
        print(f"no-op tasks, {count}, queued by 1 producer while the runner serves: queued "
              f"{q:,.0f}/s, end to end {e:,.0f}/s (goal >= {GOAL_PER_S:.0f}/s: {met}; "
              f"durable puts just before: {now:,.0f}/s)")
        home = work / "recovery"
        proc = subprocess.Popen([sys.executable, __file__, "--child", str(home),
                                 str(queued_for_kill)], stdout=subprocess.PIPE, text=True)
        assert proc.stdout is not None
        started = Path(json.loads(proc.stdout.readline())["dir"]) / "started"
        while not started.exists():
            time.sleep(0.01)
        proc.send_signal(signal.SIGKILL)
        proc.communicate()
        rec, n, first, open_now = anyio.run(recovery, home)
        print(f"recovery after SIGKILL with {queued_for_kill} queued: {rec * 1000:.1f} ms "
              f"({n} running task resumed, {open_now} open, none lost; goal < "
              f"{GOAL_RECOVERY_S:g} s: {'met' if rec < GOAL_RECOVERY_S else 'NOT met'}); "
              f"first queued task done {first * 1000:.1f} ms after the runner started")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
