"""The hash chain: how a log record is laid out, hashed and checked.

A record is stored under its index (8 bytes, big-endian, so LMDB's key order is
the log's order) as a fixed header followed by the body exactly as appended::

    version  u8     1
    index    u64    0, 1, 2, ...           (repeated from the key: catches moved records)
    time_ns  u64    UTC, nanoseconds since the epoch
    prev     32 B   hash of record index-1 (32 zero bytes for record 0)
    hash     32 B   sha256(version | prev | index | time_ns | body), fixed widths
    body     ...

Every field but the hash itself is under the hash, so a change to any byte of a
record shows; the hash of each record is in the next one, so a record cannot be
replaced, removed or moved without breaking the chain; and the checkpoints (kept
apart, see `_checkpoints`) pin the head so a dropped tail shows too.
"""

from __future__ import annotations

import struct
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "GENESIS",
    "OWN_RECORD_PREFIX",
    "Checkpoint",
    "Problem",
    "Record",
    "VerifyReport",
    "index_key",
    "iso_time",
    "make_record",
    "parse_header",
    "parse_record",
    "verify_chain",
]

VERSION = 1
GENESIS = bytes(32)
_HEADER = struct.Struct(">BQQ32s32s")
_HASHED = struct.Struct(">QQ")
_KEY = struct.Struct(">Q")
#: Bodies of the records this plugin writes itself start with this (``kind`` first).
OWN_RECORD_PREFIX = b'{"kind":"lmdb.'


def index_key(index: int) -> bytes:
    return _KEY.pack(index)


