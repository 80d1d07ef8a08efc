"""The Celery hand-off: queued tasks published to a broker, run by ``adjutant tasks
worker`` on this or another machine, their outcome copied back into the queue.

The design (the simplest one that stays correct with two machines):

- The queue stays where it is (the profile's store) and keeps one writer, its owner
  (the process holding the runner lock). A worker never writes it: it may be on a
  machine that cannot see it.
- Beside the broker's queue lives a **ledger**, a small key/value space the workers
  and the owner share: a folder next to the filesystem broker's messages
  (``<folder>/ledger``), or keys under ``adjutant:`` in the Redis broker's database.
  It holds, per task and attempt, the attempt's state (``published``, ``running``, ``done``,
  ``failed``, ``refused``; progress, outputs, error), the claims, the checkpoints and
  the workers' heartbeats.
- ``enqueue`` marks a task ``handoff`` and publishes one message per attempt: the
  task's id, capability, inputs and their sha256, its idempotency key and the attempt
  number. The local runner never runs a handed-off task.
- A worker validates the message (its shape, the inputs' sha256 recomputed, the
  capability registered on the worker), then **claims** ``<task>.<attempt>`` with an
  atomic create (``O_EXCL`` file, Redis ``SET NX``): the same message delivered twice
  (``acks_late`` redelivery past the visibility timeout, a re-publish) runs once; the
  second delivery is acknowledged and counted as a duplicate. A task's idempotency key
  is claimed too: another task with the same key is refused as a duplicate.
- The owner **reconciles** (`reconcile`): the runner each time it looks at the queue,
  and ``adjutant tasks list|show|watch`` when no runner is alive. It copies the
  ledger's state into the task (so ``tasks show`` shows it), re-publishes a retry
  after its back-off, and when a task is ``running`` on a worker whose heartbeat is
  older than ``stale_after`` times ``heartbeat_s`` it publishes the next attempt (a
  resume; failed with the reason past ``max_resumes``): a killed worker never loses a
  task silently.

``import celery`` happens only here, in the publish and worker paths.
"""

from __future__ import annotations

import json
import os
import re
import socket
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal, Protocol

import anyio
import anyio.from_thread
import anyio.lowlevel
import anyio.to_thread
import msgspec

from ._queue import Task, TaskQueue, canonical_json, input_hash

if TYPE_CHECKING:
    from adjutant_hookspecs import Kernel

    from ._settings import TasksSettings

__all__ = ["LOCAL_ONLY", "FsLedger", "Ledger", "Message", "RedisLedger", "WorkerState",
           "broker_label", "ledger_for", "mark_cancelled", "not_consuming", "prune", "publish",
           "reconcile", "run_worker", "waiting_since", "workers"]

#: Capabilities that stay on the machine that queued them: they call tools through
#: this machine's operator pipeline and wait for its user's approvals.
LOCAL_ONLY = frozenset({"automation.run", "tool.call"})

CELERY_TASK = "adjutant.tasks.run"
QUEUE_NAME = "adjutant.tasks"
_ID = re.compile(r"^[0-9a-f]{20}$")


def _log() -> Any:
    from adjutant import get_logger

    return get_logger(plugin="tasks")


# -- messages ------------------------------------------------------------------------------


