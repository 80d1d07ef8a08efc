"""Daily JSONL export of the action log: ``<exports>/YYYY-MM-DD.jsonl``.

One JSON object per record whose timestamp falls on that UTC day: ``index``,
``time`` (RFC 3339, UTC, nanoseconds), ``hash``, ``prev_hash``, and ``body`` (the
body decoded, when it is JSON) or ``body_base64``. The export is incremental: a
second run appends only the records after the last one in the file, so it can run
as often as wanted; lines are appended and fsync'd like the checkpoints (a torn
last line is cut when the store is next opened). The export is for reading and
grepping: JSON bodies are re-serialised, so the evidence stays the LMDB log.
"""

from __future__ import annotations

import base64
import calendar
import contextlib
import json
import re
from collections.abc import Callable, Generator
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from ._chain import Record, parse_header, parse_record
from ._files import AppendFile, last_line, locked

__all__ = ["ExportError", "day_records", "export_day", "export_line", "parse_day", "shareable_line"]

_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_DAY_NS = 86_400 * 1_000_000_000
_FLUSH_LINES = 1024


class ExportError(RuntimeError):
    """The export file is not one this plugin can append to."""


def parse_day(day: date | str | None) -> date:
    """A UTC day from a `date`, ``"YYYY-MM-DD"`` or None (today, UTC)."""
    if day is None:
        return datetime.now(UTC).date()
    if isinstance(day, datetime):
        return day.astimezone(UTC).date()
    if isinstance(day, date):
        return day
    if not _DAY.match(day):
        raise ValueError(f"day must be YYYY-MM-DD, got {day!r}")
    return date.fromisoformat(day)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def export_line(record: Record) -> bytes:
    """One record as a JSON line."""
    out: dict[str, Any] = {
        "index": record.index,
        "time": record.time,
        "hash": record.hash.hex(),
        "prev_hash": record.prev_hash.hex(),
    }
    try:
        out["body"] = json.loads(record.body.decode("utf-8"), parse_constant=_reject_constant)
    except ValueError:  # not UTF-8, or not JSON (UnicodeDecodeError is a ValueError)
        out["body_base64"] = base64.b64encode(record.body).decode("ascii")
    return json.dumps(out, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


def export_day(values: Callable[[int], Generator[bytes, None, None]], exports: Path,
               day: date) -> tuple[Path, int]:
    """Append the day's records after the file's last one; returns (file, added).

    ``values(start)`` yields the stored values from index ``start`` on. Runs in a
    worker thread: it reads the whole log's headers (records of a day are found by
    their timestamp, which a stepped clock may put out of index order).
    """
    exports.mkdir(parents=True, exist_ok=True, mode=0o700)
    path = exports / f"{day.isoformat()}.jsonl"
    out = AppendFile(path)
    added = 0
    try:
        with locked(out.fd):
            after = _last_index(path, out.fd)
            pending: list[bytes] = []
            with contextlib.closing(day_records(values, day, after + 1)) as records:
                for record in records:
                    pending.append(export_line(record))
                    if len(pending) >= _FLUSH_LINES:
                        out.append(b"".join(pending))
                        added += len(pending)
                        pending.clear()
            if pending:
                out.append(b"".join(pending))
                added += len(pending)
    finally:
        out.close()
    return path, added


def day_records(values: Callable[[int], Generator[bytes, None, None]], day: date,
                start: int = 0) -> Generator[Record, None, None]:
    """The records from index ``start`` on whose timestamp falls on ``day`` (UTC).
    Iterate in one thread and close it there: it holds a read transaction."""
    start_ns = calendar.timegm(day.timetuple()) * 1_000_000_000
    end_ns = start_ns + _DAY_NS
    stream = values(start)
    try:
        for value in stream:
            if start_ns <= parse_header(value)[1] < end_ns:
                yield parse_record(value)
    finally:
        stream.close()  # ends the read transaction now, in this thread


def shareable_line(record: Record, redact: Callable[[Any], Any],
                   redact_text: Callable[[str], str]) -> bytes:
    """`export_line` for a file meant to be shared: the body passed through ``redact``
    (a JSON value) or ``redact_text`` (UTF-8 text that is not JSON, as ``body_text``);
    a body that is neither is withheld (``body_withheld``: its size). The hashes stay,
    so the lines can still be matched with the log; a redacted body no longer hashes
    to its record's hash, and the LMDB log stays the evidence."""
    out: dict[str, Any] = json.loads(export_line(record))
    if "body" in out:
        out["body"] = redact(out["body"])
    else:
        del out["body_base64"]
        try:
            out["body_text"] = redact_text(record.body.decode("utf-8"))
        except UnicodeDecodeError:
            out["body_withheld"] = f"{len(record.body)} bytes, not UTF-8"
    return json.dumps(out, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


def _last_index(path: Path, fd: int) -> int:
    line = last_line(fd)
    if line is None:
        return -1
    try:
        index = json.loads(line)["index"]
        if not isinstance(index, int):
            raise TypeError(index)
    except (ValueError, KeyError, TypeError):
        raise ExportError(f"{path}: the last line is not an exported record; move the file "
                          "aside to export the day again") from None
    return index
