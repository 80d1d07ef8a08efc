"""The names of the branches and tags of the repository here, read without running git."""

from __future__ import annotations

import os
import stat

__all__ = ["git_names"]


def git_names(cwd: str) -> set[str]:
    """The names of the branches and tags of the repository at ``cwd`` (none when it
    is not one), read from ``.git`` without running git: names only, no object read;
    ``packed-refs`` only when it is a regular file (a FIFO there must not stall)."""
    git = os.path.join(cwd, ".git")
    if not os.path.isdir(git) or os.path.islink(git):
        return set()
    names: set[str] = set()
    for kind in ("heads", "tags"):
        base = os.path.join(git, "refs", kind)
        for folder, _dirs, files in os.walk(base):
            for name in files:
                names.add(os.path.relpath(os.path.join(folder, name), base))
    packed = os.path.join(git, "packed-refs")
    try:
        fd = os.open(packed, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
    except OSError:
        return names
    try:
        if stat.S_ISREG(os.fstat(fd).st_mode):
            text = os.read(fd, 1 << 20).decode("utf-8", "replace")
            for line in text.splitlines():
                _, _, ref = line.partition(" ")
                for kind in ("refs/heads/", "refs/tags/"):
                    if ref.startswith(kind):
                        names.add(ref[len(kind):])
    finally:
        os.close(fd)
    return names
