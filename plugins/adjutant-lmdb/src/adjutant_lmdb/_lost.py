"""A log that existed and is gone: found at open, never replaced silently.

LMDB creates an empty environment wherever it is opened, so a deleted ``data.mdb``
would quietly become a new, empty log that verifies (only the old checkpoints
would disagree, and not even they if the whole directory went). So the store
keeps a marker beside its directory, ``<home>/lmdb.log.json``, saying that a log
lives there and what its head was when it was last opened or closed. At open, a
missing (or empty) ``data.mdb`` where the marker or the checkpoint file says a log
existed is refused with `LogMissingError`, naming the last record known.

The user either restores the file or acknowledges the loss with ``adjutant log
reset --yes`` (`reset`): the old checkpoints and exports are moved aside (never
deleted), and the new log's first record says that the previous one was lost,
with its last known head.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._files import last_line, parse_checkpoint

if TYPE_CHECKING:
    from ._chain import Record

__all__ = ["LogMissingError", "check_present", "mark", "marker_path", "notes_on_open", "reset"]

_CHECKPOINTS = "checkpoints.jsonl"  # `_log.CHECKPOINTS` (not imported: a cycle)


class LogMissingError(RuntimeError):
    """The action log's database is gone although a log existed: nothing starts until
    the user restores it or acknowledges the loss (``adjutant log reset --yes``)."""


def marker_path(path: Path) -> Path:
    """``<home>/lmdb.log.json`` for a store in ``<home>/lmdb``: outside the directory,
    so removing the directory does not remove the evidence."""
    return path.parent / f"{path.name}.log.json"


def _read(path: Path) -> dict[str, Any]:
    try:
        marker = json.loads(marker_path(path).read_bytes())
    except (OSError, ValueError):
        return {}
    return marker if isinstance(marker, dict) else {}


def _present(path: Path) -> bool:
    try:
        return (path / "data.mdb").stat().st_size > 0
    except OSError:
        return False


def _evidence(path: Path) -> tuple[int, str, str] | None:
    """The last record known to have existed: ``(index, hash, where it is known
    from)``, from the marker or else the checkpoint file; None: no log existed."""
    head = _read(path).get("head")
    if isinstance(head, dict) and isinstance(head.get("index"), int):
        return head["index"], str(head.get("hash", "?")), str(marker_path(path))
    checkpoints = path / _CHECKPOINTS
    try:
        fd = os.open(checkpoints, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        line = last_line(fd)
        if line is None:
            return None
        index, digest = parse_checkpoint(line)
    except ValueError:
        return -1, "?", str(checkpoints)  # a checkpoint file with lines: a log existed
    finally:
        os.close(fd)
    return index, digest.hex(), str(checkpoints)


def check_present(path: Path) -> None:
    """Raise `LogMissingError` when the database in ``path`` is missing or empty but a
    log existed there."""
    if _present(path):
        return
    evidence = _evidence(path)
    if evidence is None:
        return
    index, digest, source = evidence
    last = f"record #{index} sha256:{digest[:16]}..." if index >= 0 else "some records"
    raise LogMissingError(
        f"the action log {path / 'data.mdb'} is missing, but a log existed here ({last}, "
        f"according to {source}); Adjutant will not start a new log silently. Restore the "
        "file from a backup, or acknowledge the loss with `adjutant log reset --yes` (a new "
        "log is started and its first record says the previous one was lost)")


def mark(path: Path, head: Record | None) -> None:
    """Write the marker: a log lives in ``path``, with this head (atomically)."""
    state = None if head is None else {"index": head.index, "hash": head.hash.hex()}
    marker = {"path": str(path), "head": state}
    current = _read(path)
    if current.get("head") == state and current.get("path") == str(path) \
            and "lost" not in current:
        return
    target = marker_path(path)
    temporary = target.with_name(f".{target.name}.{os.getpid()}")
    temporary.write_text(json.dumps(marker) + "\n")
    os.replace(temporary, target)


def notes_on_open(path: Path, count: int) -> list[dict[str, object]]:
    """The recovery record a new log starts with after `reset`."""
    lost = _read(path).get("lost")
    if not isinstance(lost, dict) or count > 0:
        return []
    return [{"what": f"a new log was started: the previous one (last known record "
                     f"#{lost.get('index')} sha256:{lost.get('hash')}) was lost; acknowledged "
                     f"with `adjutant log reset` at {lost.get('acknowledged')}",
             "previous_head": {"index": lost.get("index"), "hash": lost.get("hash")},
             "moved_aside": lost.get("moved", [])}]


def reset(path: Path, exports: Path) -> str:
    """Acknowledge that the log in ``path`` is lost: move its checkpoints and exports
    aside and let the next open start a new log. Refuses (`ValueError`) while the
    database is present: a log is never deleted here."""
    if _present(path):
        raise ValueError(f"the action log {path / 'data.mdb'} is present: `log reset` only "
                         "acknowledges a log that is gone, and changed nothing")
    evidence = _evidence(path)
    if evidence is None:
        return f"nothing to reset: no log existed in {path}"
    index, digest, _ = evidence
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    moved = []
    checkpoints = path / _CHECKPOINTS
    if checkpoints.exists():
        aside = checkpoints.with_name(f"checkpoints.lost-{stamp}.jsonl")
        os.replace(checkpoints, aside)
        moved.append(str(aside))
    if exports.is_dir() and any(exports.iterdir()):
        aside = exports.with_name(f"{exports.name}.lost-{stamp}")
        os.replace(exports, aside)
        moved.append(str(aside))
    marker = {"path": str(path), "head": None,
              "lost": {"index": index, "hash": digest, "moved": moved,
                       "acknowledged": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}}
    target = marker_path(path)
    temporary = target.with_name(f".{target.name}.{os.getpid()}")
    temporary.write_text(json.dumps(marker) + "\n")
    os.replace(temporary, target)
    where = f"; moved aside: {', '.join(moved)}" if moved else ""
    return (f"the lost log (last known record #{index}) is acknowledged; the next start "
            f"begins a new log that records the loss{where}")
