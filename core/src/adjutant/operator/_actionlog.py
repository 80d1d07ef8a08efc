"""The action log, written by the kernel itself (never through the lossy bus).

Each record is one JSON object of the schema in `adjutant_hookspecs.records` (one
tagged Struct per ``kind``: prompt, context, attempt, plan, decision, approval,
tool_call, result, mode, ..., with a schema version ``v``). Writers build the Struct
at the call site, ``log.record(ToolCallRecord(run_id=..., step=0, ...))``, so the type
checker sees every field; it is checked again when written and read back typed by
`ActionLog.read` (or as plain dicts by `ActionLog.records`). The log store (a
`LogStore` plugin; LMDB by default) makes it durable and tamper-evident.

Group commit. A durable commit is the cost of a step, so records are written in as
few as the guarantees allow: `record` is a barrier (the record and everything
queued before it durable, in one commit, before it returns); `defer` queues a record
for the next barrier. The kernel calls `record` where an effect depends on the log:
a step's intent (``tool_call``) before the tool runs, and a run's ``outcome`` before
it is reported. A step's ``decision`` rides with its intent; its ``result`` and
``artifact`` ride with the next step's intent or the run's outcome. So a kill can
only take records that no effect depends on, and the step whose result it took is
the one the next start names as run without a result (``interrupted``). Concurrent
barriers (two runs on one operator) share commits: one writes what both queued,
in the order queued.
"""

from __future__ import annotations

import errno
import re
from collections.abc import Callable
from typing import Any

import msgspec
from anyio import CancelScope, Lock
from anyio.lowlevel import current_token

from adjutant_hookspecs.records import (
    ActionRecord,
    ExtensionRecord,
    ResultRecord,
    encode_record,
    read_record,
)

from ..kernel._stores import StoreChoiceError, choose_store

__all__ = ["ActionLog", "ActionLogError", "NoActionLogError", "disk_full"]


def disk_full(exc: BaseException) -> bool:
    """Whether ``exc`` is a write a full disk or quota refused (stores raise an
    `OSError` with ``ENOSPC``/``EDQUOT`` for those; adjutant-lmdb does)."""
    return isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT)


class NoActionLogError(RuntimeError):
    """No log store is registered: nothing may execute without a durable record."""


class ActionLogError(RuntimeError):
    """A record could not be written (a full disk, a quota, a full LMDB map, any store
    error). Nothing may run without its intent in the log, so the run stops here.

    :param reason: why, in a few words (``No space left on device``).
    :param ran: the tool whose step had already run when the write failed (its result
        may be missing from the log); None: nothing was run.
    :param what: what could not be written (default: the action log).
    """

    def __init__(self, reason: str, *, ran: str | None = None,
                 what: str = "the action log") -> None:
        self.reason, self.ran, self.what = reason, ran, what
        if ran is None:
            message = f"cannot write {what} ({reason}): nothing was run"
        else:
            message = (f"cannot write {what} ({reason}) after {ran} ran: its result may be "
                       "missing from the log; the run is closed as interrupted at the next "
                       "start (`adjutant log verify` names it)")
        super().__init__(message)

    @classmethod
    def wrap(cls, exc: BaseException, **kw: Any) -> ActionLogError:
        """The error for a store's exception ``exc`` (its reason without prefixes such
        as ``mdb_txn_commit:``)."""
        if isinstance(exc, ActionLogError):
            return cls(exc.reason, **{"what": exc.what, **kw})
        if isinstance(exc, OSError) and exc.strerror:
            reason = exc.strerror
        else:
            reason = re.sub(r"^(mdb_\w+|[\w./-]+\.mdb): ", "", str(exc).strip()) \
                or type(exc).__name__
        return cls(reason.splitlines()[0][:200], **kw)


