"""`LmdbLogStore`: the action log, append-only and hash-chained, in LMDB.

An append is one LMDB write transaction (the record under its index, chained to
the head read in the same transaction) and, every ``checkpoint_every`` records,
a checkpoint line ``{"index", "hash"}`` appended to ``checkpoints.jsonl``, a file
outside the LMDB environment. `verify` walks the chain against the checkpoints.
LMDB commits are atomic (copy-on-write pages, the new root published by one meta
page write after the data is fsync'd), so a crash leaves a record either whole or
absent; only the line files can tear, and `open` cuts a torn line and appends a
record saying so.

A record is durable when `append` returns (LMDB's commit is fsync'd); its
checkpoint line is written then too, and fsync'd at most every
``checkpoint_sync_s`` seconds and at close. The order makes that safe: a line is
written only after its record is on disk, so a lost line (a power cut; a killed
process loses none, they are in the page cache) means a checkpoint missing, never
one ahead of the log, and `open` checkpoints the head again. What it costs is
narrow: after a power cut, the records of the last unsynced lines are pinned by
the checkpoint the next open writes, not by their own.
"""

from __future__ import annotations

import base64
import contextlib
import os
import threading
import time
from collections.abc import AsyncIterator, Callable, Generator, Sequence
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from . import _lost, _runs
from ._chain import _HEADER as _RECORD_HEADER
from ._chain import GENESIS, Record, VerifyReport, index_key, make_record, parse_record
from ._env import DEFAULT_MAP_SIZE, NotOpenError, SharedEnv, acquire, close_in_thread, in_thread
from ._files import (
    AppendFile,
    checkpoint_line,
    cut_torn_tail,
    last_line,
    locked,
    parse_checkpoint,
    read_checkpoints,
)

if TYPE_CHECKING:
    import lmdb

__all__ = ["CHECKPOINTS", "DEFAULT_CHECKPOINT_SYNC_S", "LmdbLogStore"]

CHECKPOINTS = "checkpoints.jsonl"
#: Seconds between fsyncs of the checkpoint file (see the module's docstring).
DEFAULT_CHECKPOINT_SYNC_S = 1.0
_READ_BATCH = 256  # records per worker-thread hop in `read`
_READ_BATCH_BYTES = 4 << 20


