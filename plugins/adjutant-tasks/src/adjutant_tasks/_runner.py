"""`TaskRunner`: the workers that run queued tasks, and recovery after a crash.

One process at a time runs tasks for a data home: the one holding the runner lock
(``<home>/tasks/runner.lock``, an ``flock`` the system releases when the process ends,
even by SIGKILL). At start it recovers: each task found ``running`` was interrupted
(its process ended); one whose attempt is older than its timeout fails with that
reason, the others are queued again and resume from their last checkpoint.

Workers are anyio tasks: one task at a time per resource (``model``, ``cpu``), each
attempt under its capability's timeout and its own cancel scope. Failures that are
retryable are tried again, with a doubling back-off, up to ``max_attempts``.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

import anyio
import msgspec

from ._events import TaskFinished, TaskProgress, TaskQueued, TaskRecovered, TaskStarted
from ._model import Task, input_hash

if TYPE_CHECKING:
    from adjutant_hookspecs import Event, Kernel, TaskCapability

    from ._queue import TaskQueue
    from ._settings import TasksSettings

__all__ = ["Recovery", "TaskContextImpl", "TaskRunner"]


class Recovery(msgspec.Struct, frozen=True, kw_only=True):
    """What start-up recovery found: tasks resumed, failed, and still queued."""

    resumed: list[str]
    failed: list[str]
    queued: int
    seconds: float


class TaskContextImpl:
    """The `adjutant_hookspecs.TaskContext` a capability's ``run`` gets."""

    def __init__(self, runner: TaskRunner, task: Task) -> None:
        self._runner = runner
        self.task_id = task.id
        self.inputs: Mapping[str, Any] = task.inputs
        self.attempt = task.attempts
        self.artifacts = Path(task.artifacts)
        self.kernel: Kernel = runner.kernel

    async def progress(self, fraction: float, message: str = "") -> None:
        await self._runner.report_progress(self.task_id, fraction, message)

    async def save_checkpoint(self, state: Any) -> None:
        await self._runner.queue.save_checkpoint(self.task_id, state)

    async def load_checkpoint(self) -> Any:
        return await self._runner.queue.load_checkpoint(self.task_id)


