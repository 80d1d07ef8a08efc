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

import os
import time
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import anyio.abc
import anyio.to_thread
import msgspec

from ._context import Context, flow_enabled, wait_kinds
from ._events import (
    TaskFinished,
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
                  schedule_id: str | None = None,
                  parent_task: str | None = None) -> tuple[Task, bool]:
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
                schedule_id=schedule_id, parent_task=parent_task,
                artifacts=str(artifact_dir(kernel.home, task_id, now)))
    if settings.broker is not None and name not in _local_only() and parent_task is None \
            and not getattr(cap, "needs_human", False):
        from ._celery import broker_label

        task.handoff = broker_label(settings.broker)
    stored = await queue.add(task)
    if stored.id != task.id:
        return stored, False
    if task.handoff is not None and settings.broker is not None:
        from ._celery import publish

        try:  # else the queue's owner publishes it when it reconciles
            await publish(settings.broker, task, 1)
        except Exception as exc:
            from adjutant import get_logger

            get_logger(plugin="tasks").warning("could not publish the task to Celery; "
                                               "the runner publishes it later",
                                               task_id=task.id, error=repr(exc))
    kernel.bus.publish(TaskQueued(task_id=task.id, capability=name,
                                  not_before=not_before), run_id=parent_run)
    return stored, True


def _local_only() -> frozenset[str]:
    from ._celery import LOCAL_ONLY

    return LOCAL_ONLY


async def apply_request(kernel: Kernel, queue: TaskQueue, task: Task, op: str) -> Task:
    """Cancel or retry ``task`` as the queue's owner (the runner, or a process that
    holds the runner lock because no runner is alive). A running task is not touched
    here: its runner cancels it; a handed-off one is marked cancelled in the Celery
    ledger first (its worker stops it, or never starts it), then cancelled here."""
    if op == "cancel" and task.handoff is not None and task.status in ("queued", "running"):
        from ._celery import mark_cancelled
        from ._settings import tasks_settings

        broker = tasks_settings(kernel).broker
        if broker is not None:
            await mark_cancelled(broker, task)
        task.status = "queued"  # cancelled below like a queued one: a late finish on a
        # worker is never copied back (only open tasks are reconciled)
    if op == "cancel" and task.status in ("queued", "waiting_for_human"):
        task.status, task.error, task.finished_at = "cancelled", "cancelled by the user", \
            time.time()
        task.answer = None
        await queue.put(task)
        if task.waiting_on is not None:  # its nested step's task goes with it
            child = await queue.get(task.waiting_on)
            if child is not None and child.status in ("queued", "waiting_for_human"):
                await apply_request(kernel, queue, child, "cancel")
            elif child is not None and child.status == "running":
                await queue.request(child.id, "cancel")  # its runner stops it
        if task.parent_task is not None:  # a nested step cancelled: its parent goes on
            parent = await queue.get(task.parent_task)  # (and fails fast on it)
            if parent is not None and not parent.finished and parent.waiting_on == task.id:
                parent.waiting_on, parent.status, parent.not_before = None, "queued", \
                    time.time()
                await queue.put(parent)
        kernel.bus.publish(TaskFinished(task_id=task.id, capability=task.capability,
                                        status="cancelled", error=task.error),
                           run_id=task.parent_run)
    elif op == "retry" and task.status in ("failed", "cancelled"):
        task.status, task.error, task.outputs = "queued", None, None
        if task.handoff is None:  # a handed-off task's attempts keep counting: each
            task.attempts = 0     # attempt's message is claimed once (``_celery``)
        task.resumes = 0
        task.progress, task.message, task.finished_at = 0.0, "", None
        task.not_before = time.time()
        await queue.add_existing(task)
        kernel.bus.publish(TaskQueued(task_id=task.id, capability=task.capability),
                           run_id=task.parent_run)
    return task


