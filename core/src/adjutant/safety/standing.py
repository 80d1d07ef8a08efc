"""Standing grants for writes: consent given in advance, for one file or one tool.

The write-gate asks before every write. A user who means "yes for this file" or "yes
for this tool for a while" gives a grant instead (``adjutant grant``, the dock's
question):

- ``file:<path>``: writes to that one file, named by its real path, while it lasts;
- ``tool:<name>``: every call of that tool while it lasts.

A grant answers only the question every write gets (the mode's, the write-gate's, the
guard's baseline): anything else that asks (a path outside the cages, a hard link, a
command that cannot be read) still asks. The operator checks it at each step against
the grants live then (a revocation holds from the next step) and uses it like a yes:
an approval token bound to the previewed digest. This module is the one reading of
"which file" shared by the operator, the guard and the write-gate.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Sequence

__all__ = ["FILE", "TOOL", "file_target", "grantable", "standing_grant_for"]

FILE, TOOL = "file:", "tool:"


def file_target(value: object, cwd: str) -> str | None:
    """The file a path argument names, when a ``file:`` grant can name it: made
    absolute, with no link anywhere on the way (the name is the file), a regular file
    with one name (a hard link's other names may be anything) or one not there yet in
    an existing folder. None: no file grant can cover it."""
    if not isinstance(value, str) or not value or "\x00" in value:
        return None
    given = os.path.join(cwd, os.path.expanduser(value))
    if ".." in given.split(os.sep):
        return None  # the kernel walks ".." after any link before it: not one name
    named = os.path.normpath(given)
    try:
        if os.path.realpath(given, strict=False) != named:
            return None  # a symlink in the way: the write lands elsewhere
        st = os.lstat(named)
    except FileNotFoundError:
        return named if os.path.isdir(os.path.dirname(named)) else None
    except (OSError, ValueError):
        return None
    if not stat.S_ISREG(st.st_mode) or st.st_nlink != 1:
        return None
    return named


def grantable(level: str, roles: Iterable[str]) -> bool:
    """Whether any standing grant may answer a call: a write whose preview shows its
    effect (level ``write``), that runs no program (no ``argv`` value) and reaches no
    address (no ``url``). A ``tool:shell.exec`` for an hour would let the model run
    anything unasked; a destructive tool (``proc.kill``, an MCP tool) asks every time."""
    return level == "write" and not {"argv", "url"} & set(roles)


def standing_grant_for(tool: str, paths: Iterable[object], cwd: str,
                       grants: Sequence[str], *, allowed: bool = True) -> str | None:
    """The live grant that covers a write by ``tool`` to ``paths`` (the values its
    schema marks as paths), or None. A file grant covers a call whose every path
    argument names that one file. ``allowed``: `grantable` for the call."""
    if not allowed:
        return None
    if f"{TOOL}{tool}" in grants:
        return f"{TOOL}{tool}"
    targets = {file_target(p, cwd) for p in paths}
    if len(targets) != 1 or None in targets:
        return None
    grant = f"{FILE}{targets.pop()}"
    return grant if grant in grants else None