class ActionLog:
    """Appends records to the log store.

    :param stores: the registered stores (``log:<name>`` keys).
    :param choice: the log store the profile names, read at each use (None: the only
        durable one; `adjutant.kernel._stores`).
    """

    def __init__(self, stores: Any, choice: Callable[[], str | None] | None = None) -> None:
        self._stores = stores
        self._choice = choice
        # Records are numbered in the order queued. Queued and not yet handed to the
        # store, oldest first: (body, run id, the tool of a ``result``).
        self._pending: list[tuple[bytes, str | None, str | None]] = []
        self._queued = 0  # records queued so far (the next one's number)
        self._written = 0  # records durable so far (numbers below this one)
        self._indexes: dict[int, int] = {}  # number -> log index, for waiting `record`s
        self._barrier: tuple[object, Any] | None = None  # (event loop token, anyio.Lock)

    @property
    def store(self) -> Any:
        try:
            store = choose_store(self._stores, "log",
                                 self._choice() if self._choice is not None else None)
        except StoreChoiceError as exc:
            raise NoActionLogError(f"{exc}; nothing can execute until it is clear") from None
        if store is None:
            raise NoActionLogError(
                "no action log store is installed, so nothing can execute; install "
                "adjutant-lmdb (or another LogStore plugin)")
        return store

    @property
    def available(self) -> bool:
        try:
            _ = self.store
        except NoActionLogError:
            return False
        return True

    def defer(self, record: ActionRecord) -> None:
        """Queue a record for the next barrier (`record` or `flush`), in order.

        For records no effect depends on until the next barrier: a step's decision
        (written with its intent), its result and artifact (written with the next
        step's intent or the run's outcome). They share that commit instead of
        paying their own; a kill before it loses them, and only them.
        """
        tool = record.tool if isinstance(record, ResultRecord) else None
        self._pending.append((encode_record(record), record.run_id, tool))
        self._queued += 1

    async def record(self, record: ActionRecord) -> int:
        """Append ``record`` durably, with every record queued before it, in one commit
        where the store can (``append_many``); returns its index. A barrier: when it
        returns, all of them are durable.

        ``record`` is one of `adjutant_hookspecs.records`' Structs, or a plugin's own
        subclass of `ActionRecord` (its own ``tag``). A field of the wrong type raises
        `msgspec.ValidationError` and nothing is written."""
        run_id = record.run_id
        self._pending.append((encode_record(record), run_id, None))
        number, self._queued = self._queued, self._queued + 1
        self._indexes[number] = -1
        try:
            await self._through(number, run_id)
        except BaseException:
            self._indexes.pop(number, None)
            raise
        return self._indexes.pop(number)

    async def flush(self) -> list[int]:
        """Make every queued record durable (a barrier without a record of its own);
        returns the indexes this call wrote (none: nothing was queued, or a concurrent
        barrier wrote them)."""
        if self._written == self._queued:
            return []
        return await self._through(self._queued - 1)

    async def _through(self, number: int, run_id: str | None = None) -> list[int]:
        """Wait until record ``number`` is durable, writing it and whatever is queued
        (one barrier writes at a time, so the log keeps the order records were
        queued in, and a barrier that waited finds its records written by the one
        before it: group commit)."""
        written: list[int] = []  # stays empty when a concurrent barrier wrote it
        with CancelScope(shield=True):  # a barrier once begun ends: none half-waited
            async with self._lock():
                if number >= self._written:
                    written = await self._write(run_id)
        return written

    def _lock(self) -> Any:
        token = current_token()
        if self._barrier is None or self._barrier[0] != token:  # a lock per event loop
            self._barrier = (token, Lock())
        return self._barrier[1]

    async def _write(self, run_id: str | None) -> list[int]:
        """Hand every queued record to the store. A failure names the tool whose result
        was among them (of run ``run_id``'s, when given: another run's result is said
        to that run, at its own next barrier)."""
        batch, self._pending = self._pending, []
        first = self._written
        try:
            store = self.store
        except NoActionLogError:
            self._pending = batch + self._pending
            raise
        bodies = [body for body, _, _ in batch]
        try:
            if len(bodies) > 1 and hasattr(store, "append_many"):
                indexes = [int(i) for i in await store.append_many(bodies)]
            else:
                indexes = [int(await store.append(body)) for body in bodies]
        except Exception as exc:
            self._pending = batch + self._pending  # not written: keep them, fail loudly
            ran = [tool for _, rid, tool in batch
                   if tool is not None and (run_id is None or rid == run_id)]
            raise ActionLogError.wrap(exc, ran=ran[-1] if ran else None) from exc
        except BaseException:
            self._pending = batch + self._pending
            raise
        self._written = first + len(batch)
        for number in self._indexes.keys() & range(first, self._written):
            self._indexes[number] = indexes[number - first]
        return indexes

    async def interrupted(self) -> list[dict[str, Any]]:
        """The runs closed as interrupted (cut by a kill; closed at the next start by an
        ``outcome`` record with status ``interrupted``), oldest first: ``run_id``,
        ``record``, ``time`` and ``tool_call_without_result`` (the step that had started
        executing with no result logged, ``{"step", "tool", "record"}``, else None).
        From the store's index where it keeps one, else by reading the log."""
        store = self.store
        if hasattr(store, "interrupted_runs"):
            return list(await store.interrupted_runs())
        out = []
        async for index, raw in store.read(0):
            try:
                record = msgspec.json.decode(raw)
            except msgspec.DecodeError:
                continue
            if isinstance(record, dict) and record.get("kind") == "outcome" \
                    and record.get("status") == "interrupted":
                detail = record.get("interrupted") or {}
                out.append({"record": index, "run_id": record.get("run_id"),
                            "time": record.get("time"),
                            "tool_call_without_result": detail.get("tool_call_without_result")})
        return out

    async def read(self, *, run_id: str | None = None
                   ) -> list[ActionRecord | ExtensionRecord]:
        """The records (of one run, if given), oldest first, each as its kind's Struct
        (`adjutant_hookspecs.records`)."""
        return [read_record(r) for r in await self.records(run_id=run_id)]

    async def records(self, *, run_id: str | None = None) -> list[dict[str, Any]]:
        """Decoded records (of one run, if given), oldest first."""
        await self.flush()
        out = []
        async for _, raw in self.store.read(0):
            try:
                record = msgspec.json.decode(raw)
            except msgspec.DecodeError:
                continue  # not one of ours (another writer's record)
            if isinstance(record, dict) and (run_id is None or record.get("run_id") == run_id):
                out.append(record)
        return out
