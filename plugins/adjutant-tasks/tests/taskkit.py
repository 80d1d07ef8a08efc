"""Task capabilities the tests queue, and a kernel with a real LMDB store.

The capabilities do real work on real files in the task's artifact folder (each
step appends a line to ``steps.log``), so a test reads what ran, and how often, from
disk, also after the process that ran it was killed."""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator, Callable, Mapping
from pathlib import Path
from typing import Any

import anyio

import adjutant_lmdb
from adjutant.testing import Harness
from adjutant_hookspecs import TaskContext, TaskFailed, hookimpl
from adjutant_tasks import TasksPlugin


class Steps:
    """``test.steps``: ``n`` steps of ``delay`` seconds; each appends its number to
    ``steps.log`` and saves the next step as the checkpoint."""

    name, resource, timeout_s, retryable = "test.steps", "cpu", 60.0, False

    async def run(self, context: TaskContext) -> Mapping[str, Any]:
        n, delay = int(context.inputs["n"]), float(context.inputs.get("delay", 0.0))
        start = await context.load_checkpoint() or 0
        log = context.artifacts / "steps.log"
        for i in range(start, n):
            await anyio.sleep(delay)
            with log.open("a") as f:
                f.write(f"{i}\n")
            await context.save_checkpoint(i + 1)
            await context.progress((i + 1) / n, f"step {i + 1} of {n}")
        return {"steps": n, "resumed_at": start, "attempt": context.attempt}


class Flaky:
    """``test.flaky``: fails (retryable) the first ``fail`` attempts, then succeeds."""

    name, resource, timeout_s, retryable = "test.flaky", "cpu", 10.0, False

    async def run(self, context: TaskContext) -> Mapping[str, Any]:
        if context.attempt <= int(context.inputs["fail"]):
            raise TaskFailed(f"flaked on attempt {context.attempt}", retryable=True)
        return {"attempt": context.attempt}


class Broken:
    """``test.broken``: always fails, saying it cannot be retried."""

    name, resource, timeout_s, retryable = "test.broken", "cpu", 10.0, True

    async def run(self, context: TaskContext) -> Mapping[str, Any]:
        raise TaskFailed("the input file is not a PDF", retryable=False)


class Hang:
    """``test.hang``: never ends by itself (timeout 0.3 s, retryable)."""

    name, resource, timeout_s, retryable = "test.hang", "other", 0.3, True

    async def run(self, context: TaskContext) -> Mapping[str, Any]:
        await anyio.sleep_forever()
        raise AssertionError("unreachable")


class Sleepy:
    """``test.sleepy``: writes ``started`` in its folder, then sleeps 30 s (its 1 s
    timeout would end it; the tests kill its process first)."""

    name, resource, timeout_s, retryable = "test.sleepy", "cpu", 1.0, False

    async def run(self, context: TaskContext) -> Mapping[str, Any]:
        (context.artifacts / "started").write_text("")
        await anyio.sleep(30)
        return {}


class Probe:
    """On resource ``model``: records how many run at once."""

    resource, timeout_s, retryable = "model", 10.0, False

    def __init__(self, name: str, shared: dict[str, int]) -> None:
        self.name, self.shared = name, shared

    async def run(self, context: TaskContext) -> Mapping[str, Any]:
        self.shared["now"] += 1
        self.shared["max"] = max(self.shared["max"], self.shared["now"])
        await anyio.sleep(0.05)
        self.shared["now"] -= 1
        return {}


class Noop:
    """``test.noop``: does nothing (the benchmark's task)."""

    name, resource, timeout_s, retryable = "test.noop", "cpu", 10.0, False

    async def run(self, context: TaskContext) -> Mapping[str, Any]:
        return {}


class Count:
    """``test.count``: appends its attempt to ``runs.log`` in its folder (how often it ran)."""

    name, resource, timeout_s, retryable = "test.count", "cpu", 10.0, False

    async def run(self, context: TaskContext) -> Mapping[str, Any]:
        with (context.artifacts / "runs.log").open("a") as f:
            f.write(f"{context.attempt}\n")
        return {"attempt": context.attempt, "echo": context.inputs.get("echo")}


class SlowOnce:
    """``test.slow-once``: writes ``started-<attempt>`` in its folder; the first attempt
    then sleeps 30 s (the tests kill its worker), a later one ends at once."""

    name, resource, timeout_s, retryable = "test.slow-once", "cpu", 60.0, False

    async def run(self, context: TaskContext) -> Mapping[str, Any]:
        (context.artifacts / f"started-{context.attempt}").write_text("")
        if context.attempt == 1:
            await anyio.sleep(30)
        return {"attempt": context.attempt}


