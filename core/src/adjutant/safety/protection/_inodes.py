"""Hard links to protected files: a second name has no link to follow, only an inode.

Built only when a judged file has more than one link (rare outside package caches),
from the protected patterns that name a fixed file or directory (``~/.bashrc``,
``~/.ssh/**``): each such file is stat'ed and each such directory listed two levels
deep, within a budget per place. Nothing is cached, so a key created a minute ago counts.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass

from ._rules import DEFAULT_RULES

__all__ = ["ProtectedFile", "protected_inodes"]

#: Directory entries looked at per protected place, at most: each place has its own
#: budget, so a large tree (a data home with thousands of runs) cannot use up the
#: budget of the places after it (``~/.ssh``).
_BUDGET = 2048
_WILD = frozenset("*?[")


@dataclass(frozen=True, slots=True)
class ProtectedFile:
    path: str
    label: str
    #: Reads are refused too (a secret), not just writes.
    reads: bool
    source: str


def protected_inodes(
    homes: tuple[str, ...], data_homes: tuple[str, ...]
) -> dict[tuple[int, int], ProtectedFile]:
    """(st_dev, st_ino) → the protected regular file it is, for fixed-name patterns."""
    found: dict[tuple[int, int], ProtectedFile] = {}
    for spec in DEFAULT_RULES:
        for pattern in spec.patterns:
            for base, tree in _anchors(pattern, homes, data_homes):
                for path, st in _files(base, tree, [_BUDGET]):
                    found.setdefault(
                        (st.st_dev, st.st_ino),
                        ProtectedFile(path, spec.label, spec.reads, pattern),
                    )
    return found


def _anchors(
    pattern: str, homes: tuple[str, ...], data_homes: tuple[str, ...]
) -> Iterator[tuple[str, bool]]:
    """(fixed path, whether it is a directory tree) for the pattern, if it has one."""
    tree = pattern.endswith("/**")
    stem = pattern[:-3] if tree else pattern
    if any(c in _WILD for c in stem):
        return
    if stem.startswith("~/"):
        bases = [h.rstrip("/") + stem[1:] for h in homes]
    elif stem.startswith("$DATA/") or stem == "$DATA":
        bases = [d.rstrip("/") + stem[5:] for d in data_homes]
    elif stem.startswith("/") and not tree:
        bases = [stem]  # /etc/shadow; system trees are too big to list, and root's
    else:
        return
    for base in bases:
        yield base, tree


def _files(base: str, tree: bool, budget: list[int]) -> Iterator[tuple[str, os.stat_result]]:
    try:
        st = os.stat(base)
    except (OSError, ValueError):
        return
    if stat.S_ISREG(st.st_mode):
        yield base, st
    elif tree and stat.S_ISDIR(st.st_mode):
        yield from _walk(base, 2, budget)


def _walk(directory: str, depth: int, budget: list[int]) -> Iterator[tuple[str, os.stat_result]]:
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return
    for entry in entries:
        if budget[0] <= 0:
            return
        budget[0] -= 1
        try:
            st = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode):
            yield entry.path, st
        elif stat.S_ISDIR(st.st_mode) and depth > 1:
            yield from _walk(entry.path, depth - 1, budget)
