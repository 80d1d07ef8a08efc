"""Working memory: the user's preferences and project facts, each with its source.

Kept in one JSON file, ``<data home>/memory/working.json``, written atomically (a
temporary file beside it, flushed to disk, then renamed over it, and the folder
synced) under an exclusive lock, so two processes never lose each other's entries and
a crash leaves the old file or the new one, never half of one. Adding an entry whose
text is already there (ignoring case and spacing) keeps the one there and says so:
adding never deletes. Removing is `forget`, which the caller logs.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import re
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Literal

import msgspec

__all__ = ["KINDS", "Entry", "MemoryFileError", "Source", "WorkingMemory", "normalized"]

Kind = Literal["preference", "fact", "note", "unparsed"]
#: What an entry may be: a preference of the user's, a fact about the project, a note,
#: or the raw text of a model's proposal that could not be parsed (kept, not dropped).
KINDS: tuple[str, ...] = ("preference", "fact", "note", "unparsed")
#: The longest entry (characters): working memory is always in context.
MAX_TEXT = 2000


class MemoryFileError(ValueError):
    """The working-memory file cannot be read as working memory (it is left as it is)."""


class Source(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Who added an entry, when (Unix seconds) and in which run (None: not in a run)."""

    by: str
    at: float
    run_id: str | None = None


class Entry(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """One remembered thing."""

    id: str
    text: str
    kind: Kind = "preference"
    source: Source
    pinned: bool = True


class _File(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    version: int = 1
    entries: list[Entry] = msgspec.field(default_factory=list)


def normalized(text: str) -> str:
    """What makes two entries the same: their words, case and spacing aside."""
    return " ".join(text.casefold().split()).rstrip(".!")


def check_text(text: str) -> str:
    """``text`` trimmed, or `ValueError` saying what is wrong with it."""
    if not isinstance(text, str):
        raise ValueError("an entry's text must be a string")
    text = text.strip()
    if not text:
        raise ValueError("an entry needs some text")
    if len(text) > MAX_TEXT:
        raise ValueError(f"an entry is at most {MAX_TEXT} characters ({len(text)} given)")
    if re.search(r"[\x00-\x08\x0b-\x1f\x7f]", text):
        raise ValueError("an entry may not hold control characters")
    return text


def _entry_id(text: str, at: float) -> str:
    return hashlib.sha256(f"{normalized(text)}\x00{at}".encode()).hexdigest()[:8]


class WorkingMemory:
    """The working-memory file of one data home."""

    def __init__(self, home: str | os.PathLike[str]) -> None:
        self.folder = Path(home) / "memory"
        self.path = self.folder / "working.json"

    # -- reading -------------------------------------------------------------------------

    def entries(self) -> list[Entry]:
        """Every entry, oldest first (none when the file does not exist yet)."""
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return []
        return self._decode(data)

    def _decode(self, data: bytes) -> list[Entry]:
        try:
            return msgspec.json.decode(data, type=_File, strict=True).entries
        except (msgspec.ValidationError, msgspec.DecodeError) as exc:
            raise MemoryFileError(f"{self.path} is not working memory ({exc}); it was left "
                                  "as it is: fix it by hand or move it away") from None

    def find(self, ref: str) -> Entry:
        """The entry whose id is or starts with ``ref`` (`LookupError` otherwise)."""
        hits = [e for e in self.entries() if e.id.startswith(ref)] if ref else []
        if len(hits) != 1:
            what = "no entry" if not hits else f"{len(hits)} entries"
            raise LookupError(f"{what} with an id starting {ref!r} (adjutant memory show)")
        return hits[0]

    # -- writing -------------------------------------------------------------------------

    def add(self, text: str, *, kind: Kind = "preference", by: str,
            run_id: str | None = None, pinned: bool = True) -> tuple[Entry, bool]:
        """Remember ``text``: (the new entry, True), or (the identical entry already
        there, False). Nothing is ever removed by adding."""
        text = check_text(text)
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {', '.join(KINDS)}, not {kind!r}")
        with self._locked() as entries:
            for entry in entries:
                if normalized(entry.text) == normalized(text):
                    return entry, False
            at = time.time()
            entry = Entry(id=_entry_id(text, at), text=text, kind=kind, pinned=pinned,
                          source=Source(by=by, at=at, run_id=run_id))
            entries.append(entry)
            return entry, True

    def forget(self, ref: str) -> Entry:
        """Remove the entry whose id starts with ``ref`` and return it."""
        with self._locked() as entries:
            hits = [e for e in entries if e.id.startswith(ref)] if ref else []
            if len(hits) != 1:
                what = "no entry" if not hits else f"{len(hits)} entries"
                raise LookupError(f"{what} with an id starting {ref!r} (adjutant memory show)")
            entries.remove(hits[0])
            return hits[0]

    def replace_all(self, entries: Sequence[Entry]) -> None:
        """Write exactly ``entries`` (an edit the user made)."""
        with self._locked() as current:
            current[:] = list(entries)

    @contextlib.contextmanager
    def _locked(self) -> Iterator[list[Entry]]:
        """The entries, under the file's lock; written back atomically if changed."""
        self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        lock = os.open(self.folder / ".working.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC,
                       0o600)
        try:
            fcntl.flock(lock, fcntl.LOCK_EX)
            entries = self.entries()
            before = list(entries)
            yield entries
            if entries != before:
                self._write(entries)
        finally:
            os.close(lock)

    def _write(self, entries: list[Entry]) -> None:
        data = msgspec.json.format(msgspec.json.encode(_File(entries=entries)), indent=2)
        replace_durably(self.folder, self.path, data + b"\n", prefix=".working.")


def replace_durably(folder: Path, path: Path, data: bytes, *, prefix: str) -> None:
    """Replace ``path`` (in ``folder``) with ``data`` so that a crash leaves the old file
    or the new one, never half of either: a temporary file fsynced, renamed over it,
    then the folder fsynced (the rename itself survives a power cut)."""
    fd, tmp = tempfile.mkstemp(prefix=prefix, suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    directory = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)
