"""The durable queue: tasks, schedules and checkpoints in the profile's key/value store.

Keys (all under ``tasks/``):

- ``tasks/t/<id>``: the task (JSON, `Task`);
- ``tasks/open/<id>``: present while the task is not finished (queued, running or
  waiting for a human): what a runner scans, so finished tasks cost nothing;
- ``tasks/key/<idempotency key>``: the id of the task queued with that key;
- ``tasks/ckpt/<id>``: the task's last checkpoint (JSON);
- ``tasks/req/<id>``: a request (cancel, retry) for the runner that owns the queue;
- ``tasks/sched/<id>``: a cron schedule (`Schedule`).

Ids sort by creation time (milliseconds, then randomness), so a scan is in queue order.
Only the process holding the runner lock (`RunnerLock`) changes a task once it is
queued; anyone else asks it with a request, so two processes never race on one task.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import time
from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING, Any, Literal

import msgspec

if TYPE_CHECKING:
    from adjutant_hookspecs import Kernel

__all__ = ["FINISHED", "STATUSES", "Answer", "NoStoreError", "Question", "Request", "Schedule",
           "Status", "Task", "TaskQueue",
           "UnknownTaskError", "canonical_json", "input_hash", "key_value_store", "new_id"]

Status = Literal["queued", "running", "waiting_for_human", "done", "failed", "cancelled"]
STATUSES: tuple[str, ...] = ("queued", "running", "waiting_for_human", "done", "failed",
                             "cancelled")
FINISHED = frozenset({"done", "failed", "cancelled"})

_T, _OPEN, _KEY, _CKPT, _REQ, _SCHED = ("tasks/t/", "tasks/open/", "tasks/key/",
                                        "tasks/ckpt/", "tasks/req/", "tasks/sched/")


class NoStoreError(LookupError):
    """No durable key/value store to keep the queue in."""


class UnknownTaskError(LookupError):
    """No task (or several) with the id given."""


class Question(msgspec.Struct, kw_only=True):
    """What a task waits for a human to answer: one step's exact confirmation packet
    (tool, arguments, preview) and its digest, which the answer is bound to."""

    #: The step of the task that asks (a flow's step id, ``call`` for one tool call).
    step: str
    tool: str
    args: dict[str, Any]
    preview: str | None
    summary: str = ""
    level: str = "write"
    reasons: list[str] = msgspec.field(default_factory=list)
    #: sha256 of the canonical JSON of ``[tool, args, preview]``.
    digest: str
    #: The operator run in which the step was checked and asked.
    run_id: str
    asked_at: float


class Answer(msgspec.Struct, kw_only=True):
    """The user's answer to a `Question`, bound to the step and digest it was given for."""

    action: Literal["grant", "deny"]
    step: str
    digest: str
    by: str
    at: float


class Task(msgspec.Struct, kw_only=True):
    """One piece of queued work and everything known about it."""

    id: str
    capability: str
    inputs: dict[str, Any]
    #: sha256 of the inputs' canonical JSON when queued; checked before every attempt.
    input_hash: str
    status: Status = "queued"
    progress: float = 0.0
    message: str = ""
    outputs: dict[str, Any] | None = None
    error: str | None = None
    created_at: float
    updated_at: float
    #: Not to start before this time (a task queued for later, a retry's back-off).
    not_before: float
    started_at: float | None = None
    finished_at: float | None = None
    #: The run that queued it (its events carry this run id).
    parent_run: str | None = None
    idempotency_key: str | None = None
    attempts: int = 0
    max_attempts: int = 1
    #: Seconds one attempt may take (the capability's, when queued).
    timeout_s: float = 3600.0
    #: Times it was resumed after the process running it died.
    resumes: int = 0
    #: The schedule that queued it, if any.
    schedule_id: str | None = None
    #: ``<home>/runs/YYYY-MM-DD/copilot/<id>/``
    artifacts: str = ""
    #: The task that queued this one as a nested step (it waits for this one).
    parent_task: str | None = None
    #: A nested step's task this one waits for (it does not run before that finishes).
    waiting_on: str | None = None
    #: While ``waiting_for_human``: the approval asked (kept after, for ``show``).
    question: Question | None = None
    #: The answer given to ``question``, used by the next attempt.
    answer: Answer | None = None
    #: Handed to Celery (the broker, without credentials): a worker runs it, and the
    #: queue's owner copies its status back from the broker's ledger (``_celery``).
    handoff: str | None = None

    @property
    def finished(self) -> bool:
        return self.status in FINISHED


