"""Per-project notes: what the operator keeps about one project (how it is built, its
conventions), in ``<data home>/memory/notes/<project digest>.json``, outside the project.

The operator changes them only through the ``memory.note`` tool, a write like any other:
its preview is the diff of the notes, it is applied only once approved, and only if the
notes are still what the preview was made from (another change in between: nothing is
written, and the step says so). Written like working memory: under an exclusive lock,
to a temporary file, flushed, renamed over the old one, the folder synced.
"""

from __future__ import annotations

import difflib
import fcntl
import hashlib
import os
import time
from pathlib import Path

import msgspec

from ._working import replace_durably

__all__ = ["MAX_NOTES", "NotesChangedError", "ProjectNotes"]

#: The longest the notes may be (characters): they go with every request there.
MAX_NOTES = 4000


class NotesChangedError(RuntimeError):
    """The notes changed after the preview was made: nothing was written."""


class _Notes(msgspec.Struct, kw_only=True):
    root: str
    text: str = ""
    updated: float = 0.0
    by: str = ""
    run_id: str | None = None


class ProjectNotes:
    """The notes of the project at ``root`` (resolved) in data home ``home``."""

    def __init__(self, home: str | os.PathLike[str], root: str) -> None:
        self.root = os.path.realpath(root)
        digest = hashlib.sha256(self.root.encode()).hexdigest()[:24]
        self.folder = Path(home) / "memory" / "notes"
        self.path = self.folder / f"{digest}.json"

    def read(self) -> str:
        """The notes ('' when there are none, or the file is not notes)."""
        try:
            notes = msgspec.json.decode(self.path.read_bytes(), type=_Notes)
        except (OSError, msgspec.DecodeError, msgspec.ValidationError):
            return ""
        return notes.text if notes.root == self.root else ""

    @staticmethod
    def digest(text: str) -> str:
        return hashlib.sha256(text.encode()).hexdigest()

    @staticmethod
    def proposed(current: str, text: str, append: bool) -> str:
        new = f"{current.rstrip()}\n{text.strip()}".strip() if append else text.strip()
        if len(new) > MAX_NOTES:
            raise ValueError(f"the notes would be {len(new)} characters; at most {MAX_NOTES}")
        return new

    def diff(self, current: str, new: str) -> str:
        lines = difflib.unified_diff(current.splitlines(), new.splitlines(),
                                     "project notes (before)", "project notes (after)",
                                     lineterm="")
        return "\n".join(lines)

    def write(self, new: str, *, base: str, by: str, run_id: str | None) -> None:
        """Replace the notes with ``new`` if their digest is still ``base``."""
        self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        lock = os.open(self.folder / ".notes.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC,
                       0o600)
        try:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if self.digest(self.read()) != base:
                raise NotesChangedError("the project notes changed after the preview was "
                                        "made: nothing written (ask again to see the change)")
            data = msgspec.json.encode(_Notes(root=self.root, text=new, updated=time.time(),
                                              by=by, run_id=run_id))
            replace_durably(self.folder, self.path, data, prefix=".notes.")
        finally:
            os.close(lock)
