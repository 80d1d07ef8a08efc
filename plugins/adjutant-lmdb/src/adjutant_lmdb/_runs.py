"""The index of open runs: which runs of the action log have started and not ended,
so that a run cut by a kill is found at the next start without reading the log.

It lives in the LMDB database ``runs``, next to ``log``, and is updated in the same
write transaction as the records it describes, so it never disagrees with them:

``o:<run_id>``
    an open run: who writes it (pid and the process's start time, so a reused pid
    is not mistaken for the writer), its first record, how many steps it started
    executing, and the step executing now (a ``tool_call`` without its ``result``).
``i:<index>``
    an interrupted run, closed at a start by the ``outcome`` record at ``index``.
``m:through``
    records below this index are indexed (a log written before the index existed
    is caught up once, at open).

What is a run, read from a record's first fields as the kernel's action log writes
them (``{"kind": ..., "time": ..., "run_id": ..., "v": ..., "step": ..., "tool": ...}``):
``prompt``, ``direct_call`` and ``replay`` start one, ``tool_call`` starts a step,
``result`` ends it, ``outcome`` ends the run. Records of any other shape (another
writer's) are not indexed.

At open, every open run whose writer is no longer alive is closed by appending an
``outcome`` record with status ``interrupted`` that says what is known of its last
step (`closing_body`): the log stays append-only and hash-chained.
"""

from __future__ import annotations

import json
import os
import re
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import lmdb

__all__ = ["RUNS_DB", "START_KINDS", "Batch", "closing_body", "interrupted", "note",
           "note_interrupted", "open_runs", "orphans", "owner_alive", "read_through",
           "set_through"]

RUNS_DB = b"runs"
START_KINDS = frozenset({"prompt", "direct_call", "replay"})
_OPEN = b"o:"
_INTERRUPTED = b"i:"
_THROUGH = b"m:through"
#: The fields the kernel writes first, in this order (msgspec keeps a dict's order).
_HEAD = re.compile(
    rb'\{"kind":"([A-Za-z0-9_.\-]{1,64})","time":[-+0-9.eE]{1,40},'
    rb'"run_id":(?:null|"([^"\\]{1,200})")'
    rb'(?:,"v":\d{1,6})?'  # the schema version (records before it have none)
    rb'(?:,"step":(\d{1,9}))?'
    rb'(?:,"tool":("(?:[^"\\]|\\.){1,400}"))?')
_SCAN = 2048  # bytes of a body the pattern may look at


_SELF: tuple[int, int | None] | None = None


def _self() -> tuple[int, int | None]:
    global _SELF
    if _SELF is None or _SELF[0] != os.getpid():  # recomputed in a forked child
        from adjutant.safety.processes import started

        _SELF = (os.getpid(), started(os.getpid()))
    return _SELF


def owner_alive(pid: int, since: int | None) -> bool:
    """Whether the process that wrote a run (``pid`` started at ``since``) still runs."""
    from adjutant.safety.processes import alive

    return alive(pid, since)


def _parse(body: bytes) -> tuple[str, str, int | None, str | None] | None:
    match = _HEAD.match(body, 0, _SCAN)
    if match is None or match[2] is None:
        return None
    tool = None
    if match[4] is not None:
        try:
            tool = str(json.loads(match[4]))
        except ValueError:
            tool = None
    return (match[1].decode(), match[2].decode(), int(match[3]) if match[3] else None, tool)


def note(txn: lmdb.Transaction[bytes], db: Any, index: int, body: bytes, *,
         owner: tuple[int, int | None] | None = None) -> None:
    """Update the index for the record ``body`` stored at ``index`` (in its write txn).
    A run it starts belongs to ``owner`` (pid, start time; default: this process)."""
    batch = Batch(txn, db)
    batch.note(index, body, owner=owner)
    batch.write()