class LmdbLogStore:
    """The ``log:lmdb`` store. Open it with `open` (the plugin does, in ``startup``).

    :param checkpoint_every: write a checkpoint after every N-th record (1: after
        each). A tail of fewer than N records cut from the log (or an older copy of
        the database restored) goes unnoticed by `verify`; a clean close and every
        open checkpoint the head.
    :param checkpoint_sync_s: fsync the checkpoint file with the first checkpoint at
        least this many seconds after the last fsync, and at close (0: every
        checkpoint line is fsync'd before `append` returns, one more fsync each).
    """

    kind: Literal["log"] = "log"

    def __init__(self, name: str = "lmdb", *, checkpoint_every: int = 1,
                 checkpoint_sync_s: float = DEFAULT_CHECKPOINT_SYNC_S,
                 map_size: int = DEFAULT_MAP_SIZE) -> None:
        self.name = name
        self.checkpoint_every = checkpoint_every
        self.checkpoint_sync_s = checkpoint_sync_s
        self._synced_at: float | None = None  # monotonic time of the last checkpoint fsync
        self._unsynced = False  # checkpoint lines written since then
        self.map_size = map_size
        self.path: Path | None = None
        self.exports: Path | None = None
        self._shared: SharedEnv | None = None
        self._db: lmdb._Database | None = None
        self._runs: lmdb._Database | None = None  # the index of open runs (see `_runs`)
        self._checkpoint_failed = False  # the last due checkpoint could not be written
        self._checkpoints: AppendFile | None = None
        # One appender at a time in this process (flock does not exclude threads
        # sharing a descriptor); across processes, flock on the checkpoint file.
        self._lock = threading.Lock()

    # -- lifecycle --------------------------------------------------------------------------

    @property
    def opened(self) -> bool:
        return self._shared is not None

    def open(self, path: str | os.PathLike[str], *, exports: str | os.PathLike[str] | None = None,
             checkpoint_every: int | None = None, checkpoint_sync_s: float | None = None
             ) -> None:
        """Open (creating) the log in directory ``path``; JSONL exports go to
        ``exports`` (default: ``<path>/../logs``). Blocking; call it at start-up.

        Recovers what a crash may have left: a torn last line in the checkpoint
        file or in an export is cut, and the cut is appended to the log as a record
        (``{"kind": "lmdb.recovered", ...}``); a head newer than the last
        checkpoint (a crash between commit and checkpoint) is checkpointed.
        """
        if self.opened:
            raise RuntimeError(f"log store {self.name!r} is already open at {self.path}")
        if checkpoint_every is not None:
            self.checkpoint_every = checkpoint_every
        if checkpoint_sync_s is not None:
            self.checkpoint_sync_s = checkpoint_sync_s
        if not self.checkpoint_sync_s >= 0:
            raise ValueError(f"checkpoint_sync_s must be >= 0, got {self.checkpoint_sync_s}")
        if self.checkpoint_every < 1:
            raise ValueError(f"checkpoint_every must be >= 1, got {self.checkpoint_every}")
        self.path = Path(path)
        self.exports = Path(exports) if exports is not None else self.path.parent / "logs"
        _lost.check_present(self.path)  # a log that existed and is gone: refuse, say why
        self._shared = acquire(self.path, self.map_size)
        try:
            with self._shared.use("open") as env:
                self._db = env.open_db(b"log")
                self._runs = env.open_db(_runs.RUNS_DB)
            self._checkpoints = AppendFile(self.path / CHECKPOINTS)
            self._recover()
        except BaseException:
            with self._lock:
                self._release()
            raise

    def close(self) -> None:
        """Checkpoint the head and release the environment (idempotent, blocking)."""
        with self._lock:
            if self._shared is None:
                return
            try:
                with contextlib.suppress(OSError):  # a full disk: verify still holds
                    self._checkpoint_head(self._shared)
                    if self._unsynced and self._checkpoints is not None:
                        self._checkpoints.sync()
                        self._unsynced = False
                self._mark()
            finally:
                self._release()

    def _release(self) -> None:
        shared, self._shared = self._shared, None
        if self._checkpoints is not None:
            self._checkpoints.close()
            self._checkpoints = None
        if shared is not None:
            shared.release()

    async def aclose(self) -> None:
        """Close in a worker thread: it waits for appends in flight and fsyncs."""
        if self.opened:
            await close_in_thread(self.close)

    def _env(self, what: str) -> SharedEnv:
        if self._shared is None:
            raise NotOpenError(
                f"{what}: LMDB log store {self.name!r} is not open; the adjutant-lmdb plugin "
                "opens it when the kernel starts (`async with Kernel()`), or call "
                "store.open(directory)")
        return self._shared

    # -- appending --------------------------------------------------------------------------

    async def append(self, record: bytes) -> int:
        """Store one record durably (LMDB commit fsync'd, then the checkpoint, if one
        is due, fsync'd) and return its index."""
        if not isinstance(record, bytes | bytearray | memoryview):
            raise TypeError(f"record must be bytes, got {type(record).__name__}")
        body = bytes(record)
        return await in_thread(self._append, body)

    async def append_many(self, records: Sequence[bytes]) -> list[int]:
        """Store several records in one durable commit (one LMDB sync, at most one
        checkpoint) and return their indexes: all of them land, or none."""
        bodies = []
        for record in records:
            if not isinstance(record, bytes | bytearray | memoryview):
                raise TypeError(f"record must be bytes, got {type(record).__name__}")
            bodies.append(bytes(record))
        return await in_thread(self._append_many, bodies) if bodies else []

    def _append(self, body: bytes) -> int:
        return self._append_many([body])[0]

    def _append_many(self, bodies: list[bytes]) -> list[int]:
        shared = self._env("append")
        checkpoints = self._checkpoints
        assert checkpoints is not None
        with self._lock, locked(checkpoints.fd), shared.use("append") as env:
            with env.begin(write=True, db=self._db) as txn:
                indexes, record = self._chain(txn, bodies)
            # committed: LMDB has fsync'd the data and the meta page
            if self._checkpoint_failed or any(
                    (i + 1) % self.checkpoint_every == 0 for i in indexes):
                self._checkpoint(indexes[-1], record.hash)
        return indexes

    def _chain(self, txn: lmdb.Transaction[bytes], bodies: list[bytes]
               ) -> tuple[list[int], Record]:
        """Put ``bodies`` after the head in the write transaction ``txn``, chained, and
        index the runs they open or close; the indexes and the last record."""
        last, head = _head(txn)
        if last >= 0 and head is None:
            # Nothing can be chained to a head that is not a record (fail closed).
            raise RuntimeError(f"the last record of the log (#{last}) is malformed; "
                               "run `adjutant log verify`")
        prev = GENESIS if head is None else head.hash
        indexed = _runs.read_through(txn, self._runs) == last + 1
        runs = _runs.Batch(txn, self._runs)
        indexes: list[int] = []
        for body in bodies:
            index = last + 1 + len(indexes)
            record = make_record(index, time.time_ns(), prev, body)
            txn.put(index_key(index), record.pack(), append=True, overwrite=False)
            if indexed:  # else the catch-up at the next open indexes it, once
                runs.note(index, body)
            prev = record.hash
            indexes.append(index)
        if indexed:
            runs.write()
            _runs.set_through(txn, self._runs, indexes[-1] + 1)
        return indexes, record

    def _checkpoint(self, index: int, digest: bytes) -> None:
        """Append a checkpoint after a commit. The record is durable already, so a
        checkpoint that cannot be written (a full disk) does not fail the append: the
        next append writes one for its head instead (checkpoints may be sparse)."""
        assert self._checkpoints is not None
        now = time.monotonic()
        durable = self._synced_at is None or now - self._synced_at >= self.checkpoint_sync_s
        try:
            self._checkpoints.append(checkpoint_line(index, digest), durable=durable)
        except OSError:
            self._checkpoint_failed = True
        else:
            self._checkpoint_failed = False
            if durable:
                self._synced_at, self._unsynced = now, False
            else:
                self._unsynced = True

    def _checkpoint_head(self, shared: SharedEnv) -> None:
        """Checkpoint the head if the file does not cover it yet (caller holds _lock).
        A malformed head or last line is left for `verify` to report."""
        checkpoints = self._checkpoints
        assert checkpoints is not None
        with locked(checkpoints.fd), shared.use("checkpoint") as env:
            with env.begin(db=self._db) as txn:
                _, head = _head(txn)
            line = last_line(checkpoints.fd)
            try:
                last = parse_checkpoint(line)[0] if line is not None else -1
            except ValueError:
                return
            if head is not None and head.index > last:
                checkpoints.append(checkpoint_line(head.index, head.hash))

    def _recover(self) -> None:
        checkpoints, shared = self._checkpoints, self._env("open")
        assert checkpoints is not None and self.exports is not None
        notes: list[dict[str, object]] = []
        with self._lock:
            with locked(checkpoints.fd):
                if torn := cut_torn_tail(checkpoints.fd):
                    notes.append(_cut(checkpoints.path, torn))
            if checkpoints.created and self._count() > 0:
                notes.append({"what": f"{CHECKPOINTS} was missing: checkpoints restart at "
                                      "the head", "file": str(checkpoints.path)})
            if self.exports.is_dir():
                for export in sorted(self.exports.glob("*.jsonl")):
                    fd = os.open(export, os.O_RDWR | os.O_CLOEXEC)
                    try:
                        with locked(fd):
                            if torn := cut_torn_tail(fd):
                                notes.append(_cut(export, torn))
                    finally:
                        os.close(fd)
        assert self.path is not None
        notes += _lost.notes_on_open(self.path, self._count())
        for note in notes:
            self._append(_recovery_body(note))
        # On a full disk these wait for a later open: the log stays readable meanwhile
        # (the runs stay open, the head is checkpointed by the next append or close).
        with contextlib.suppress(OSError):
            self._close_interrupted()
        with self._lock, contextlib.suppress(OSError):
            self._checkpoint_head(shared)
        self._mark()

    def _mark(self) -> None:
        """Record outside the database that this log exists, and its head (for
        `_lost.check_present` at the next open)."""
        with self._env("mark").use("mark") as env, env.begin(db=self._db) as txn:
            _, head = _head(txn)
        with contextlib.suppress(OSError):
            assert self.path is not None
            _lost.mark(self.path, head)

    def _close_interrupted(self) -> None:
        """Close every run whose writer is gone with an ``interrupted`` outcome record
        (one transaction: two processes starting at once do not both close a run)."""
        checkpoints, shared = self._checkpoints, self._env("open")
        assert checkpoints is not None
        with self._lock, locked(checkpoints.fd), shared.use("interrupted") as env:
            with env.begin(write=True, db=self._db) as txn:
                self._catch_up(txn)
                bodies = [_runs.closing_body(run) for run in _runs.orphans(txn, self._runs)]
                if not bodies:
                    return
                indexes, record = self._chain(txn, bodies)
                for index, body in zip(indexes, bodies, strict=True):
                    _runs.note_interrupted(txn, self._runs, index, body)
            self._checkpoint(indexes[-1], record.hash)

    def _catch_up(self, txn: lmdb.Transaction[bytes]) -> None:
        """Index the records written before the run index existed (once per log)."""
        through = _runs.read_through(txn, self._runs)
        last, _ = _head(txn)
        if through > last:
            return
        cursor, start = txn.cursor(db=self._db), _RECORD_HEADER.size
        runs = _runs.Batch(txn, self._runs)
        if cursor.set_range(index_key(through)):
            for key, value in cursor:  # runs found this way have no live writer
                runs.note(int.from_bytes(key, "big"), bytes(value[start:start + 2048]),
                          owner=(0, None))
        runs.write()
        _runs.set_through(txn, self._runs, last + 1)

    async def open_runs(self) -> list[dict[str, object]]:
        """The runs started and not ended: ``run_id``, ``pid``, ``alive`` (in progress
        in a live process), ``first``/``last`` record, ``steps`` executed, ``running``
        (the step executing: ``step``, ``tool``, ``record``; None)."""
        return await in_thread(self._read_runs, _runs.open_runs)

    async def interrupted_runs(self) -> list[dict[str, object]]:
        """The runs closed as interrupted at a start, oldest first: ``record`` (the
        closing outcome record), ``run_id``, ``time``, ``tool_call_without_result``
        (``{"step", "tool", "record"}`` when a step had started executing; else None)."""
        return await in_thread(self._read_runs, _runs.interrupted)

    def _read_runs(self, what: Any) -> list[dict[str, object]]:
        with self._env("runs").use("runs") as env, env.begin(db=self._db) as txn:
            return list(what(txn, self._runs))

    def _count(self) -> int:
        with self._env("count").use("count") as env, env.begin(db=self._db) as txn:
            return _head(txn)[0] + 1

    # -- reading ----------------------------------------------------------------------------

    async def read(self, start: int = 0) -> AsyncIterator[tuple[int, bytes]]:
        """Yield ``(index, body)`` from ``start`` on, in batches read in a worker thread
        (each batch is one read transaction: later appends show in later batches)."""
        index: int | None = max(start, 0)
        while index is not None:
            batch, index = await in_thread(self._read_batch, index)
            for item in batch:
                yield item

    def _read_batch(self, start: int) -> tuple[list[tuple[int, bytes]], int | None]:
        """Records from ``start`` and where the next batch starts (None: the end)."""
        out: list[tuple[int, bytes]] = []
        size = 0
        with self._env("read").use("read") as env, env.begin(db=self._db) as txn:
            cursor = txn.cursor()
            if not cursor.set_range(index_key(start)):
                return out, None
            for key, value in cursor:
                index = int.from_bytes(key, "big")
                if len(out) >= _READ_BATCH or size >= _READ_BATCH_BYTES:
                    return out, index
                out.append((index, _parsed(index, value).body))
                size += len(value)
        return out, None

    async def tail(self, n: int = 10) -> list[Record]:
        """The last ``n`` records, oldest first."""
        return await in_thread(self._tail, n)

    def _tail(self, n: int) -> list[Record]:
        out: list[Record] = []
        with self._env("tail").use("tail") as env, env.begin(db=self._db) as txn:
            cursor = txn.cursor()
            more = cursor.last()
            while more and len(out) < n:
                key, value = cursor.item()
                out.append(_parsed(int.from_bytes(key, "big"), value))
                more = cursor.prev()
        return out[::-1]

    async def record(self, index: int) -> Record | None:
        """The record stored under ``index`` (None: there is none); `ValueError` when
        the stored value is not a record."""
        return await in_thread(self._record, index)

    def _record(self, index: int) -> Record | None:
        if not 0 <= index < 2**64:
            return None
        with self._env("record").use("record") as env, env.begin(db=self._db) as txn:
            value = txn.get(index_key(index))
            return None if value is None else _parsed(index, value)

    # -- verification and export ------------------------------------------------------------

    async def verify(self) -> VerifyReport:
        """Check every record's hash, the chain, and the checkpoints; see `VerifyReport`."""
        return await in_thread(self._verify)

    def _verify(self) -> VerifyReport:
        from ._chain import verify_chain

        checkpoints = self._checkpoints
        assert checkpoints is not None
        with self._env("verify").use("verify") as env:
            # Under the lock no append is between its commit and its checkpoint, so
            # the snapshot and the checkpoint file's length agree.
            with locked(checkpoints.fd):
                txn = env.begin(db=self._db)
                size = os.fstat(checkpoints.fd).st_size
            try:
                report = verify_chain(txn.cursor(), read_checkpoints(checkpoints.path, size))
            finally:
                txn.abort()
        report.path = str(self.path)
        return report

    async def export_jsonl(self, day: date | str | None = None) -> tuple[Path, int]:
        """Append the records of ``day`` (UTC; default today) not yet exported to
        ``<exports>/YYYY-MM-DD.jsonl``; returns the file and how many were added."""
        from ._export import export_day, parse_day

        self._env("export")
        assert self.exports is not None
        return await in_thread(export_day, self._values, self.exports, parse_day(day))

    async def share_day(self, day: date | str | None, write: Callable[[Record], None]) -> int:
        """Call ``write`` (in a worker thread) with each record of ``day`` (UTC;
        default today); returns how many. For a copy made elsewhere, such as the
        redacted one `adjutant log export --output` writes."""
        from ._export import day_records, parse_day

        self._env("export")
        parsed = parse_day(day)

        def each() -> int:
            count = 0
            with contextlib.closing(day_records(self._values, parsed)) as records:
                for record in records:
                    write(record)
                    count += 1
            return count

        return await in_thread(each)

    def _values(self, start: int) -> Generator[bytes, None, None]:
        """Raw stored values from index ``start`` on, in one read transaction (the
        caller iterates in one thread and closes the generator)."""
        with self._env("export").use("export") as env, env.begin(db=self._db) as txn:
            cursor = txn.cursor()
            if cursor.set_range(index_key(start)):
                for _, value in cursor:
                    yield value


def _head(txn: lmdb.Transaction[bytes]) -> tuple[int, Record | None]:
    """The last key's index (-1: empty log) and its record (None: malformed). The
    index comes from the key: the position is what the next append follows."""
    cursor = txn.cursor()
    if not cursor.last():
        return -1, None
    key, value = cursor.item()
    try:
        record = parse_record(value)
    except ValueError:
        record = None
    if record is not None and record.index != int.from_bytes(key, "big"):
        record = None  # a moved record: verify names it; nothing chains to it
    return int.from_bytes(key, "big"), record


def _parsed(index: int, value: bytes) -> Record:
    try:
        return parse_record(value)
    except ValueError as exc:
        raise ValueError(f"record {index} is malformed ({exc}); run `adjutant log verify`")\
            from None


def _cut(path: Path, torn: bytes) -> dict[str, object]:
    return {"what": f"cut a torn last line ({len(torn)} bytes) from {path.name}",
            "file": str(path), "cut_base64": base64.b64encode(torn[:4096]).decode()}


def _recovery_body(note: dict[str, object]) -> bytes:
    import json

    body = {"kind": "lmdb.recovered", "time": time.time(), "run_id": None, **note}
    return json.dumps(body, separators=(",", ":")).encode()