#: How often a runner prunes the Celery ledger (seconds of its clock).
PRUNE_EVERY_S = 3600.0


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
        #: Handed-off tasks are open (a worker runs them): not idle yet.
        self._handed_open = False
        #: When this runner last pruned the Celery ledger (its clock).
        self._pruned_at = float("-inf")
        self._scopes: dict[str, anyio.CancelScope] = {}
        #: When requests and schedules were last looked at (monotonic), and the
        #: queue's count of changes then.
        self._looked_at = float("-inf")
        self._changes_seen = -1
        #: When the next task known to wait for its time is due (None: none).
        self._due: float | None = None
        self._wake = anyio.Event()
        self.serving = False
        self._copilots: dict[str, Any] = {}
        self._flows_seen: tuple[int, list[dict[str, Any]]] = (-1, [])
        #: The operator runs of this runner's tasks (recent ones): their events never
        #: trigger a flow (a flow on RUN_STARTED would otherwise start itself).
        self._own_runs: dict[str, None] = {}
        #: Awaited with a task that just began to wait for a human (notifications).
        self.on_waiting: list[Callable[[Task], Awaitable[None]]] = []

    def own_run(self, envelope: Any) -> None:
        """Remember a run of this runner's tasks (``on_event`` of their operator runs)."""
        if envelope.run_id and envelope.run_id not in self._own_runs:
            self._own_runs[envelope.run_id] = None
            while len(self._own_runs) > 4096:
                del self._own_runs[next(iter(self._own_runs))]

    def copilot(self, cwd: str | None) -> Any:
        """The operator this runner's tasks call tools through (one per working
        directory; the persisted mode, grants and cages, the same action log)."""
        from adjutant.operator import Copilot

        key = cwd or ""
        if key not in self._copilots:
            self._copilots[key] = Copilot(self.kernel, cwd=cwd) if cwd else Copilot(self.kernel)
        return self._copilots[key]

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
                watcher = anyio.CancelScope()
                events = self.kernel.bus.subscribe()

                async def watch() -> None:
                    with watcher:
                        await self._on_events(events)
                tg.start_soon(watch)
                while True:
                    # Requests and schedules: looked at once per poll, or at once when
                    # this process wrote one (a queue's own writes count its changes);
                    # not on every wake (a task queued, one ended: its dispatch only).
                    # The open index is scanned then too, and when a task it found
                    # comes due; between, the dispatch looks at the tasks this process
                    # stored as queued (another process's are found at the next poll).
                    now_m = time.monotonic()
                    look = now_m - self._looked_at >= self.settings.poll_s or \
                        self.queue.changes != self._changes_seen
                    if look:
                        self._looked_at, self._changes_seen = now_m, self.queue.changes
                        if await self._handle_requests():  # some wait for an attempt's
                            self._looked_at = float("-inf")  # end: look again next time
                        await self._fire_schedules()
                    await self._reconcile()
                    full = look or (self._due is not None and self._due <= self.clock())
                    next_due = await self._dispatch(tg, None if full else
                                                    self.queue.take_queued())
                    now = self.clock()
                    if until_idle and not self._inflight and not self._handed_open and (
                            next_due is None or next_due > now + 1.0):
                        break
                    wait = self.settings.poll_s if next_due is None else \
                        min(self.settings.poll_s, max(0.0, next_due - now))
                    with anyio.move_on_after(wait):
                        await self._wake.wait()
                    self._wake = anyio.Event()
                watcher.cancel()
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
            if task.waiting_on is not None:  # a kill between a child's end and this one
                child = await self.queue.get(task.waiting_on)
                if child is None or child.finished:
                    await self._release(task)
                continue
            if task.status != "running" or task.handoff is not None:
                continue  # (a handed-off task's worker runs it: see ``_celery``)
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

    async def _handle_requests(self) -> bool:
        """Take the requests stored for this queue; True when one must wait for an
        attempt that is still ending (look again soon)."""
        deferred = False
        for task_id, op in await self.queue.requests():
            if op in ("approve", "deny"):
                deferred |= await self._answer_request(task_id, op)
                continue
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
            else:
                deferred = True
        return deferred

    async def _reconcile(self) -> None:
        """Handed-off tasks: their outcome copied back from the broker (``_celery``)."""
        if self.settings.broker is None:
            return
        from ._celery import reconcile

        try:
            await reconcile(self.kernel, self.queue, self.settings)
            self._handed_open = any(task.handoff is not None
                                    for task in await self.queue.open_tasks())
            now = self.clock()
            if now - self._pruned_at >= PRUNE_EVERY_S:
                from ._celery import prune

                self._pruned_at = now
                await prune(self.queue, self.settings, now)
        except Exception as exc:  # a broker down: the local queue goes on
            from adjutant import get_logger

            get_logger(plugin="tasks").warning("could not reconcile with Celery",
                                               error=repr(exc))

    async def _on_events(self, events: Any) -> None:
        """The bus, while the runner serves: answers to waiting tasks (`TaskAnswer`),
        and flows whose trigger is a bus event: one run per event (its ``seq`` is the
        idempotency key), with the event as the flow's input ``event``. Events of
        automation runs themselves never trigger a flow (no loops)."""
        from adjutant_hookspecs import event_name

        from ._events import TaskAnswer

        async for env in events:
            if isinstance(env.event, TaskAnswer):
                await self._bus_answer(env.event)
                continue
            name = event_name(type(env.event))
            if getattr(env.event, "capability", None) == "automation.run" or (
                    env.run_id is not None and env.run_id in self._own_runs):
                continue
            flows = [f for f in self._triggered_flows()
                     if f.get("enabled", True) and (f.get("trigger") or {}).get("event") == name]
            for flow in flows:
                payload = msgspec.to_builtins(env.event)
                try:
                    await enqueue(self.kernel, self.queue, "automation.run",
                                  {"flow": flow["name"], "input": {"event": payload}},
                                  settings=self.settings,
                                  idempotency_key=f"event:{flow['name']}:{env.seq}")
                except (LookupError, ValueError, TypeError):
                    continue
                self.wake()

    def _triggered_flows(self) -> list[dict[str, Any]]:
        """The stored flows with an event trigger (read again when the folder changed:
        a flow is stored by a rename, which changes it)."""
        from ._automations import FlowStore

        store = FlowStore(self.kernel.home)
        try:
            stamp = store.root.stat().st_mtime_ns
        except OSError:
            return []
        if self._flows_seen[0] != stamp:
            self._flows_seen = (stamp, [f for f in store.all()
                                        if (f.get("trigger") or {}).get("event")])
        return self._flows_seen[1]

    async def _bus_answer(self, event: Any) -> None:
        """A frontend's answer on the bus becomes a durable request, taken by the loop
        like one from ``adjutant tasks approve`` (also while the task's attempt is
        still ending)."""
        if event.action not in ("grant", "deny") or "/" in event.task_id:
            return
        await self.queue.request(event.task_id, "approve" if event.action == "grant"
                                 else "deny", digest=event.digest, by=event.by)
        self.wake()

    async def _answer_request(self, task_id: str, op: str) -> bool:
        """True when the task's attempt is still ending (answered at the next look)."""
        from ._human import AnswerRefusedError, answer

        if task_id in self._inflight:  # its attempt is still ending: at the next look
            return True
        request = await self.queue.request_of(task_id)
        task = await self.queue.get(task_id)
        try:
            if request is None or task is None:
                return False
            await answer(self.kernel, self.queue, task, "grant" if op == "approve" else "deny",
                         digest=request.digest, by=request.by or "user")
        except AnswerRefusedError:  # logged and published by `answer`
            return False
        finally:
            # cleared once the answer is stored or refused (and logged): whoever asked
            # reads the outcome when the request is gone (a crash before this: the
            # request comes again and meets a task no longer waiting, refused)
            await self.queue.clear_request(task_id)
        self.wake()
        return False

    async def _fire_schedules(self) -> None:
        now = self.clock()
        for schedule in await self.queue.schedules():
            if not schedule.enabled or schedule.next_at > now:
                continue
            if schedule.capability == "automation.run" and not flow_enabled(
                    self.kernel.home, schedule.inputs.get("flow")):  # skipped, not queued
                schedule.next_at = cron_next(schedule.cron, now)
                await self.queue.put_schedule(schedule)
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

    async def _dispatch(self, tg: anyio.abc.TaskGroup,
                        only: list[str] | None = None) -> float | None:
        """Start a worker for each due task (of the open index, or of ``only``); return
        when the next one is due."""
        now = self.clock()
        next_due: float | None = None
        if only is None:
            self.queue.take_queued()  # the scan sees them all
            ids = await self.queue.open_ids()
        else:
            ids, next_due = only, self._due
        for task_id in ids:
            if task_id in self._inflight:
                if only is not None:  # stored as queued by its attempt (a retry's
                    self.queue.hint(task_id)  # back-off): looked at again next time
                continue
            task = await self.queue.get(task_id)
            if task is None or task.status != "queued" or task.waiting_on is not None \
                    or task.handoff is not None:  # a Celery worker runs it
                continue
            if task.not_before > now:
                next_due = task.not_before if next_due is None else min(next_due,
                                                                        task.not_before)
                continue
            self._inflight.add(task_id)
            tg.start_soon(self._work, task_id)
        self._due = next_due
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
        if task.answer is None:
            task.question = None  # answered (kept for `show` until the next attempt)
        # Durable before the capability runs: a crash from here on finds it running
        # (its timeout then counts); the commit also carries the previous task's end.
        # Its artifact folder is made meanwhile, in a worker thread (a mkdir costs as
        # much as the rest of a no-op task on a busy disk).
        made: list[BaseException] = []

        def make_folder() -> None:
            try:
                Path(task.artifacts).mkdir(parents=True, exist_ok=True, mode=0o700)
            except OSError as exc:
                made.append(exc)

        async with anyio.create_task_group() as both:
            both.start_soon(anyio.to_thread.run_sync, make_folder)
            await self.queue.put(task)
        self.kernel.bus.publish(TaskStarted(task_id=task.id, capability=task.capability,
                                            attempt=task.attempts, resumed=resumed),
                                run_id=task.parent_run)
        context = Context(self, task)
        waiting = wait_kinds()
        scope = anyio.CancelScope()
        self._scopes[task.id] = scope
        error: str | None = None
        retry = False
        outputs: Any = None
        try:
            if made:
                raise made[0]
            with scope, anyio.fail_after(task.timeout_s):
                outputs = await cap.run(context)
        except TimeoutError:
            error, retry = f"timed out after {task.timeout_s:g} s", bool(cap.retryable)
        except waiting as waits:
            self._scopes.pop(task.id, None)
            await self._wait(task, waits)
            return
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
        task.answer = None
        await self.queue.put(task, wait=False)
        self.kernel.bus.publish(TaskFinished(task_id=task.id, capability=task.capability,
                                             status=status, error=error,
                                             artifacts=task.artifacts or None),
                                run_id=task.parent_run)
        if task.parent_task is not None:  # the nested step ended: its parent goes on
            parent = await self.queue.get(task.parent_task)
            if parent is not None and parent.waiting_on == task.id:
                await self._release(parent)

    # -- waiting ---------------------------------------------------------------------------

    async def _wait(self, task: Task, waits: Exception) -> None:
        """The attempt stopped to wait: for a human (the question kept, in the log, on
        the bus) or for a nested step's task (this one is held until it finishes)."""
        from ._automations import _Later
        from ._events import TaskWaiting
        from ._human import TaskAskedRecord, WaitingForHuman, WaitingOnChild, action_log

        if isinstance(waits, _Later):  # a delay: queued again for then, durably
            task.status, task.not_before = "queued", waits.at
            task.message = f"waits until {time.strftime('%H:%M:%S', time.localtime(waits.at))}"
            await self.queue.put(task)
            self.wake()
            return
        if isinstance(waits, WaitingOnChild):
            child = await self.queue.get(waits.child)
            if child is None or child.finished:  # it ended already: go on at once
                task.status, task.not_before, task.waiting_on = "queued", self.clock(), None
                await self.queue.put(task)
                self.wake()
                return
            task.waiting_on = child.id
            task.status = "waiting_for_human" if child.status == "waiting_for_human" \
                else "queued"
            task.message = f"waits for its nested step's task {child.id}"
            await self.queue.put(task)
            if task.status == "waiting_for_human":
                self.kernel.bus.publish(TaskWaiting(task_id=task.id, capability=task.capability,
                                                    waiting_on=child.id),
                                        run_id=task.parent_run)
                await self._hold_parents(task)
            self.wake()
            return
        assert isinstance(waits, WaitingForHuman)
        question = waits.question
        # In the log before the task is stored as waiting: a restart finds both.
        await action_log(self.kernel).record(TaskAskedRecord(
            run_id=question.run_id, task_id=task.id, step=question.step, tool=question.tool,
            args=question.args, preview=question.preview, digest=question.digest))
        task.status, task.question, task.answer = "waiting_for_human", question, None
        task.message = (f"{waits.stale}; " if waits.stale else "") + \
            f"waits for your approval: {question.summary or question.tool}"
        await self.queue.put(task)
        self.kernel.bus.publish(TaskWaiting(task_id=task.id, capability=task.capability,
                                            question=msgspec.to_builtins(question)),
                                run_id=task.parent_run)
        await self._hold_parents(task)
        await self._notify_waiting(task, question.summary or question.tool)
        for hook in self.on_waiting:
            await hook(task)

    async def _notify_waiting(self, task: Task, what: str) -> None:
        """A task waits for the user: say so (bus always; desktop where there is one).
        A notification never fails the task."""
        from ._plugin import tasks_of

        try:
            await tasks_of(self.kernel).notify(
                {"title": "Adjutant waits for your approval",
                 "body": f"task {task.id} ({task.capability}): {what}\n"
                         f"adjutant tasks approve {task.id}",
                 "priority": "normal", "key": f"approval-{task.id}"},
                source=f"task {task.id}")
        except Exception as exc:
            from adjutant import get_logger

            get_logger(plugin="tasks").warning("notification failed", error=repr(exc))

    async def _hold_parents(self, task: Task) -> None:
        """Every task above a waiting one waits for a human too (never released
        before the nested step has finished)."""
        from ._events import TaskWaiting

        seen = {task.id}
        while task.parent_task is not None and task.parent_task not in seen:
            parent = await self.queue.get(task.parent_task)
            if parent is None or parent.finished or parent.waiting_on != task.id:
                return
            seen.add(parent.id)
            if parent.status != "waiting_for_human":
                parent.status = "waiting_for_human"
                parent.message = f"waits: its nested step's task {task.id} waits for you"
                await self.queue.put(parent)
                self.kernel.bus.publish(TaskWaiting(task_id=parent.id,
                                                    capability=parent.capability,
                                                    waiting_on=task.id),
                                        run_id=parent.parent_run)
            task = parent

    async def _release(self, parent: Task) -> None:
        parent.waiting_on, parent.status = None, "queued"
        parent.not_before = self.clock()
        parent.message = "its nested step finished; it goes on"
        await self.queue.put(parent)
        self.wake()


async def add_schedule(kernel: Kernel, queue: TaskQueue, name: str, inputs: Mapping[str, Any],
                       cron: str, *, now: float, parent_run: str | None = None) -> Schedule:
    """Store a cron schedule for capability ``name`` (validated first)."""
    capability(kernel, name)
    plain = msgspec.json.decode(canonical_json(dict(inputs)))
    schedule = Schedule(id="s" + new_id(now), capability=name, inputs=plain, cron=cron,
                        next_at=cron_next(cron, now), created_at=now, parent_run=parent_run)
    await queue.put_schedule(schedule)
    return schedule

