"""The runner: workers that take tasks off the durable queue.

One runner per data home at a time: it holds an exclusive ``flock`` on
``<home>/tasks/runner.lock`` (the kernel releases it when the process dies, SIGKILL
included), so only one process changes queued tasks. On start it recovers what the
previous runner left running: each such task is queued again to resume from its last
checkpoint, or failed with the reason when it is older than its timeout (or was
resumed too often). Then it runs due tasks, one at a time per resource (a lock per
resource name), each attempt under its timeout and cancellable, retrying failures that
may be retried up to the bound with a doubling back-off, and queues the tasks of cron
schedules when they come due.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import anyio
import anyio.abc
import msgspec

from ._events import (
    TaskFinished,
    TaskProgress,
    TaskQueued,
    TaskRecovered,
    TaskRetrying,
    TaskStarted,
)
from ._queue import Schedule, Status, Task, TaskQueue, canonical_json, input_hash, new_id
from ._settings import TasksSettings

if TYPE_CHECKING:
    from adjutant_hookspecs import Kernel, TaskCapability

__all__ = ["Runner", "RunnerBusyError", "RunnerLock", "UnknownCapabilityError",
           "apply_request", "cron_next", "enqueue", "runner_pid"]

_PROGRESS_PERSIST_S = 0.25


class UnknownCapabilityError(LookupError):
    """No registered task capability by that name."""


class RunnerBusyError(RuntimeError):
    """Another process runs this data home's queue."""


def lock_path(home: Path) -> Path:
    return home / "tasks" / "runner.lock"


class RunnerLock:
    """An exclusive, non-blocking ``flock`` on ``<home>/tasks/runner.lock``."""

    def __init__(self, home: Path) -> None:
        self.path = lock_path(home)
        self._fd: int | None = None

    def try_acquire(self) -> bool:
        import fcntl

        if self._fd is not None:
            return True
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        os.ftruncate(fd, 0)
        os.write(fd, str(os.getpid()).encode())
        self._fd = fd
        return True

    def release(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)  # closing the descriptor releases the lock


def runner_pid(home: Path) -> int | None:
    """The pid of the process running this home's queue (None: no runner)."""
    probe = RunnerLock(home)
    if probe.try_acquire():
        probe.release()
        return None
    try:
        return int(probe.path.read_text().strip() or 0) or None
    except (OSError, ValueError):
        return None


def cron_next(cron: str, after: float) -> float:
    """The first time the cron expression matches after ``after`` (local time)."""
    from datetime import datetime

    from croniter import croniter

    start = datetime.fromtimestamp(after).astimezone()
    return float(croniter(cron, start).get_next(float))


def artifact_dir(home: Path, task_id: str, created: float) -> Path:
    day = time.strftime("%Y-%m-%d", time.localtime(created))
    return home / "runs" / day / "copilot" / task_id


def capability(kernel: Kernel, name: str) -> TaskCapability:
    found = kernel.task_capabilities.get(name)
    if found is None:
        known = ", ".join(sorted(kernel.task_capabilities)) or "none"
        raise UnknownCapabilityError(f"no task capability {name!r} (registered: {known})")
    return found


async def enqueue(kernel: Kernel, queue: TaskQueue, name: str, inputs: Mapping[str, Any], *,
                  settings: TasksSettings, not_before: float | None = None,
                  parent_run: str | None = None, idempotency_key: str | None = None,
                  schedule_id: str | None = None) -> tuple[Task, bool]:
    """Queue capability ``name`` with ``inputs``; returns the task and whether it is
    new (False: a task with ``idempotency_key`` was queued before, and is returned)."""
    cap = capability(kernel, name)
    if not isinstance(inputs, Mapping):
        raise TypeError(f"a task's inputs are an object, got {type(inputs).__name__}")
    try:
        plain = msgspec.json.decode(canonical_json(dict(inputs)))
    except (TypeError, ValueError) as exc:
        raise ValueError(f"a task's inputs must be JSON values: {exc}") from None
    now = time.time()
    task_id = new_id(now)
    task = Task(id=task_id, capability=name, inputs=plain, input_hash=input_hash(plain),
                created_at=now, updated_at=now,
                not_before=now if not_before is None else not_before,
                parent_run=parent_run, idempotency_key=idempotency_key,
                max_attempts=settings.max_attempts, timeout_s=float(cap.timeout_s),
                schedule_id=schedule_id,
                artifacts=str(artifact_dir(kernel.home, task_id, now)))
    stored = await queue.add(task)
    if stored.id != task.id:
        return stored, False
    kernel.bus.publish(TaskQueued(task_id=task.id, capability=name,
                                  not_before=not_before), run_id=parent_run)
    return stored, True


