"""Which process wrote a record, and does it still run: a pid alone is not enough
(pids are reused), so records keep the pid with its start time from ``/proc``. Used by
the sandbox's cgroups, the budget's reservations and the LMDB store's open runs."""

from __future__ import annotations

import os

__all__ = ["alive", "started"]


def started(pid: int) -> int | None:
    """When ``pid`` started (clock ticks since boot); None: it does not run (or no /proc)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat = handle.read()
        return int(stat[stat.rindex(b")") + 2:].split()[19])
    except (OSError, ValueError, IndexError):
        return None


def alive(pid: int, since: int | None) -> bool:
    """Whether process ``pid``, started at ``since`` (None: not known), still runs: with
    ``/proc`` the same start time (another process given the pid is not it); without
    (macOS), whether some process has the pid."""
    if pid <= 0:
        return False
    if os.path.isdir("/proc/self"):
        now = started(pid)
        return now is not None and (since is None or now == since)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