class TaskRunner:
    """Runs the tasks of one queue while `serve` runs (see the module's docstring)."""

    def __init__(self, kernel: Kernel, queue: TaskQueue, settings: TasksSettings, *,
                 clock: Callable[[], float] = time.time) -> None:
        self.kernel = kernel
        self.queue = queue
        self.settings = settings
        self.clock = clock
        self._lock_file: BinaryIO | None = None
        self._wake = anyio.Event()
        self._busy: set[str] = set()  # resources held by a running task
        self._scopes: dict[str, anyio.CancelScope] = {}  # running task id -> its scope
        self._pending: dict[str, Task] = {}  # queued tasks known, by id
        self._idle = anyio.Event()
        self.recovery: Recovery | None = None

    # -- the lock -----------------------------------------------------------------------

    def acquire(self) -> bool:
        """Take the runner lock of the data home (False: another process holds it)."""
        import fcntl

        where = self.queue.home / "tasks"
        where.mkdir(parents=True, exist_ok=True)
        handle = open(where / "runner.lock", "ab")  # noqa: SIM115 (held until release)
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            handle.close()
            return False
        handle.truncate(0)
        handle.write(f"{os.getpid()}\n".encode())
        handle.flush()
        self._lock_file = handle
        return True

    def release(self) -> None:
        handle, self._lock_file = self._lock_file, None
        if handle is not None:
            handle.close()  # closing the file releases the flock

    @property
    def active(self) -> bool:
        """True while this runner holds the lock (it runs the tasks)."""
        return self._lock_file is not None

    # -- recovery -----------------------------------------------------------------------

    async def recover(self) -> Recovery:
        """Mark the tasks an ended process left running: queued again (they resume from
        their checkpoint), or failed when their attempt is older than their timeout."""
        started = time.perf_counter()
        now = self.clock()
        resumed: list[str] = []
        failed: list[str] = []
        self._pending.clear()
        for task in await self.queue.all():
            if task.status == "running":
                age = now - (task.started_at or task.created_at)
                if age > task.timeout_s:
                    reason = (f"interrupted: its process ended while it ran, {age:.0f} s "
                              f"ago, longer than its timeout ({task.timeout_s:g} s)")
                    task = await self.queue.save(msgspec.structs.replace(
                        task, status="failed", error=reason, finished_at=now,
                        message="interrupted"))
                    failed.append(task.id)
                    self._publish(TaskRecovered(task_id=task.id, capability=task.capability,
                                                outcome="failed", reason=reason), task)
                    continue
                reason = "interrupted: its process ended while it ran; resumed from its " \
                         "last checkpoint"
                task = await self.queue.save(msgspec.structs.replace(
                    task, status="queued", resumed=task.resumed + 1, run_at=now,
                    cancel_requested=False, message=reason))
                resumed.append(task.id)
                self._publish(TaskRecovered(task_id=task.id, capability=task.capability,
                                            outcome="resumed", reason=reason), task)
            if task.status == "queued":
                self._pending[task.id] = task
        self.recovery = Recovery(resumed=resumed, failed=failed, queued=len(self._pending),
                                 seconds=time.perf_counter() - started)
        return self.recovery

    # -- queueing -----------------------------------------------------------------------

    async def submit(self, capability: str, inputs: Mapping[str, Any], *,
                     run_at: float | None = None, parent_run: str | None = None,
                     idempotency_key: str | None = None) -> tuple[Task, bool]:
        """Queue a registered capability (see `TaskQueue.enqueue`)."""
        cap = self.capability(capability)
        task, created = await self.queue.enqueue(
            cap, inputs, run_at=run_at, parent_run=parent_run,
            idempotency_key=idempotency_key, max_attempts=self.settings.max_attempts)
        if created:
            self._publish(TaskQueued(task_id=task.id, capability=task.capability,
                                     run_at=task.run_at), task)
            self.notify(task)
        return task, created

    def capability(self, name: str) -> TaskCapability:
        cap = self.kernel.task_capabilities.get(name)
        if cap is None:
            known = ", ".join(sorted(self.kernel.task_capabilities)) or "none"
            raise LookupError(f"no task capability {name!r} (registered: {known})")
        return cap

    def notify(self, task: Task) -> None:
        """A task was queued or asked to cancel in this process: act on it now."""
        if task.status == "queued":
            self._pending[task.id] = task
        if task.cancel_requested and (scope := self._scopes.get(task.id)) is not None:
            scope.cancel()
        self._wake.set()

    async def cancel(self, task_id: str) -> Task:
        task = await self.queue.cancel(task_id)
        self._pending.pop(task_id, None)
        self.notify(task)
        if task.status == "cancelled":
            self._publish(TaskFinished(task_id=task.id, capability=task.capability,
                                       status="cancelled"), task)
        return task

    async def retry(self, task_id: str) -> Task:
        task = await self.queue.retry(task_id)
        self._publish(TaskQueued(task_id=task.id, capability=task.capability,
                                 run_at=task.run_at), task)
        self.notify(task)
        return task

    async def report_progress(self, task_id: str, fraction: float, message: str) -> None:
        fraction = min(1.0, max(0.0, float(fraction)))
        task = await self.queue.get(task_id)
        if task is None or task.status != "running":
            return
        task = await self.queue.save(msgspec.structs.replace(task, progress=fraction,
                                                             message=message))
        self._publish(TaskProgress(task_id=task_id, progress=fraction, message=message), task)

    # -- the workers --------------------------------------------------------------------

    async def serve(self, *, until_idle: bool = False) -> None:
        """Run queued tasks until cancelled (``until_idle``: until none is queued or
        running that is due or could run here). Needs the lock (`acquire`)."""
        if not self.active:
            raise RuntimeError("the task runner does not hold the runner lock")
        async with anyio.create_task_group() as tg:
            tg.start_soon(self._poll)
            while True:
                self._wake = anyio.Event()
                now = self.clock()
                next_due: float | None = None
                for task in sorted(self._pending.values(), key=lambda t: (t.run_at, t.id)):
                    if task.capability not in self.kernel.task_capabilities:
                        continue  # stays queued until a plugin offers it again
                    if task.run_at > now:
                        next_due = task.run_at if next_due is None else min(next_due,
                                                                            task.run_at)
                        continue
                    if task.resource in self._busy:
                        continue
                    self._busy.add(task.resource)
                    del self._pending[task.id]
                    tg.start_soon(self._run, task)
                if until_idle and not self._busy and next_due is None and not any(
                        t.capability in self.kernel.task_capabilities
                        for t in self._pending.values()):
                    tg.cancel_scope.cancel()
                    return
                wait = self.settings.poll_s if next_due is None else max(
                    0.0, min(self.settings.poll_s, next_due - now))
                with anyio.move_on_after(wait):
                    await self._wake.wait()

    async def _poll(self) -> None:
        """Pick up what other processes did: tasks queued, cancels asked."""
        while True:
            await anyio.sleep(self.settings.poll_s)
            changed = False
            for task in await self.queue.all():
                if task.status == "queued" and task.id not in self._pending \
                        and task.id not in self._scopes:
                    self._pending[task.id] = task
                    changed = True
                elif task.status != "queued" and task.id in self._pending:
                    del self._pending[task.id]  # cancelled elsewhere
                    changed = True
                elif task.cancel_requested and (scope := self._scopes.get(task.id)):
                    scope.cancel()
            if changed:
                self._wake.set()

    async def _run(self, task: Task) -> None:
        try:
            await self._attempt(task)
        finally:
            self._busy.discard(task.resource)
            self._wake.set()

    async def _attempt(self, queued: Task) -> None:
        task = await self.queue.get(queued.id)
        if task is None or task.status != "queued":
            return  # cancelled meanwhile
        cap = self.kernel.task_capabilities.get(task.capability)
        if cap is None:
            self._pending[task.id] = task
            return
        if input_hash(task.inputs) != task.input_hash:
            await self._finish(task, "failed", error="refused: its inputs changed while "
                               "it was queued (their hash no longer matches the one taken "
                               "when it was queued); it was not run")
            return
        task = await self.queue.save(msgspec.structs.replace(
            task, status="running", attempts=task.attempts + 1, started_at=self.clock(),
            error=None))
        self._publish(TaskStarted(task_id=task.id, capability=task.capability,
                                  attempt=task.attempts, resumed=task.resumed > 0), task)
        context = TaskContextImpl(self, task)
        scope = anyio.CancelScope()
        self._scopes[task.id] = scope
        outputs: Mapping[str, Any] | None = None
        failure: BaseException | None = None
        try:
            with scope:
                try:
                    with anyio.fail_after(task.timeout_s):
                        outputs = await cap.run(context)
                except Exception as exc:  # the capability's failure, or its timeout
                    failure = exc
        except anyio.get_cancelled_exc_class():
            # the runner is stopping: the task goes back to the queue and resumes from
            # its checkpoint when a runner starts again
            with anyio.CancelScope(shield=True):
                current = await self.queue.get(task.id) or task
                await self.queue.save(msgspec.structs.replace(
                    current, status="queued", run_at=self.clock(),
                    message="interrupted by shutdown; resumes from its last checkpoint"))
            raise
        finally:
            self._scopes.pop(task.id, None)
        if scope.cancelled_caught:
            await self._finish(task, "cancelled", message="cancelled while running")
            return
        if failure is None:
            if outputs is not None and not isinstance(outputs, Mapping):
                failure = TypeError(f"capability {cap.name!r} returned "
                                    f"{type(outputs).__name__}, not a mapping of outputs")
            else:
                try:
                    plain = msgspec.json.decode(msgspec.json.encode(dict(outputs or {})))
                except (TypeError, msgspec.EncodeError) as exc:
                    failure = TypeError(f"capability {cap.name!r}'s outputs are not JSON "
                                        f"values: {exc}")
                else:
                    await self._finish(task, "done", outputs=plain)
                    return
        await self._failed(task, cap, failure)

    async def _failed(self, task: Task, cap: TaskCapability, failure: BaseException) -> None:
        from adjutant_hookspecs import TaskFailed

        if isinstance(failure, TimeoutError):
            reason = f"timed out after {task.timeout_s:g} s"
            retryable = bool(cap.retryable)
        elif isinstance(failure, TaskFailed):
            reason, retryable = str(failure), failure.retryable
        else:
            reason = f"{type(failure).__name__}: {failure}"
            retryable = bool(cap.retryable)
        current = await self.queue.get(task.id) or task
        if current.cancel_requested:
            await self._finish(current, "cancelled", message="cancelled while running")
            return
        if retryable and current.attempts < current.max_attempts:
            delay = self.settings.retry_backoff_s * 2 ** (current.attempts - 1)
            again = await self.queue.save(msgspec.structs.replace(
                current, status="queued", error=reason, run_at=self.clock() + delay,
                message=f"attempt {current.attempts} failed; retrying in {delay:g} s"))
            self._publish(TaskQueued(task_id=again.id, capability=again.capability,
                                     run_at=again.run_at, attempt=again.attempts), again)
            self._pending[again.id] = again
            return
        if retryable:
            reason = f"{reason} (after {current.attempts} attempts)"
        await self._finish(current, "failed", error=reason)

    async def _finish(self, task: Task, status: str, *, outputs: dict[str, Any] | None = None,
                      error: str | None = None, message: str = "") -> None:
        current = await self.queue.get(task.id) or task
        done = msgspec.structs.replace(
            current, status=status, outputs=outputs, error=error,
            finished_at=self.clock(), progress=1.0 if status == "done" else current.progress,
            message=message or status, cancel_requested=False)
        await self.queue.save(done)
        self._publish(TaskFinished(task_id=done.id, capability=done.capability, status=status,
                                   outputs=outputs, error=error), done)

    def _publish(self, event: Event, task: Task) -> None:
        with contextlib.suppress(Exception):  # the bus never fails a task
            self.kernel.bus.publish(event, run_id=task.parent_run)