async def apply_request(kernel: Kernel, queue: TaskQueue, task: Task, op: str) -> Task:
    """Cancel or retry ``task`` as the queue's owner (the runner, or a process that
    holds the runner lock because no runner is alive). A running task is not touched
    here: its runner cancels it."""
    if op == "cancel" and task.status in ("queued", "waiting_for_human"):
        task.status, task.error, task.finished_at = "cancelled", "cancelled by the user", \
            time.time()
        await queue.put(task)
        kernel.bus.publish(TaskFinished(task_id=task.id, capability=task.capability,
                                        status="cancelled", error=task.error),
                           run_id=task.parent_run)
    elif op == "retry" and task.status in ("failed", "cancelled"):
        task.status, task.error, task.outputs = "queued", None, None
        task.attempts = task.resumes = 0
        task.progress, task.message, task.finished_at = 0.0, "", None
        task.not_before = time.time()
        await queue.add_existing(task)
        kernel.bus.publish(TaskQueued(task_id=task.id, capability=task.capability),
                           run_id=task.parent_run)
    return task


class _Context:
    """What a capability's ``run`` sees (`adjutant_hookspecs.TaskContext`)."""

    def __init__(self, runner: Runner, task: Task) -> None:
        self._runner, self._task = runner, task
        self.task_id = task.id
        self.inputs: Mapping[str, Any] = MappingProxyType(msgspec.json.decode(
            canonical_json(task.inputs)))
        self.attempt = task.attempts
        self.artifacts = Path(task.artifacts)
        self.kernel = runner.kernel
        self._persisted = 0.0
        self.saved = task.resumes > 0 or task.attempts > 1  # a checkpoint may exist

    async def progress(self, fraction: float, message: str = "") -> None:
        task = self._task
        fraction = 0.0 if math.isnan(fraction) else min(1.0, max(0.0, float(fraction)))
        task.progress, task.message = fraction, message[:500]
        self.kernel.bus.publish(TaskProgress(task_id=task.id, capability=task.capability,
                                             progress=fraction, message=task.message),
                                run_id=task.parent_run)
        now = time.monotonic()
        if now - self._persisted >= _PROGRESS_PERSIST_S:
            self._persisted = now
            await self._runner.queue.put(task, wait=False)

    async def save_checkpoint(self, state: Any) -> None:
        self.saved = True
        await self._runner.queue.save_checkpoint(self.task_id, state)

    async def load_checkpoint(self) -> Any:
        return await self._runner.queue.load_checkpoint(self.task_id)


