"""A call refused by a named rule, and the diff every write previews."""

from __future__ import annotations

__all__ = ["MAX_PATH_CHARS", "Refused", "unified_diff"]

MAX_PATH_CHARS = 4096


class Refused(Exception):
    """A call refused by a named rule (``rule``: ``"cage"``, ``"symlink"``,
    ``"missing"``...); a tool turns it into ``status="error"`` with the rule named
    (`adjutant.toolkit.refusal`)."""

    def __init__(self, rule: str, message: str) -> None:
        super().__init__(message)
        self.rule = rule
        self.message = message

    def __str__(self) -> str:
        return f"{self.message} [rule: {self.rule}]"


def unified_diff(shown: str, old: str | None, new: str | None) -> str:
    """The exact unified diff of ``old`` to ``new`` for the file ``shown`` (None: the
    file does not exist before, or after): what a write's dry-run previews."""
    import difflib

    a = old.splitlines(keepends=True) if old is not None else []
    b = new.splitlines(keepends=True) if new is not None else []
    lines = []
    for line in difflib.unified_diff(a, b, "/dev/null" if old is None else f"a/{shown}",
                                     "/dev/null" if new is None else f"b/{shown}"):
        lines.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(lines)