class Batch:
    """The index updates of one write transaction: each run touched is read once and
    written once (`write`), however many of its records the transaction holds (a step's
    result, artifact, decision and intent share one commit)."""

    def __init__(self, txn: lmdb.Transaction[bytes], db: Any) -> None:
        self.txn, self.db = txn, db
        self._runs: dict[bytes, dict[str, Any] | None] = {}  # key -> run (None: ended)

    def _get(self, key: bytes) -> dict[str, Any] | None:
        if key in self._runs:
            return self._runs[key]
        raw = self.txn.get(key, db=self.db)
        return None if raw is None else json.loads(raw)

    def note(self, index: int, body: bytes, *,
             owner: tuple[int, int | None] | None = None) -> None:
        """As `note`, kept until `write`."""
        parsed = _parse(body)
        if parsed is None:
            return
        kind, run_id, step, tool = parsed
        key = _OPEN + run_id.encode()
        if kind == "outcome":
            self._runs[key] = None
            return
        run = self._get(key)
        if run is None:
            if kind in START_KINDS:
                pid, since = owner or _self()
                self._runs[key] = {"pid": pid, "since": since, "first": index, "last": index,
                                   "steps": 0, "running": None}
            return
        run["last"] = index
        if kind == "tool_call":
            run["steps"] += 1
            run["running"] = {"step": step, "tool": tool, "record": index}
        elif kind == "result" and run["running"] is not None and run["running"]["step"] == step:
            run["running"] = None
        self._runs[key] = run

    def write(self) -> None:
        for key, run in self._runs.items():
            if run is None:
                self.txn.delete(key, db=self.db)
            else:
                self.txn.put(key, json.dumps(run).encode(), db=self.db)
        self._runs.clear()


def read_through(txn: lmdb.Transaction[bytes], db: Any) -> int:
    raw = txn.get(_THROUGH, db=db)
    return int.from_bytes(raw, "big") if raw else 0


def set_through(txn: lmdb.Transaction[bytes], db: Any, index: int) -> None:
    txn.put(_THROUGH, index.to_bytes(8, "big"), db=db)


def _items(txn: lmdb.Transaction[bytes], db: Any, prefix: bytes) -> list[tuple[bytes, Any]]:
    out = []
    cursor = txn.cursor(db=db)
    if cursor.set_range(prefix):
        for key, value in cursor:
            if not bytes(key).startswith(prefix):
                break
            out.append((bytes(key)[len(prefix):], json.loads(bytes(value))))
    return out


def open_runs(txn: lmdb.Transaction[bytes], db: Any) -> list[dict[str, Any]]:
    """The runs started and not ended, each with ``run_id`` and ``alive`` (its writer
    still runs: in progress) added."""
    return [{"run_id": key.decode(), **run, "alive": owner_alive(run["pid"], run["since"])}
            for key, run in _items(txn, db, _OPEN)]


def orphans(txn: lmdb.Transaction[bytes], db: Any) -> list[dict[str, Any]]:
    """The open runs whose writer is gone: they were interrupted."""
    return [run for run in open_runs(txn, db) if not run["alive"]]


def closing_body(run: dict[str, Any]) -> bytes:
    """The ``outcome`` record that closes an orphaned run as interrupted."""
    running = run["running"]
    if running is not None:
        error = (f"interrupted: the process (pid {run['pid']}) ended after step "
                 f"{running['step']} ({running['tool']}) started executing and before its "
                 "result was in the log, so its effect may have happened unrecorded")
    else:
        error = (f"interrupted: the process (pid {run['pid']}) ended before the run did "
                 f"({run['steps']} step(s) executed, none left without a result)")
    body = {"kind": "outcome", "time": time.time(), "run_id": run["run_id"],
            "status": "interrupted", "error": error,
            "interrupted": {"pid": run["pid"], "first_record": run["first"],
                            "last_record": run["last"], "steps_executed": run["steps"],
                            "execute_started": running is not None,
                            "tool_call_without_result": running}}
    return json.dumps(body, separators=(",", ":")).encode()


def note_interrupted(txn: lmdb.Transaction[bytes], db: Any, index: int, body: bytes) -> None:
    """Remember the run closed by the record at ``index`` (for `interrupted`)."""
    record = json.loads(body)
    detail = record["interrupted"]
    txn.put(_INTERRUPTED + index.to_bytes(8, "big"), json.dumps({
        "record": index, "run_id": record["run_id"], "time": record["time"],
        "tool_call_without_result": detail["tool_call_without_result"]}).encode(), db=db)


def interrupted(txn: lmdb.Transaction[bytes], db: Any) -> list[dict[str, Any]]:
    """The runs closed as interrupted, oldest first."""
    return [run for _, run in _items(txn, db, _INTERRUPTED)]