class Runner:
    """Runs this data home's queue while `serve` runs (one process at a time).

    :param clock: Wall-clock seconds (tests pass a controlled clock: due times and
        cron schedules follow it).
    """

    def __init__(self, kernel: Kernel, queue: TaskQueue, settings: TasksSettings, *,
                 clock: Callable[[], float] = time.time) -> None:
        self.kernel, self.queue, self.settings, self.clock = kernel, queue, settings, clock
        self.lock = RunnerLock(kernel.home)
        self._locks: dict[str, anyio.Lock] = {}
        self._inflight: set[str] = set()
        self._scopes: dict[str, anyio.CancelScope] = {}
        self._wake = anyio.Event()
        self.serving = False

    def wake(self) -> None:
        """Look at the queue now (something was queued or asked)."""
        self._wake.set()

    async def serve(self, *, until_idle: bool = False,
                    task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED
                    ) -> None:
        """Run the queue until cancelled (``until_idle``: until nothing is running or
        due). Raises `RunnerBusyError` when another process runs it."""
        if not self.lock.try_acquire():
            pid = runner_pid(self.kernel.home)
            raise RunnerBusyError(f"another process (pid {pid}) runs the task queue of "
                                  f"{self.kernel.home}")
        try:
            await self.recover()
            self.serving = True
            task_status.started()
            async with anyio.create_task_group() as tg:
                # Task state changes commit in the background, grouped (the queue's own
                # reads see them at once); the group ends after the last commit.
                self.queue.background = tg
                while True:
                    await self._handle_requests()
                    await self._fire_schedules()
                    next_due = await self._dispatch(tg)
                    now = self.clock()
                    if until_idle and not self._inflight and (
                            next_due is None or next_due > now + 1.0):
                        break
                    wait = self.settings.poll_s if next_due is None else \
                        min(self.settings.poll_s, max(0.0, next_due - now))
                    with anyio.move_on_after(wait):
                        await self._wake.wait()
                    self._wake = anyio.Event()
        finally:
            self.queue.background = None
            self.serving = False
            self.lock.release()

    # -- recovery ------------------------------------------------------------------------

    async def recover(self) -> list[Task]:
        """Tasks a dead runner left running: queued again to resume from their
        checkpoint, or failed with the reason. Returns them."""
        now = self.clock()
        found = []
        for task in await self.queue.open_tasks():
            if task.status != "running":
                continue
            age = now - (task.started_at or task.created_at)
            if age > task.timeout_s:
                reason = (f"interrupted: the process running it stopped, and it started "
                          f"{age:.0f} s ago, more than its timeout ({task.timeout_s:g} s)")
                await self._finish(task, "failed", error=reason)
                outcome = "failed"
            elif task.resumes >= self.settings.max_resumes:
                reason = (f"interrupted {task.resumes + 1} times: the process running it "
                          "stopped each time")
                await self._finish(task, "failed", error=reason)
                outcome = "failed"
            else:
                reason = "the process running it stopped; it resumes from its checkpoint"
                task.status, task.resumes, task.message = "queued", task.resumes + 1, reason
                task.not_before = now
                await self.queue.put(task)
                outcome = "resumed"
            self.kernel.bus.publish(TaskRecovered(task_id=task.id, capability=task.capability,
                                                  outcome=outcome, reason=reason),
                                    run_id=task.parent_run)
            found.append(task)
        return found

    # -- the loop ------------------------------------------------------------------------

    async def _handle_requests(self) -> None:
        for task_id, op in await self.queue.requests():
            if op == "unschedule":  # a schedule's id: only the runner rewrites them
                await self.queue.delete_schedule(task_id)
                await self.queue.clear_request(task_id)
                continue
            if task_id in self._scopes:  # running here: cancel it; the worker clears
                if op == "cancel":
                    self._scopes[task_id].cancel()
                    continue
                await self.queue.clear_request(task_id)
                continue
            task = await self.queue.get(task_id)
            if task is not None and task_id not in self._inflight:
                await apply_request(self.kernel, self.queue, task, op)
                await self.queue.clear_request(task_id)
            elif task is None:
                await self.queue.clear_request(task_id)

    async def _fire_schedules(self) -> None:
        now = self.clock()
        for schedule in await self.queue.schedules():
            if not schedule.enabled or schedule.next_at > now:
                continue
            key = f"schedule:{schedule.id}:{schedule.next_at:.0f}"
            try:
                task, _ = await enqueue(self.kernel, self.queue, schedule.capability,
                                        schedule.inputs, settings=self.settings,
                                        parent_run=schedule.parent_run, idempotency_key=key,
                                        schedule_id=schedule.id)
                schedule.last_task = task.id
            except (LookupError, ValueError, TypeError):  # its capability is gone
                schedule.enabled = False
            schedule.next_at = cron_next(schedule.cron, now)
            await self.queue.put_schedule(schedule)

    async def _dispatch(self, tg: anyio.abc.TaskGroup) -> float | None:
        """Start a worker for each due task; return when the next one is due."""
        now = self.clock()
        next_due: float | None = None
        for task_id in await self.queue.open_ids():
            if task_id in self._inflight:
                continue
            task = await self.queue.get(task_id)
            if task is None or task.status != "queued":
                continue
            if task.not_before > now:
                next_due = task.not_before if next_due is None else min(next_due,
                                                                        task.not_before)
                continue
            self._inflight.add(task_id)
            tg.start_soon(self._work, task_id)
        return next_due

    # -- one task ------------------------------------------------------------------------

    async def _work(self, task_id: str) -> None:
        try:
            task = await self.queue.get(task_id)
            if task is None:
                return
            cap = self.kernel.task_capabilities.get(task.capability)
            if cap is None:
                await self._finish(task, "failed", error=f"no task capability "
                                   f"{task.capability!r} is registered (its plugin is not "
                                   "loaded)")
                return
            async with self._locks.setdefault(cap.resource, anyio.Lock()):
                await self._attempt(task_id, cap)
        finally:
            self._inflight.discard(task_id)
            if not self._inflight:  # the loop looks again (a retry wakes it too)
                self.wake()

    async def _attempt(self, task_id: str, cap: TaskCapability) -> None:
        task = await self.queue.get(task_id)  # as stored now, not as dispatched
        if task is None or task.status != "queued":
            return
        if await self.queue.pending_request(task_id) == "cancel":
            await self.queue.clear_request(task_id)
            await self._finish(task, "cancelled", error="cancelled by the user")
            return
        if input_hash(task.inputs) != task.input_hash:
            await self._finish(task, "failed", error="refused: the task's inputs changed "
                               "after it was queued (their sha256 no longer matches)")
            return
        if task.idempotency_key is not None:
            holder = await self.queue.holder_of(task.idempotency_key)
            if holder is not None and holder != task.id:
                await self._finish(task, "cancelled", error=f"a duplicate of task {holder} "
                                   f"(idempotency key {task.idempotency_key!r})")
                return
        resumed = task.resumes > 0 and task.attempts > 0
        task.status, task.attempts, task.started_at = "running", task.attempts + 1, self.clock()
        task.error = None
        # Durable before the capability runs: a crash from here on finds it running
        # (its timeout then counts); the commit also carries the previous task's end.
        await self.queue.put(task)
        self.kernel.bus.publish(TaskStarted(task_id=task.id, capability=task.capability,
                                            attempt=task.attempts, resumed=resumed),
                                run_id=task.parent_run)
        context = _Context(self, task)
        scope = anyio.CancelScope()
        self._scopes[task.id] = scope
        error: str | None = None
        retry = False
        outputs: Any = None
        try:
            context.artifacts.mkdir(parents=True, exist_ok=True, mode=0o700)
            with scope, anyio.fail_after(task.timeout_s):
                outputs = await cap.run(context)
        except TimeoutError:
            error, retry = f"timed out after {task.timeout_s:g} s", bool(cap.retryable)
        except anyio.get_cancelled_exc_class():
            with anyio.CancelScope(shield=True):  # the runner stops: resume next start
                task.status, task.message = "queued", "stopped with the runner; resumes"
                await self.queue.put(task)
            raise
        except Exception as exc:
            from adjutant_hookspecs import TaskFailed

            error = str(exc) or type(exc).__name__
            retry = exc.retryable if isinstance(exc, TaskFailed) else bool(cap.retryable)
        finally:
            self._scopes.pop(task.id, None)
        if scope.cancelled_caught:
            await self.queue.clear_request(task.id)
            await self._finish(task, "cancelled", error="cancelled by the user")
            return
        if error is None:
            try:
                task.outputs = msgspec.json.decode(canonical_json(dict(outputs or {})))
            except (TypeError, ValueError) as exc:
                await self._finish(task, "failed", error=f"its outputs are not JSON: {exc}")
                return
            task.progress = 1.0
            await self._finish(task, "done")
            if context.saved:
                await self.queue.drop_checkpoint(task.id)
            return
        if retry and task.attempts < task.max_attempts:
            delay = self.settings.retry_backoff_s * 2 ** (task.attempts - 1)
            task.status, task.error = "queued", error
            task.not_before = self.clock() + delay
            await self.queue.put(task, wait=False)
            self.wake()
            self.kernel.bus.publish(TaskRetrying(task_id=task.id, capability=task.capability,
                                                 attempt=task.attempts, error=error,
                                                 not_before=task.not_before),
                                    run_id=task.parent_run)
            return
        if retry:
            error = f"{error} (after {task.attempts} attempts)"
        await self._finish(task, "failed", error=error)

    async def _finish(self, task: Task, status: Status, *, error: str | None = None) -> None:
        task.status = status
        task.error, task.finished_at = error, self.clock()
        await self.queue.put(task, wait=False)
        self.kernel.bus.publish(TaskFinished(task_id=task.id, capability=task.capability,
                                             status=status, error=error,
                                             artifacts=task.artifacts or None),
                                run_id=task.parent_run)


async def add_schedule(kernel: Kernel, queue: TaskQueue, name: str, inputs: Mapping[str, Any],
                       cron: str, *, now: float, parent_run: str | None = None) -> Schedule:
    """Store a cron schedule for capability ``name`` (validated first)."""
    capability(kernel, name)
    plain = msgspec.json.decode(canonical_json(dict(inputs)))
    schedule = Schedule(id="s" + new_id(now), capability=name, inputs=plain, cron=cron,
                        next_at=cron_next(cron, now), created_at=now, parent_run=parent_run)
    await queue.put_schedule(schedule)
    return schedule