class Publish:
    """``test.publish``: another plugin's capability that needs the user, written
    against `adjutant_hookspecs.TaskContext` alone: it prepares (``prepared`` in its
    folder), asks "Publish PATH to the team?" (``confirm``), then writes PATH through
    the pipeline (``call_tool``, a write the write-gate asks about). Each question ends
    the attempt until answered; a checkpoint after each step keeps what was done."""

    name, resource, timeout_s, retryable = "test.publish", "cpu", 60.0, False
    needs_human = True

    async def run(self, context: TaskContext) -> Mapping[str, Any]:
        path, cwd = str(context.inputs["path"]), str(context.inputs["cwd"])
        done = await context.load_checkpoint() or 0
        if done < 1:
            with (context.artifacts / "prepared").open("a") as f:
                f.write(f"{context.attempt}\n")
            await context.save_checkpoint(done := 1)
        if done < 2:
            if not await context.confirm("go", "publish", f"Publish {path} to the team?"):
                raise TaskFailed("the user said no")
            await context.save_checkpoint(done := 2)
        result = await context.call_tool("write", "fs.write",
                                         {"path": path, "content": "published\n"}, cwd=cwd)
        if result.status != "ok":
            raise TaskFailed(f"fs.write: {result.status}: {result.stderr}")
        return {"published": path}


class Nest:
    """``test.nest``: another plugin's capability that runs a nested task through
    `adjutant_hookspecs.TaskContext.run_child` alone: it prepares (``prepared`` in its
    folder), runs ``test.publish`` (which asks the user twice) as its child and waits
    for it, then writes ``after`` with the child's outputs. A child that ends without
    them (the user said no) is this code's decision: it returns the refusal."""

    name, resource, timeout_s, retryable = "test.nest", "nest", 60.0, False
    needs_human = True

    async def run(self, context: TaskContext) -> Mapping[str, Any]:
        from adjutant_hookspecs import ChildTaskFailed

        if await context.load_checkpoint() is None:
            with (context.artifacts / "prepared").open("a") as f:
                f.write(f"{context.attempt}\n")
            await context.save_checkpoint("prepared")
        try:
            outputs = await context.run_child("publish", "test.publish",
                                              dict(context.inputs))
        except ChildTaskFailed as exc:
            return {"child": exc.task_id, "refused": exc.status, "why": exc.error}
        (context.artifacts / "after").write_text(json.dumps(dict(outputs)))
        return {"child_outputs": dict(outputs)}


class Capabilities:
    """A plugin registering the test capabilities."""

    def __init__(self) -> None:
        self.shared = {"now": 0, "max": 0}

    @hookimpl
    def register_task_capabilities(self, register: Callable[[Any], None]) -> None:
        for cap in (Steps(), Flaky(), Broken(), Hang(), Noop(), Sleepy(), Count(), SlowOnce(),
                    Ticks(), Publish(), Nest(),
                    Probe("test.probe-a", self.shared), Probe("test.probe-b", self.shared)):
            register(cap)


def settings_profile(**tasks: Any) -> Any:
    from adjutant import ModelPreset, Profile
    from adjutant.testing import ScriptedProvider

    return Profile(model=ModelPreset(provider=ScriptedProvider().name),
                   plugins={"tasks": {"retry_backoff_s": 0.0, **tasks}})


@contextlib.asynccontextmanager
async def kernel_at(home: Path, *extra: object, mode: str | None = None,
                    approver: Any = None,
                    **tasks: Any) -> AsyncIterator[tuple[Harness, TasksPlugin]]:
    """A started kernel on ``home`` with LMDB, adjutant-tasks, the test capabilities
    and ``extra`` plugins (``tasks``: the ``plugins.tasks`` settings; the retry back-off
    is 0 and the in-process runner off unless given)."""
    plugin = TasksPlugin()
    tasks.setdefault("run_in_process", False)
    async with Harness(adjutant_lmdb, plugin, Capabilities(), *extra, home=home,
                       mode=mode, approver=approver,
                       profile=settings_profile(**tasks)) as h:
        yield h, plugin


class Ticks:
    """``test.ticks``: ``n`` ticks of ``delay`` seconds; each appends its number to
    ``ticks.log`` in its folder, reports progress and saves a checkpoint (a long task a
    cancel must stop between ticks)."""

    name, resource, timeout_s, retryable = "test.ticks", "cpu", 120.0, False

    async def run(self, context: TaskContext) -> Mapping[str, Any]:
        n, delay = int(context.inputs["n"]), float(context.inputs["delay"])
        log = context.artifacts / "ticks.log"
        for i in range(n):
            with log.open("a") as f:
                f.write(f"{i}\n")
            await context.progress((i + 1) / n, f"tick {i + 1} of {n}")
            await context.save_checkpoint(i + 1)
            await anyio.sleep(delay)
        return {"ticks": n}