class Message(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """What one attempt's Celery message carries (strictly validated by the worker)."""

    v: Literal[1]
    task_id: str
    capability: str
    inputs: dict[str, Any]
    input_hash: str
    attempt: int
    timeout_s: float
    created_at: float
    idempotency_key: str | None = None


class State(msgspec.Struct, kw_only=True):
    """One task's last attempt, as the ledger has it."""

    status: Literal["published", "running", "done", "failed", "refused", "cancelled"]
    attempt: int
    at: float
    worker: str | None = None
    progress: float = 0.0
    message: str = ""
    outputs: dict[str, Any] | None = None
    error: str | None = None
    retryable: bool = False
    started_at: float | None = None


class WorkerState(msgspec.Struct, kw_only=True):
    """A worker's heartbeat."""

    name: str
    host: str
    pid: int
    at: float
    started_at: float
    interval_s: float
    done: int = 0
    failed: int = 0
    duplicates: int = 0
    refused: int = 0
    cancelled: int = 0
    current: str | None = None
    #: Since when it has run nothing (None: it runs a task).
    idle_since: float | None = None
    consuming: bool = True
    #: When its consumer last took a message from the broker (None: not yet): the
    #: proof that it consumes, beside the heartbeat's proof that it lives.
    consumed_at: float | None = None


_message_decoder = msgspec.json.Decoder(Message)
_state_decoder = msgspec.json.Decoder(State)
_worker_decoder = msgspec.json.Decoder(WorkerState)
_encoder = msgspec.json.Encoder()


# -- the ledger ----------------------------------------------------------------------------


class Ledger(Protocol):
    """Keys are ``/``-separated words ([A-Za-z0-9._:-]); values bytes. Blocking."""

    def claim(self, key: str, value: bytes) -> bool: ...
    def put(self, key: str, value: bytes) -> None: ...
    def get(self, key: str) -> bytes | None: ...
    def scan(self, prefix: str) -> dict[str, bytes]: ...
    def delete(self, keys: list[str]) -> None: ...


_KEY = re.compile(r"^[A-Za-z0-9._:-]+(/[A-Za-z0-9._:-]+)*$")


def _checked(key: str) -> str:
    if not _KEY.match(key) or ".." in key:
        raise ValueError(f"not a ledger key: {key!r}")
    return key


class FsLedger:
    """A folder: one file per key, written by rename, claimed by ``O_EXCL``."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def _path(self, key: str) -> Path:
        return self.root / _checked(key)

    def claim(self, key: str, value: bytes) -> bool:
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        except FileExistsError:
            return False
        try:
            os.write(fd, value)
            os.fsync(fd)
        finally:
            os.close(fd)
        return True

    def put(self, key: str, value: bytes) -> None:
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        tmp.write_bytes(value)
        os.replace(tmp, path)

    def get(self, key: str) -> bytes | None:
        try:
            return self._path(key).read_bytes()
        except FileNotFoundError:
            return None

    def scan(self, prefix: str) -> dict[str, bytes]:
        folder = self._path(prefix.rstrip("/"))
        found: dict[str, bytes] = {}
        try:
            names = os.listdir(folder)
        except FileNotFoundError:
            return found
        for name in names:
            if name.startswith("."):
                continue
            try:
                found[f"{prefix.rstrip('/')}/{name}"] = (folder / name).read_bytes()
            except (FileNotFoundError, IsADirectoryError):
                continue
        return found


    def delete(self, keys: list[str]) -> None:
        for key in keys:
            self._path(key).unlink(missing_ok=True)


class RedisLedger:
    """Keys under ``adjutant:`` in the broker's Redis database."""

    def __init__(self, url: str) -> None:
        import redis

        self.client: Any = redis.Redis.from_url(url)  # bytes in, bytes out

    def claim(self, key: str, value: bytes) -> bool:
        return bool(self.client.set("adjutant:" + _checked(key), value, nx=True))

    def put(self, key: str, value: bytes) -> None:
        self.client.set("adjutant:" + _checked(key), value)

    def get(self, key: str) -> bytes | None:
        raw = self.client.get("adjutant:" + _checked(key))
        return None if raw is None else bytes(raw)

    def delete(self, keys: list[str]) -> None:
        for start in range(0, len(keys), 500):
            self.client.delete(*("adjutant:" + _checked(k) for k in keys[start:start + 500]))

    def scan(self, prefix: str) -> dict[str, bytes]:
        keys = list(self.client.scan_iter(match="adjutant:" + _checked(prefix.rstrip("/"))
                                          + "/*", count=500))
        if not keys:
            return {}
        values = self.client.mget(keys)
        return {bytes(k).decode()[len("adjutant:"):]: bytes(v)
                for k, v in zip(keys, values, strict=True) if v is not None}


def _fs_folder(broker: str) -> Path:
    return Path(broker[len("filesystem://"):])


_ledgers: dict[str, Ledger] = {}


def ledger_for(broker: str) -> Ledger:
    """The ledger beside ``broker`` (one per process and broker: Redis keeps its pool)."""
    found = _ledgers.get(broker)
    if found is None:
        found = FsLedger(_fs_folder(broker) / "ledger") if broker.startswith(
            "filesystem://") else RedisLedger(broker)
        _ledgers[broker] = found
    return found


def broker_label(broker: str) -> str:
    """The broker without a password (what a task records)."""
    return re.sub(r"://[^@/]*@", "://***@", broker)


# -- Celery --------------------------------------------------------------------------------

_apps: dict[str, Any] = {}
_apps_lock = threading.Lock()


def celery_app(broker: str) -> Any:
    """The Celery app for ``broker`` (one per process and broker)."""
    with _apps_lock:
        if broker in _apps:
            return _apps[broker]
        from celery import Celery

        options: dict[str, Any] = {}
        url = broker
        if broker.startswith("filesystem://"):
            folder = _fs_folder(broker)
            for sub in ("queue", "control", "ledger"):
                (folder / sub).mkdir(parents=True, exist_ok=True, mode=0o700)
            from kombu.transport import TRANSPORT_ALIASES

            # kombu's filesystem transport, its publish made atomic (``_kombu_fs``)
            TRANSPORT_ALIASES.setdefault("adjutantfs", "adjutant_tasks._kombu_fs:Transport")
            url = "adjutantfs://"
            options = {"data_folder_in": str(folder / "queue"),
                       "data_folder_out": str(folder / "queue"),
                       "control_folder": str(folder / "control"),
                       "store_processed": False, "polling_interval": 0.05}
        else:
            # a message not acknowledged within this comes again (then the claim
            # makes it a duplicate); longer than any attempt's timeout
            options = {"visibility_timeout": 4 * 3600, "polling_interval": 0.05}
        app = Celery("adjutant", broker=url, set_as_current=False)
        app.conf.update(
            broker_transport_options=options, task_serializer="json",
            accept_content=["json"], result_backend=None, task_ignore_result=True,
            task_acks_late=True, task_reject_on_worker_lost=True,
            worker_prefetch_multiplier=1, broker_connection_retry_on_startup=True,
            worker_hijack_root_logger=False, worker_redirect_stdouts=False,
            task_default_queue=QUEUE_NAME, worker_send_task_events=False,
            broker_heartbeat=0, enable_utc=True)
        _apps[broker] = app
        return app


def _publish_sync(broker: str, message: Message) -> None:
    ledger = ledger_for(broker)
    key = f"{message.task_id}.{message.attempt}"
    # One state per attempt, created here only if absent: a message published again
    # never hides what a worker already wrote for that attempt.
    ledger.claim(f"state/{key}", _encoder.encode(State(
        status="published", attempt=message.attempt, at=time.time())))
    ledger.put(f"sent/{key}", str(time.time()).encode())
    celery_app(broker).send_task(CELERY_TASK, args=[msgspec.to_builtins(message)],
                                 queue=QUEUE_NAME)


async def publish(broker: str, task: Task, attempt: int) -> None:
    """Publish attempt ``attempt`` of ``task`` (its state ``published`` first)."""
    message = Message(v=1, task_id=task.id, capability=task.capability, inputs=task.inputs,
                      input_hash=task.input_hash, attempt=attempt, timeout_s=task.timeout_s,
                      created_at=task.created_at, idempotency_key=task.idempotency_key)
    await anyio.to_thread.run_sync(_publish_sync, broker, message)


async def publish_message(broker: str, message: Message) -> None:
    """Publish ``message`` as is (tests: the same message delivered twice)."""
    await anyio.to_thread.run_sync(_publish_sync, broker, message)


# -- the owner's side ----------------------------------------------------------------------


def cancelled_attempt(task: Task) -> int:
    """The newest attempt of handed-off ``task`` that a worker may run or be running: a
    running task's (the ledger's), else the one published next or already published."""
    return task.attempts if task.status == "running" else task.attempts + 1


async def mark_cancelled(broker: str, task: Task) -> None:
    """Tell the workers that ``task`` is cancelled up to its current attempt
    (``cancel/<task>`` = that attempt): a worker running it stops at its next await
    (cooperatively: it watches the mark) and one taking it later does not run it. A
    retry publishes a later attempt, which the mark does not cover."""
    ledger = ledger_for(broker)
    attempt = cancelled_attempt(task)

    def put() -> None:
        raw = ledger.get(f"cancel/{task.id}")
        if raw is None or int(raw or b"0") < attempt:
            ledger.put(f"cancel/{task.id}", str(attempt).encode())
    await anyio.to_thread.run_sync(put)


def workers(broker: str) -> list[WorkerState]:
    """Every worker's last heartbeat (blocking)."""
    found = []
    for raw in ledger_for(broker).scan("workers").values():
        try:
            found.append(_worker_decoder.decode(raw))
        except msgspec.ValidationError:
            continue
    return sorted(found, key=lambda w: w.name)


def stopped(worker: WorkerState, settings: TasksSettings, now: float) -> bool:
    """Whether ``worker`` stopped consuming (no heartbeat for ``stale_after`` intervals,
    or it said so)."""
    return not worker.consuming or now - worker.at > settings.stale_after * worker.interval_s


def waiting_since(broker: str) -> float | None:
    """Since when the oldest message still waits in the broker (published, taken by no
    worker; attempts cancelled by the owner left out), None: none waits (blocking)."""
    ledger = ledger_for(broker)
    marks: dict[str, int] = {}
    for key, raw in ledger.scan("cancel").items():
        try:
            marks[key[len("cancel/"):]] = int(raw)
        except ValueError:
            continue
    sent = ledger.scan("sent")
    oldest: float | None = None
    for key, raw in ledger.scan("state").items():
        try:
            state = _state_decoder.decode(raw)
        except msgspec.ValidationError:
            continue
        name = key[len("state/"):]
        if state.status != "published" or state.attempt <= marks.get(name.split(".")[0], 0):
            continue
        try:
            at = max(state.at, float(sent.get(f"sent/{name}", b"0")))
        except ValueError:
            at = state.at
        oldest = at if oldest is None else min(oldest, at)
    return oldest


def not_consuming(worker: WorkerState, settings: TasksSettings, now: float,
                  waiting: float | None) -> str | None:
    """Why ``worker`` has stopped consuming, or None. Its heartbeat proves the process
    lives; consumption is proved by what its consumer took: a worker idle for a whole
    window (``stale_after`` times ``heartbeat_s``) while a message waited in the broker,
    and that took nothing since that message was sent, has stopped consuming though
    it beats (a consumer paused, or stuck inside the broker's client)."""
    if not worker.consuming:
        return "it said so (its consumer ended)"
    age = now - worker.at
    if age > settings.stale_after * worker.interval_s:
        return f"no heartbeat for {age:.1f} s"
    if waiting is None or worker.current is not None or worker.idle_since is None:
        return None
    window = settings.stale_after * worker.interval_s
    idle_for = now - max(waiting, worker.idle_since)
    if idle_for > window and (worker.consumed_at or 0.0) < waiting:
        return (f"idle {idle_for:.1f} s while a message waited in the broker "
                f"({now - waiting:.1f} s); it took nothing since")
    return None


async def reconcile(kernel: Kernel, queue: TaskQueue, settings: TasksSettings) -> int:
    """Copy the ledger into the handed-off open tasks; publish what is due. The caller
    owns the queue (holds the runner lock). Returns how many tasks changed."""
    from ._events import TaskRetrying, TaskStarted

    broker = settings.broker
    if broker is None:
        return 0
    ledger = ledger_for(broker)
    now = time.time()
    tasks = [t for t in await queue.open_tasks() if t.handoff is not None]
    if not tasks:
        return 0
    latest: dict[str, State] = {}
    for key, raw in (await anyio.to_thread.run_sync(ledger.scan, "state")).items():
        try:
            one = _state_decoder.decode(raw)
        except msgspec.ValidationError:
            continue
        task_id = key[len("state/"):].split(".", 1)[0]
        if task_id not in latest or latest[task_id].attempt < one.attempt:
            latest[task_id] = one
    sent = await anyio.to_thread.run_sync(ledger.scan, "sent")
    marks: dict[str, int] = {}
    for key, raw in (await anyio.to_thread.run_sync(ledger.scan, "cancel")).items():
        try:
            marks[key[len("cancel/"):]] = int(raw)
        except ValueError:
            continue
    beats = {w.name: w for w in await anyio.to_thread.run_sync(workers, broker)}
    changed = 0
    for task in tasks:
        state = latest.get(task.id)
        if state is not None and state.attempt <= marks.get(task.id, 0) \
                and state.status != "cancelled":
            # an attempt cancelled by the owner (then retried): whatever it did after
            # the cancel (a late finish, a message still waiting) is not applied
            state = msgspec.structs.replace(state, status="cancelled", outputs=None)
        if state is None or (state.status in ("failed", "refused", "cancelled")
                             and task.status == "queued" and state.attempt <= task.attempts):
            # never published, a retry (after its back-off, or `tasks retry`): publish
            # the next attempt
            if task.status == "queued" and task.not_before <= now and task.waiting_on is None:
                attempt = task.attempts + 1 if state is None else state.attempt + 1
                task.attempts = attempt - 1
                await publish(broker, task, attempt)
                task.message = f"published to {task.handoff} (attempt {attempt})"
                await queue.put(task)
                changed += 1
            continue
        if state.status == "published":
            # A worker took the message and died before claiming it (the filesystem
            # transport has no acknowledgements), or the broker lost it: a live worker
            # idle for a whole window while it was waiting would have run it. Publish
            # it again (a duplicate, if any, is refused by its claim).
            window = settings.stale_after * settings.heartbeat_s
            idle = [w for w in beats.values() if not stopped(w, settings, now)
                    and w.idle_since is not None and w.idle_since < now - window]
            try:
                last = max(state.at, float(sent.get(f"sent/{task.id}.{state.attempt}", b"0")))
            except ValueError:
                last = state.at
            if idle and last < now - window and task.status == "queued":
                await publish(broker, task, state.attempt)
                task.message = (f"published again (attempt {state.attempt}): worker "
                                f"{idle[0].name} was idle and did not take it")
                await queue.put(task)
                _log().warning("celery message not taken; published again",
                               task_id=task.id, attempt=state.attempt)
                changed += 1
            continue
        if state.status == "running":
            began = task.status != "running" or task.attempts != state.attempt
            if began:
                task.status, task.attempts = "running", state.attempt
                task.started_at = state.started_at or state.at
                task.error = None
                changed += 1
            task.progress, task.message = state.progress, \
                state.message or f"running on worker {state.worker}"
            beat = beats.get(state.worker or "")
            if beat is None or stopped(beat, settings, now):
                ago = "no heartbeat" if beat is None else \
                    f"last heartbeat {now - beat.at:.1f} s ago"
                reason = f"worker {state.worker} stopped consuming ({ago}) while running it"
                if task.resumes >= settings.max_resumes:
                    await _finish(kernel, queue, task, "failed",
                                  f"{reason}; interrupted {task.resumes + 1} times")
                else:
                    task.resumes += 1
                    task.status, task.not_before = "queued", now
                    await publish(broker, task, state.attempt + 1)
                    task.message = f"{reason}; published again (attempt {state.attempt + 1})"
                    await queue.put(task)
                _log().warning("celery worker stopped consuming", worker=state.worker,
                               task_id=task.id)
                changed += 1
                continue
            await queue.put(task)
            if began:
                kernel.bus.publish(TaskStarted(task_id=task.id, capability=task.capability,
                                               attempt=task.attempts, resumed=task.resumes > 0),
                                   run_id=task.parent_run)
            continue
        if state.status != "done" and task.status == "queued" \
                and state.attempt <= task.attempts:
            continue  # an attempt published again: its state comes
        task.attempts = state.attempt
        task.started_at = state.started_at or task.started_at
        changed += 1
        if state.status == "done":
            task.outputs, task.progress = state.outputs or {}, 1.0
            task.message = f"done on worker {state.worker}"
            await _finish(kernel, queue, task, "done", None)
        elif state.status == "refused":
            await _finish(kernel, queue, task, "failed",
                          f"refused by worker {state.worker}: {state.error}")
        elif state.status == "cancelled":  # (the owner cancels first: a mark left alone)
            await _finish(kernel, queue, task, "cancelled",
                          state.error or f"cancelled on worker {state.worker}")
        elif state.retryable and state.attempt < task.max_attempts:
            task.status, task.error = "queued", state.error
            task.not_before = now + settings.retry_backoff_s * 2 ** (state.attempt - 1)
            task.message = f"failed on worker {state.worker}; retried"
            await queue.put(task)
            kernel.bus.publish(TaskRetrying(task_id=task.id, capability=task.capability,
                                            attempt=state.attempt, error=state.error or "",
                                            not_before=task.not_before),
                               run_id=task.parent_run)
        else:
            error = state.error or "failed"
            if state.retryable:
                error = f"{error} (after {state.attempt} attempts)"
            await _finish(kernel, queue, task, "failed", f"{error} (worker {state.worker})")
    return changed


async def _finish(kernel: Kernel, queue: TaskQueue, task: Task,
                  status: Literal["done", "failed", "cancelled"], error: str | None) -> None:
    from ._events import TaskFinished

    task.status, task.error, task.finished_at = status, error, time.time()
    await queue.put(task)
    kernel.bus.publish(TaskFinished(task_id=task.id, capability=task.capability, status=status,
                                    error=error, artifacts=task.artifacts or None),
                       run_id=task.parent_run)


async def prune(queue: TaskQueue, settings: TasksSettings, now: float) -> int:
    """Remove from the ledger what no one needs any more; the number of keys removed.
    The caller owns the queue.

    - The entries of a handed-off task this queue holds as finished for longer than
      ``ledger_retention_s`` (its attempts' states, sent times, claims, checkpoint,
      cancel mark and idempotency claim). The retention is longer than the broker's
      visibility timeout, so a message delivered late still meets its claim. Tasks
      queued by another owner on the same broker are that owner's to prune.
    - The heartbeats of workers silent for longer than the retention.
    """
    broker = settings.broker
    if broker is None:
        return 0
    ledger = ledger_for(broker)
    cutoff = now - settings.ledger_retention_s
    states = await anyio.to_thread.run_sync(ledger.scan, "state")
    ids = sorted({key[len("state/"):].split(".", 1)[0] for key in states})
    gone: list[str] = []
    idem: list[tuple[str, str]] = []
    for task_id in ids:
        task = await queue.get(task_id)
        if task is None or task.handoff is None or not task.finished \
                or (task.finished_at or now) > cutoff:
            continue
        gone.append(task_id)
        if task.idempotency_key is not None:
            import hashlib

            idem.append((f"idem/{hashlib.sha256(task.idempotency_key.encode()).hexdigest()}",
                         task_id))
    beats = await anyio.to_thread.run_sync(ledger.scan, "workers")

    def remove() -> int:
        keys: list[str] = []
        if gone:
            wanted = set(gone)
            for space in ("state", "sent", "claim"):
                keys += [k for k in ledger.scan(space)
                         if k.split("/", 1)[1].split(".", 1)[0] in wanted]
            keys += [f"{space}/{task_id}" for task_id in gone for space in ("ckpt", "cancel")]
            keys += [key for key, holder in idem if ledger.get(key) == holder.encode()]
        for key, raw in beats.items():
            try:
                if _worker_decoder.decode(raw).at < cutoff:
                    keys.append(key)
            except msgspec.ValidationError:
                continue
        ledger.delete(keys)
        return len(keys)
    removed = await anyio.to_thread.run_sync(remove)
    if removed:
        _log().info("celery ledger pruned", tasks=len(gone), keys=removed)
    return removed


async def reconcile_if_owner(kernel: Kernel, queue: TaskQueue, settings: TasksSettings) -> None:
    """Reconcile when no runner is alive (this process takes the lock a moment); a live
    runner reconciles by itself. Broker errors are reported, never fatal here."""
    from ._runner import RunnerLock

    if settings.broker is None:
        return
    lock = RunnerLock(kernel.home)
    if not lock.try_acquire():
        return
    try:
        await reconcile(kernel, queue, settings)
    except Exception as exc:
        _log().warning("could not read the Celery ledger", error=repr(exc))
    finally:
        lock.release()


# -- the worker's side ---------------------------------------------------------------------


#: How often a worker running a task looks for its cancel mark (seconds).
CANCEL_POLL_S = 0.2


class _Cancelled(Exception):
    """The attempt was cancelled by the owner while it ran."""


class WorkerContext:
    """`TaskContext` on a worker: progress and checkpoints in the ledger; artifacts under
    this machine's data home."""

    def __init__(self, kernel: Kernel, ledger: Ledger, message: Message, worker: str,
                 started_at: float) -> None:
        from ._runner import artifact_dir

        self.kernel, self._ledger, self._message = kernel, ledger, message
        self.task_id = message.task_id
        self.inputs: Mapping[str, Any] = MappingProxyType(msgspec.json.decode(
            canonical_json(message.inputs)))
        self.attempt = message.attempt
        self.artifacts = artifact_dir(kernel.home, message.task_id, message.created_at)
        self._worker, self._started = worker, started_at
        self._persisted = 0.0

    async def progress(self, fraction: float, message: str = "") -> None:
        now = time.monotonic()
        if now - self._persisted < 0.25 and fraction < 1.0:
            return
        self._persisted = now
        fraction = 0.0 if fraction != fraction else min(1.0, max(0.0, float(fraction)))
        state = State(status="running", attempt=self.attempt, at=time.time(),
                      worker=self._worker, progress=fraction, message=message[:500],
                      started_at=self._started)
        await anyio.to_thread.run_sync(self._ledger.put,
                                       f"state/{self.task_id}.{self.attempt}",
                                       _encoder.encode(state))

    async def save_checkpoint(self, state: Any) -> None:
        await anyio.to_thread.run_sync(self._ledger.put, f"ckpt/{self.task_id}",
                                       canonical_json(state))

    async def load_checkpoint(self) -> Any:
        raw = await anyio.to_thread.run_sync(self._ledger.get, f"ckpt/{self.task_id}")
        return None if raw is None else json.loads(raw)

    async def call_tool(self, step: str, tool: str, args: Mapping[str, Any], *,
                        cwd: str | None = None) -> Any:
        """Refused: tool calls go through the pipeline of the machine whose user
        approves them, never a worker's (a capability that calls tools declares
        ``needs_human`` and is not handed off)."""
        from adjutant_hookspecs import TaskFailed

        raise TaskFailed(f"step {step}: a handed-off task cannot call a tool ({tool}); "
                         "declare needs_human on the capability so it runs where it "
                         "was queued", retryable=False)

    async def confirm(self, step: str, what: str, question: str) -> bool:
        """Refused: no user to ask on a worker (see `call_tool`)."""
        from adjutant_hookspecs import TaskFailed

        raise TaskFailed(f"step {step}: a handed-off task cannot wait for a human ({what}); "
                         "declare needs_human on the capability so it runs where it "
                         "was queued", retryable=False)

    async def run_child(self, step: str, capability: str,
                        inputs: Mapping[str, Any]) -> Mapping[str, Any]:
        """Refused: a nested task belongs to the queue of the machine that queued its
        parent (its approvals are that user's); see `call_tool`."""
        from adjutant_hookspecs import TaskFailed

        raise TaskFailed(f"step {step}: a handed-off task cannot run a nested task "
                         f"({capability}); declare needs_human on the capability so it "
                         "runs where it was queued", retryable=False)


class Worker:
    """Runs the messages a Celery consumer thread hands it on this process's event loop,
    through the same checks as the local runner."""

    def __init__(self, kernel: Kernel, settings: TasksSettings, name: str) -> None:
        assert settings.broker is not None
        self.kernel, self.settings, self.broker = kernel, settings, settings.broker
        self.ledger = ledger_for(settings.broker)
        now = time.time()
        self.state = WorkerState(name=name, host=socket.gethostname(), pid=os.getpid(),
                                 at=now, started_at=now, idle_since=now,
                                 interval_s=settings.heartbeat_s)

    def beat(self) -> None:
        self.state.at = time.time()
        self.ledger.put(f"workers/{self.state.name}", _encoder.encode(self.state))

    def _put_state(self, task_id: str, state: State) -> None:
        self.ledger.put(f"state/{task_id}.{state.attempt}", _encoder.encode(state))

    async def _cancelled(self, message: Message) -> bool:
        raw = await anyio.to_thread.run_sync(self.ledger.get, f"cancel/{message.task_id}")
        try:
            return raw is not None and int(raw) >= message.attempt
        except ValueError:  # not a mark this plugin wrote: cancelled, to be safe
            return True

    async def _watch_cancel(self, message: Message, stop: anyio.CancelScope) -> None:
        """Cancel ``stop`` once the owner marks this attempt cancelled (the capability
        stops at its next await: cooperative, like the local runner's cancel)."""
        # a ledger to poll: no event to await
        while not await self._cancelled(message):  # noqa: ASYNC110
            await anyio.sleep(CANCEL_POLL_S)
        _log().info("celery task cancelled while it ran", worker=self.state.name,
                    task_id=message.task_id, attempt=message.attempt)
        stop.cancel()

    async def handle(self, payload: Any) -> str:
        """One delivery: ``ran``, ``duplicate`` or ``refused`` (logged)."""
        log = _log()
        name = self.state.name
        try:
            message = _message_decoder.decode(msgspec.json.encode(payload))
            if not _ID.match(message.task_id):
                raise ValueError(f"not a task id: {message.task_id!r}")
            if message.attempt < 1:
                raise ValueError("attempt < 1")
        except (msgspec.ValidationError, msgspec.EncodeError, ValueError, TypeError) as exc:
            self.state.refused += 1
            log.error("celery message refused: not a valid task message", worker=name,
                      error=str(exc))
            return "refused"
        refusal: str | None = None
        cap = self.kernel.task_capabilities.get(message.capability)
        if input_hash(message.inputs) != message.input_hash:
            refusal = ("the task's inputs changed after it was queued (their sha256 no "
                       "longer matches)")
        elif message.capability in LOCAL_ONLY or getattr(cap, "needs_human", False):
            refusal = f"capability {message.capability!r} runs only where it was queued"
        elif cap is None:
            refusal = f"no task capability {message.capability!r} is registered here"
        claim = f"claim/{message.task_id}.{message.attempt}"
        if not await anyio.to_thread.run_sync(self.ledger.claim, claim, name.encode()):
            self.state.duplicates += 1
            log.info("celery message delivered again: already claimed, not run", worker=name,
                     task_id=message.task_id, attempt=message.attempt)
            return "duplicate"
        if refusal is None and message.idempotency_key is not None:
            import hashlib

            key = f"idem/{hashlib.sha256(message.idempotency_key.encode()).hexdigest()}"
            if not await anyio.to_thread.run_sync(self.ledger.claim, key,
                                                  message.task_id.encode()):
                holder = (await anyio.to_thread.run_sync(self.ledger.get, key) or b"").decode()
                if holder != message.task_id:
                    refusal = (f"a duplicate of task {holder} (idempotency key "
                               f"{message.idempotency_key!r})")
        if refusal is not None:
            self.state.refused += 1
            log.error("celery task refused", worker=name, task_id=message.task_id,
                      reason=refusal)
            await anyio.to_thread.run_sync(self._put_state, message.task_id, State(
                status="refused", attempt=message.attempt, at=time.time(), worker=name,
                error=refusal))
            return "refused"
        assert cap is not None
        if await self._cancelled(message):
            log.info("celery task cancelled before it ran", worker=name,
                     task_id=message.task_id, attempt=message.attempt)
            await anyio.to_thread.run_sync(self._put_state, message.task_id, State(
                status="cancelled", attempt=message.attempt, at=time.time(), worker=name,
                error="cancelled by the user before it ran"))
            return "cancelled"
        started = time.time()
        self.state.current, self.state.idle_since = message.task_id, None
        await anyio.to_thread.run_sync(self._put_state, message.task_id, State(
            status="running", attempt=message.attempt, at=started, worker=name,
            started_at=started))
        await anyio.to_thread.run_sync(self.beat)
        context = WorkerContext(self.kernel, self.ledger, message, name, started)
        error: str | None = None
        retryable = False
        outputs: dict[str, Any] = {}
        stop = anyio.CancelScope()
        try:
            context.artifacts.mkdir(parents=True, exist_ok=True, mode=0o700)
            with anyio.fail_after(min(message.timeout_s, cap.timeout_s)):
                failure: Exception | None = None
                async with anyio.create_task_group() as tg:
                    tg.start_soon(self._watch_cancel, message, stop)
                    try:
                        with stop:
                            result = await cap.run(context)
                    except Exception as exc:  # raised below, not wrapped in a group
                        failure = exc
                    tg.cancel_scope.cancel()
            if stop.cancel_called:  # the owner cancelled it: whatever it returned
                raise _Cancelled
            if failure is not None:
                raise failure
            outputs = msgspec.json.decode(canonical_json(dict(result or {})))
        except _Cancelled:
            error = "cancelled by the user while it ran"
        except TimeoutError:
            error, retryable = f"timed out after {message.timeout_s:g} s", bool(cap.retryable)
        except Exception as exc:
            from adjutant_hookspecs import TaskFailed

            error = str(exc) or type(exc).__name__
            retryable = exc.retryable if isinstance(exc, TaskFailed) else bool(cap.retryable)
        finally:
            self.state.current, self.state.idle_since = None, time.time()
        if error is None:
            self.state.done += 1
            state = State(status="done", attempt=message.attempt, at=time.time(), worker=name,
                          progress=1.0, outputs=outputs, started_at=started)
        elif stop.cancel_called:
            self.state.cancelled += 1
            state = State(status="cancelled", attempt=message.attempt, at=time.time(),
                          worker=name, error=error, started_at=started)
        else:
            self.state.failed += 1
            state = State(status="failed", attempt=message.attempt, at=time.time(),
                          worker=name, error=error, retryable=retryable, started_at=started)
        await anyio.to_thread.run_sync(self._put_state, message.task_id, state)
        await anyio.to_thread.run_sync(self.beat)
        log.info("celery task ran", worker=name, task_id=message.task_id,
                 attempt=message.attempt, status=state.status)
        return "ran"


async def run_worker(kernel: Kernel, settings: TasksSettings, name: str | None = None, *,
                     started: Any = None) -> None:
    """Consume the broker's tasks until cancelled: a Celery worker (solo pool) in a
    thread; each message runs on this event loop; heartbeats every ``heartbeat_s``."""
    if settings.broker is None:
        raise LookupError("no broker: set plugins.tasks.broker in the profile "
                          "(filesystem:///a/folder or redis://host:port/db)")
    name = name or f"worker-{socket.gethostname()}-{os.getpid()}"
    worker = Worker(kernel, settings, name)
    app = celery_app(settings.broker)
    token = anyio.lowlevel.current_token()

    @app.task(name=CELERY_TASK, bind=True, acks_late=True)  # type: ignore[untyped-decorator]
    def run_task(self: Any, payload: Any) -> str:
        worker.state.consumed_at = time.time()  # its consumer took a message: it consumes
        return str(anyio.from_thread.run(worker.handle, payload, token=token))

    controller = app.WorkController(pool_cls="solo", concurrency=1,
                                    hostname=f"{name}@{socket.gethostname()}",
                                    without_heartbeat=True, without_mingle=True,
                                    without_gossip=True, queues=[QUEUE_NAME],
                                    loglevel="WARNING")
    await anyio.to_thread.run_sync(worker.beat)

    def consume() -> None:
        try:
            controller.start()
        except BaseException as exc:  # reported; the heartbeat then says so
            _log().error("celery worker stopped", worker=name, error=repr(exc))

    thread = threading.Thread(target=consume, name=f"celery-{name}", daemon=True)
    thread.start()
    _log().info("celery worker consuming", worker=name, broker=broker_label(settings.broker))
    if started is not None:
        started()
    stop = threading.Event()

    def beats() -> None:
        # in a thread of its own: a capability that holds the event loop a while does
        # not make a live worker look stopped (its task would be published again)
        while not stop.wait(settings.heartbeat_s):
            try:
                worker.beat()
            except Exception as exc:  # the broker away a moment: the next beat
                _log().warning("heartbeat not written", worker=name, error=repr(exc))

    beater = threading.Thread(target=beats, name=f"heartbeat-{name}", daemon=True)
    beater.start()
    try:
        while True:  # until cancelled, or the consumer thread ends
            await anyio.sleep(0.2)
            if not thread.is_alive():
                break
    finally:
        worker.state.consuming = False  # stopped, or the consumer ended: said, not silent
        stop.set()
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(controller.stop)
            await anyio.to_thread.run_sync(beater.join)
            await anyio.to_thread.run_sync(worker.beat)