class Schedule(msgspec.Struct, kw_only=True):
    """A capability queued with the same inputs on a cron schedule."""

    id: str
    capability: str
    inputs: dict[str, Any]
    cron: str
    #: When it queues its next task (Unix seconds).
    next_at: float
    created_at: float
    parent_run: str | None = None
    enabled: bool = True
    last_task: str | None = None


Op = Literal["cancel", "retry", "unschedule", "approve", "deny"]


class Request(msgspec.Struct, kw_only=True):
    op: Op
    at: float
    #: approve/deny: the digest of the question the user saw, and who answered.
    digest: str | None = None
    by: str | None = None


def canonical_json(value: Any) -> bytes:
    """JSON with sorted keys and no spaces: the same value, the same bytes."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False).encode()


def input_hash(inputs: Mapping[str, Any]) -> str:
    return hashlib.sha256(canonical_json(dict(inputs))).hexdigest()


def new_id(now: float | None = None) -> str:
    """Sortable by creation: 12 hex digits of milliseconds, 8 of randomness."""
    ms = int((time.time() if now is None else now) * 1000)
    return f"{ms:012x}{secrets.token_hex(4)}"


def key_value_store(kernel: Kernel) -> Any:
    """The key/value store the profile names (``stores.kv``), else the only durable one
    (the same choice the operator makes for its own state)."""
    wanted = kernel.profile.stores.get("kv")
    named = {key.split(":", 1)[1]: obj for key, obj in kernel.stores.items()
             if key.startswith("kv:")}
    if wanted is not None:
        if wanted not in named:
            raise NoStoreError(f"the profile names kv store {wanted!r}, which is not "
                               f"registered (registered: {', '.join(named) or 'none'})")
        return named[wanted]
    durable = [obj for obj in named.values() if getattr(obj, "durable", True)]
    if len(durable) == 1:
        return durable[0]
    if len(durable) > 1:
        raise NoStoreError(f"several kv stores are registered ({', '.join(named)}): name "
                           "one in the profile's \"stores\"")
    if named:
        return next(iter(named.values()))
    raise NoStoreError("no key/value store is registered: install adjutant-lmdb (the "
                       "task queue lives in the profile's store)")


#: How long a write made with ``wait=False`` waits for a commit to share (seconds).
WRITE_BEHIND_S = 0.005
#: How many times a commit lets other ready writers run first (group commit).
JOIN_YIELDS = 4

_task_decoder = msgspec.json.Decoder(Task)
_sched_decoder = msgspec.json.Decoder(Schedule)
_req_decoder = msgspec.json.Decoder(Request)
_encoder = msgspec.json.Encoder()


class _Batch:
    def __init__(self) -> None:
        import anyio

        self.items: list[tuple[str, bytes | None]] = []
        self.committed = anyio.Event()
        self.error: BaseException | None = None


class TaskQueue:
    """Tasks, schedules and checkpoints in ``kv`` (a `KeyValueStore`).

    Writes are grouped (group commit): where the store has ``put_many`` (LMDB does),
    the writes of concurrent callers go in one transaction, one fsync. A caller
    awaits its write's commit, unless it passes ``wait=False`` while `background`
    is a task group (the runner's): then the commit happens in the background, and
    this queue's own reads see the write at once (an overlay of what is not
    committed yet)."""

    def __init__(self, kv: Any) -> None:
        self.kv = kv
        self._many = getattr(kv, "put_many", None)
        #: Where background commits run (the runner sets it while it serves).
        self.background: Any = None
        self._pending: dict[str, bytes | None] = {}
        self._batch = _Batch()
        self._flushing = False
        #: Set to commit what is written behind now (None: nothing is waiting).
        self._behind: Any = None
        #: Counts the requests and schedules written through this queue: a runner in
        #: this process looks at them at once when it changed (other processes' at
        #: its next poll).
        self.changes = 0
        #: Ids of tasks stored as ``queued`` through this queue while a runner serves
        #: in this process, since it last took them (`take_queued`): what its dispatch
        #: looks at between full scans.
        self._queued_here: set[str] = set()

    # -- storage -------------------------------------------------------------------------

    async def _write(self, items: list[tuple[str, bytes | None]], *, wait: bool = True) -> None:
        if self._many is None:  # a store without batches: one call each, in order
            for key, value in items:
                if value is None:
                    await self.kv.delete(key)
                else:
                    await self.kv.put(key, value)
            return
        batch = self._batch
        batch.items.extend(items)
        self._pending.update(items)
        if wait or self.background is None:
            if self._behind is not None:  # written-behind items go in this commit
                self._behind.set()
            if not self._flushing:
                await self._flush()
            await batch.committed.wait()
            if batch.error is not None:
                raise batch.error
        elif not self._flushing and self._behind is None:
            import anyio

            # Written behind: the next commit someone waits for carries it (a task's
            # end goes with the next task's start: one commit per task, not two), or
            # a commit of its own after WRITE_BEHIND_S at most.
            self._behind = anyio.Event()
            self.background.start_soon(self._flush_behind, self._behind)

    async def _flush_behind(self, due: Any) -> None:
        import anyio

        try:
            with anyio.move_on_after(WRITE_BEHIND_S):
                await due.wait()
        finally:
            if self._behind is due:
                self._behind = None
            with anyio.CancelScope(shield=True):  # never dropped, cancelled or not
                await self._flush()

    async def _flush(self, claimed: bool = False) -> None:
        """Commit batches until none is waiting (one flusher at a time)."""
        import anyio
        import anyio.lowlevel

        many = self._many
        if many is None or (self._flushing and not claimed):
            return
        self._flushing = True
        try:
            if self.background is not None:
                # A runner serves in this process: let the writers that are ready
                # (a task's start while a producer queues) join this commit.
                for _ in range(JOIN_YIELDS):  # (never a cancellation point: a write
                    await anyio.lowlevel.cancel_shielded_checkpoint()  # is committed)
            while self._batch.items:
                batch, self._batch = self._batch, _Batch()
                try:
                    with anyio.CancelScope(shield=True):  # a commit is never abandoned
                        await many(batch.items)
                except Exception as exc:  # raised to those who wait; logged for the rest
                    batch.error = exc
                    from adjutant import get_logger

                    get_logger(plugin="tasks").error("task queue write failed",
                                                     error=repr(exc))
                finally:
                    for key, value in batch.items:
                        if key in self._pending and self._pending[key] is value:
                            del self._pending[key]
                    batch.committed.set()
        finally:
            self._flushing = False

    async def flush(self) -> None:
        """Wait until every write so far is committed."""
        while self._flushing or self._batch.items:
            batch = self._batch
            if self._behind is not None:
                self._behind.set()
            if not self._flushing:
                await self._flush()
            await batch.committed.wait()

    async def _get(self, key: str) -> bytes | None:
        if key in self._pending:
            return self._pending[key]
        raw: bytes | None = await self.kv.get(key)
        return raw

    async def _scan(self, prefix: str) -> list[tuple[str, bytes]]:
        found = {key: value async for key, value in self.kv.scan(prefix)}
        for key, value in list(self._pending.items()):
            if key.startswith(prefix):
                if value is None:
                    found.pop(key, None)
                else:
                    found[key] = value
        return sorted(found.items())

    # -- tasks ---------------------------------------------------------------------------

    async def get(self, task_id: str) -> Task | None:
        raw = await self._get(_T + task_id)
        return None if raw is None else _task_decoder.decode(raw)

    async def find(self, prefix: str) -> Task:
        """The task whose id is ``prefix`` or starts with it (unique)."""
        if not prefix or "/" in prefix:
            raise UnknownTaskError(f"no task {prefix!r}")
        exact = await self.get(prefix)
        if exact is not None:
            return exact
        found = [key for key, _ in await self._scan(_T + prefix)]
        if not found:
            raise UnknownTaskError(f"no task {prefix!r} (adjutant tasks list shows them)")
        if len(found) > 1:
            raise UnknownTaskError(f"{len(found)} tasks start with {prefix!r}: give more "
                                   "of the id")
        task = await self.get(found[0][len(_T):])
        if task is None:
            raise UnknownTaskError(f"no task {prefix!r}")
        return task

    async def put(self, task: Task, *, wait: bool = True) -> None:
        """Store ``task`` (a finished one leaves the open index in the same commit)."""
        task.updated_at = time.time()
        items: list[tuple[str, bytes | None]] = [(_T + task.id, _encoder.encode(task))]
        if task.finished:
            items.append((_OPEN + task.id, None))
        elif task.status == "queued" and self.background is not None:
            self._queued_here.add(task.id)
        await self._write(items, wait=wait)

    async def add(self, task: Task) -> Task:
        """Store a new task (open), durably, in one commit. With an idempotency key
        already used, nothing is added and the task queued with that key is returned."""
        items: list[tuple[str, bytes | None]] = [(_T + task.id, _encoder.encode(task))]
        if task.idempotency_key is not None:
            existing = await self._get(_KEY + task.idempotency_key)
            if existing is not None and (found := await self.get(existing.decode())):
                return found
            items.append((_KEY + task.idempotency_key, task.id.encode()))
        items.append((_OPEN + task.id, b""))
        await self._write(items)
        if self.background is not None:  # a runner serves in this process
            self._queued_here.add(task.id)
        return task

    async def add_existing(self, task: Task) -> None:
        """Store ``task`` and open it again (a retry)."""
        task.updated_at = time.time()
        await self._write([(_T + task.id, _encoder.encode(task)), (_OPEN + task.id, b"")])
        if self.background is not None:
            self._queued_here.add(task.id)

    async def children(self, task_id: str) -> list[str]:
        """The nested tasks ``task_id`` queued (``run_child``), in the order queued: the
        idempotency keys ``child:<task>:<step>`` name them."""
        found = [(raw.decode(), key) for key, raw in await self._scan(f"{_KEY}child:{task_id}:")]
        return [child for child, _ in sorted(found)]

    async def holder_of(self, key: str) -> str | None:
        raw = await self._get(_KEY + key)
        return None if raw is None else raw.decode()

    def take_queued(self) -> list[str]:
        """The ids stored as ``queued`` through this queue since the last call, in queue
        order (a hint for the runner: another process's writes are not in it)."""
        taken, self._queued_here = self._queued_here, set()
        return sorted(taken)

    def hint(self, task_id: str) -> None:
        """Put ``task_id`` back among the ids `take_queued` returns."""
        self._queued_here.add(task_id)

    async def open_ids(self) -> list[str]:
        return [key[len(_OPEN):] for key, _ in await self._scan(_OPEN)]

    async def open_tasks(self) -> list[Task]:
        tasks = []
        for task_id in await self.open_ids():
            task = await self.get(task_id)
            if task is None:  # the record is gone: nothing to run
                await self._write([(_OPEN + task_id, None)])
            else:
                tasks.append(task)
        return tasks

    async def all(self) -> AsyncIterator[Task]:
        for _, raw in await self._scan(_T):
            yield _task_decoder.decode(raw)

    # -- checkpoints ---------------------------------------------------------------------

    async def save_checkpoint(self, task_id: str, state: Any) -> None:
        await self._write([(_CKPT + task_id, canonical_json(state))])

    async def load_checkpoint(self, task_id: str) -> Any:
        raw = await self._get(_CKPT + task_id)
        return None if raw is None else json.loads(raw)

    async def drop_checkpoint(self, task_id: str) -> None:
        await self._write([(_CKPT + task_id, None)], wait=False)

    # -- requests to the runner -----------------------------------------------------------

    async def request(self, task_id: str, op: Op, *, digest: str | None = None,
                      by: str | None = None) -> None:
        """Ask the runner to change a task (or, ``unschedule``, a schedule) by id."""
        self.changes += 1
        await self._write([(_REQ + task_id, _encoder.encode(
            Request(op=op, at=time.time(), digest=digest, by=by)))])

    async def request_of(self, task_id: str) -> Request | None:
        raw = await self._get(_REQ + task_id)
        return None if raw is None else _req_decoder.decode(raw)

    async def requests(self) -> list[tuple[str, str]]:
        return [(key[len(_REQ):], _req_decoder.decode(raw).op)
                for key, raw in await self._scan(_REQ)]

    async def pending_request(self, task_id: str) -> str | None:
        raw = await self._get(_REQ + task_id)
        return None if raw is None else _req_decoder.decode(raw).op

    async def clear_request(self, task_id: str) -> None:
        await self._write([(_REQ + task_id, None)])

    # -- schedules -----------------------------------------------------------------------

    async def put_schedule(self, schedule: Schedule) -> None:
        self.changes += 1
        await self._write([(_SCHED + schedule.id, _encoder.encode(schedule))])

    async def schedules(self) -> list[Schedule]:
        return [_sched_decoder.decode(raw) for _, raw in await self._scan(_SCHED)]

    async def get_schedule(self, schedule_id: str) -> Schedule | None:
        raw = await self._get(_SCHED + schedule_id)
        return None if raw is None else _sched_decoder.decode(raw)

    async def delete_schedule(self, schedule_id: str) -> bool:
        existed = await self._get(_SCHED + schedule_id) is not None
        await self._write([(_SCHED + schedule_id, None)])
        return existed