def iso_time(time_ns: int) -> str:
    """RFC 3339 UTC with nanoseconds: ``2025-01-02T03:04:05.123456789Z``."""
    seconds, nanos = divmod(time_ns, 1_000_000_000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{nanos:09d}Z"


def _digest(index: int, time_ns: int, prev: bytes, body: bytes) -> bytes:
    import hashlib  # here, not at plugin import: OpenSSL's start-up is ~5 ms

    h = hashlib.sha256(bytes((VERSION,)))
    h.update(prev)
    h.update(_HASHED.pack(index, time_ns))
    h.update(body)
    return h.digest()


@dataclass(frozen=True, slots=True)
class Record:
    """One decoded log record."""

    index: int
    time_ns: int
    prev_hash: bytes
    hash: bytes
    body: bytes

    def computed_hash(self) -> bytes:
        return _digest(self.index, self.time_ns, self.prev_hash, self.body)

    def pack(self) -> bytes:
        header = _HEADER.pack(VERSION, self.index, self.time_ns, self.prev_hash, self.hash)
        return header + self.body

    @property
    def time(self) -> str:
        return iso_time(self.time_ns)


def make_record(index: int, time_ns: int, prev_hash: bytes, body: bytes) -> Record:
    return Record(index, time_ns, prev_hash, _digest(index, time_ns, prev_hash, body), body)


def parse_header(value: bytes) -> tuple[int, int]:
    """``(index, time_ns)`` from a stored value, without copying the body."""
    if len(value) < _HEADER.size or value[0] != VERSION:
        raise ValueError("not a version-1 record")
    index, time_ns = _HASHED.unpack_from(value, 1)
    return int(index), int(time_ns)


def parse_record(value: bytes) -> Record:
    """Decode a stored value; `ValueError` if it is not a record of this format."""
    if len(value) < _HEADER.size:
        raise ValueError(f"{len(value)} bytes, shorter than the {_HEADER.size}-byte header")
    version, index, time_ns, prev, digest = _HEADER.unpack_from(value)
    if version != VERSION:
        raise ValueError(f"unknown record version {version}")
    return Record(index, time_ns, prev, digest, bytes(value[_HEADER.size:]))


# -- verification --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Problem:
    """One finding; ``index`` is the record it concerns (None: not one record)."""

    index: int | None
    message: str


@dataclass(frozen=True, slots=True)
class Checkpoint:
    line: int
    index: int
    hash: bytes


@dataclass(slots=True)
class VerifyReport:
    """What `LmdbLogStore.verify` found. ``ok`` is true when nothing is wrong."""

    count: int = 0
    head_index: int | None = None
    head_hash: str = GENESIS.hex()
    checkpoints: int = 0
    last_checkpoint: int | None = None
    problems: list[Problem] = field(default_factory=list)
    #: ``(index, what)`` of the records that note a recovery made on open.
    recoveries: list[tuple[int, str]] = field(default_factory=list)
    #: ``(index, run_id, unfinished)`` of the ``outcome`` records that closed a run cut
    #: by a kill as interrupted; ``unfinished`` is the step that had started executing
    #: without a result (``{"step", "tool", "record"}``: its effect may have happened
    #: unrecorded), or None.
    interrupted: list[tuple[int, str, dict[str, Any] | None]] = field(default_factory=list)
    path: str = ""

    @property
    def ok(self) -> bool:
        return not self.problems

    def summary(self) -> str:
        if not self.ok:
            lines = [f"log TAMPERED: {len(self.problems)} problem(s) in {self.path}"]
            lines += [f"  {p.message}" for p in self.problems]
            return "\n".join(lines)
        head = "empty" if self.head_index is None else (
            f"head #{self.head_index} sha256:{self.head_hash}")
        last = "none" if self.last_checkpoint is None else f"#{self.last_checkpoint}"
        lines = [f"log OK: {self.count} record(s), {head}; "
                 f"{self.checkpoints} checkpoint(s) checked, last {last}"]
        lines += [f"  note: record {i} records a recovery on open: {w}"
                  for i, w in self.recoveries]
        lines += self.interrupted_summary()
        return "\n".join(lines)

    def interrupted_summary(self) -> list[str]:
        """Lines on the runs closed as interrupted (none: no lines)."""
        if not self.interrupted:
            return []
        unfinished = [(i, run, step) for i, run, step in self.interrupted if step]
        lines = [f"  note: {len(self.interrupted)} run(s) were interrupted (the process was "
                 f"killed or crashed mid-run; closed at the next start), {len(unfinished)} "
                 "with a tool call without a result (its effect may have happened "
                 "unrecorded):"]
        lines += [f"    run {run}: step {step.get('step')} {step.get('tool')} (tool call "
                  f"record {step.get('record')}, closed by record {i})"
                  for i, run, step in unfinished]
        return lines

    def to_builtins(self) -> dict[str, Any]:
        return {
            "ok": self.ok, "path": self.path, "count": self.count,
            "head_index": self.head_index, "head_hash": self.head_hash,
            "checkpoints": self.checkpoints, "last_checkpoint": self.last_checkpoint,
            "problems": [{"index": p.index, "message": p.message} for p in self.problems],
            "recoveries": [{"index": i, "what": w} for i, w in self.recoveries],
            "interrupted": [{"index": i, "run_id": r, "tool_call_without_result": s}
                            for i, r, s in self.interrupted],
        }


def verify_chain(
    items: Iterable[tuple[bytes, bytes]], checkpoints: Iterator[Checkpoint | Problem]
) -> VerifyReport:
    """Walk ``(key, value)`` pairs in key order against the checkpoints (ascending)
    and report every break. Memory stays constant: both are streamed."""
    report = VerifyReport()
    problems = report.problems
    pending = _CheckpointCursor(checkpoints, report)
    expected = 0
    prev: bytes | None = GENESIS  # None: unknown, after a record already reported
    for key, value in items:
        if len(key) != _KEY.size:
            problems.append(Problem(None, f"foreign key {bytes(key).hex()} in the log database"))
            continue
        (index,) = _KEY.unpack(key)
        if index != expected:
            problems.append(Problem(expected, f"{_span(expected, index - 1)} missing "
                                    f"(the log jumps from {expected - 1} to {index})"))
            prev = None  # the link across a gap cannot be judged
        record: Record | None = None
        try:
            record = parse_record(value)
        except ValueError as exc:
            fault: str | None = f"malformed ({exc})"
        else:
            fault = _fault(record, index, prev)
        if fault is not None:
            problems.append(Problem(index, f"record {index}: {fault}"))
        # One report per broken record: neither its checkpoint nor the next link is
        # judged against a record already found bad.
        good = record if fault is None else None
        pending.check(index, good.hash if good is not None else None)
        prev = good.hash if good is not None else None
        if record is not None:
            report.head_hash = record.hash.hex()
            if record.body.startswith(OWN_RECORD_PREFIX):
                report.recoveries.append((index, _what(record.body)))
            elif record.body.startswith(_OUTCOME) and _INTERRUPTED in record.body[:512]:
                _note_interrupted(report, index, record.body)
        report.count += 1
        report.head_index, expected = index, index + 1
    pending.finish(expected)
    return report


def _span(first: int, last: int, past: bool = False) -> str:
    if first == last:
        return f"record {first} {'was' if past else 'is'}"
    return f"records {first}..{last} {'were' if past else 'are'}"


def _fault(record: Record, index: int, prev: bytes | None) -> str | None:
    """What is wrong with the record stored under ``index``, if anything."""
    if record.index != index:
        return f"holds record {record.index} (records were reordered or moved)"
    if record.computed_hash() != record.hash:
        return "content does not match its hash (the record was edited)"
    if prev is not None and record.prev_hash != prev:
        return f"does not chain to record {index - 1} (a record was replaced or reordered)"
    return None


_OUTCOME = b'{"kind":"outcome",'
_INTERRUPTED = b'"status":"interrupted"'


def _note_interrupted(report: VerifyReport, index: int, body: bytes) -> None:
    import json

    try:
        record = json.loads(body)
        step = record["interrupted"]["tool_call_without_result"]
        report.interrupted.append((index, str(record["run_id"]),
                                   step if isinstance(step, dict) else None))
    except (ValueError, KeyError, TypeError):
        return


def _what(body: bytes) -> str:
    import json

    try:
        return str(json.loads(body).get("what", "?"))
    except (ValueError, AttributeError):
        return "?"


class _CheckpointCursor:
    """Merge-joins the ascending checkpoints with the records as they stream by."""

    def __init__(self, source: Iterator[Checkpoint | Problem], report: VerifyReport) -> None:
        self._source = source
        self._report = report
        self._next: Checkpoint | None = None
        self._advance()

    def _advance(self) -> None:
        for item in self._source:
            if isinstance(item, Problem):
                self._report.problems.append(item)
                continue
            self._report.checkpoints += 1
            self._report.last_checkpoint = item.index
            self._next = item
            return
        self._next = None

    def check(self, index: int, digest: bytes | None) -> None:
        """Compare the checkpoints up to ``index`` (``digest`` None: already reported)."""
        while self._next is not None and self._next.index <= index:
            ck = self._next
            if ck.index == index and digest is not None and ck.hash != digest:
                self._report.problems.append(Problem(index, (
                    f"record {index}: differs from checkpoint line {ck.line} (the record was "
                    "rewritten, or the checkpoint edited)")))
            elif ck.index < index:  # a checkpoint for a record that is missing
                self._report.problems.append(Problem(ck.index, (
                    f"record {ck.index}: missing, but checkpoint line {ck.line} attests it")))
            self._advance()

    def finish(self, count: int) -> None:
        last = None
        while self._next is not None:
            last = self._next
            self._advance()
        if last is not None and last.index >= count:
            self._report.problems.append(Problem(count, (
                f"{_span(count, last.index, past=True)} dropped: the log ends at record "
                f"{count - 1} but checkpoint line {last.line} attests record {last.index}")))
