"""Stdio servers never outlive Adjutant.

Three layers, because each alone has a gap:

- on a normal stop the SDK closes the server's stdin, then signals its process group
  (it starts every server in a session of its own);
- each server runs under ``setpriv --pdeathsig KILL``, so the kernel kills it the
  moment the Adjutant process dies, even by SIGKILL;
- every process a server starts inherits ``ADJUTANT_MCP_OWNER=<pid>:<start time>``.
  At the next start, any process whose owner is gone (dead, or its pid reused by
  another program) is found in ``/proc`` and killed: grandchildren that outlived the
  death signal too.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
from pathlib import Path

__all__ = ["OWNER", "orphans", "owner_mark", "reap_orphans", "wrap"]

OWNER = "ADJUTANT_MCP_OWNER"
_PROC = Path("/proc")


def _start_time(pid: int) -> str | None:
    """The process's start time in clock ticks since boot (field 22 of its stat)."""
    try:
        stat = (_PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    return stat.rsplit(")", 1)[1].split()[19]


def owner_mark(pid: int | None = None) -> str:
    """This process as an owner: pid and start time, so a reused pid is no owner."""
    pid = pid or os.getpid()
    return f"{pid}:{_start_time(pid) or '?'}"


def wrap(command: str, args: tuple[str, ...] | list[str]) -> tuple[str, list[str]]:
    """The command line that runs ``command`` with the parent-death signal set."""
    setpriv = shutil.which("setpriv")
    if setpriv is None or not os.path.isdir(_PROC):
        return command, list(args)
    return setpriv, ["--pdeathsig", "KILL", "--", command, *args]


def _alive(mark: str) -> bool:
    pid, _, started = mark.partition(":")
    return pid.isdigit() and _start_time(int(pid)) == started


def orphans() -> list[tuple[int, str]]:
    """(pid, owner) of every process of this user an Adjutant that is gone started."""
    found = []
    me = os.getuid()
    for entry in _PROC.iterdir() if _PROC.is_dir() else ():
        if not entry.name.isdigit():
            continue
        try:
            if entry.stat().st_uid != me:
                continue
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        for item in environ.split(b"\0"):
            if item.startswith(OWNER.encode() + b"="):
                mark = item.split(b"=", 1)[1].decode(errors="replace")
                if not _alive(mark):
                    found.append((int(entry.name), mark))
                break
    return found


def reap_orphans() -> list[int]:
    """Kill the orphans (see `orphans`); returns their pids."""
    killed = []
    for pid, _ in orphans():
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
            killed.append(pid)
    return killed
