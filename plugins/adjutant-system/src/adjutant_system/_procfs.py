"""Reading /proc directly (no psutil): process identity, owner, ancestry, memory."""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass

from ._common import clean

__all__ = ["Proc", "ancestors", "audit_ids", "cmdline", "list_pids", "meminfo", "read_proc",
           "uptime_s"]

PF_KTHREAD = 0x00200000
#: What /proc/<pid>/loginuid and sessionid hold for a process outside any login
#: (a daemon started by init, or a host without audit login sessions).
UNSET_AUDIT_ID = 4294967295
CLK_TCK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


@dataclass(frozen=True)
class Proc:
    pid: int
    name: str
    state: str
    ppid: int
    flags: int
    cpu_ticks: int
    #: Field 22 of /proc/<pid>/stat: clock ticks after boot; with the pid, an identity.
    start_time: int
    rss_bytes: int
    #: Real, effective, saved and filesystem uid.
    uids: tuple[int, int, int, int]
    #: Field 6 of /proc/<pid>/stat: the session id (the pid of the session's leader).
    session: int

    @property
    def kernel_thread(self) -> bool:
        return bool(self.flags & PF_KTHREAD)


def _read(path: str) -> bytes:
    with open(path, "rb") as handle:
        return handle.read()


def read_proc(pid: int, root: str = "/proc") -> Proc | None:
    """The process, or None when it does not exist (or vanished while being read)."""
    try:
        stat = _read(f"{root}/{pid}/stat").decode("utf-8", "replace")
        status = _read(f"{root}/{pid}/status").decode("utf-8", "replace")
    except (FileNotFoundError, ProcessLookupError):
        return None
    # the name is in parentheses and may itself contain ") " : split at the last one
    name = stat[stat.index("(") + 1: stat.rindex(")")]
    rest = stat[stat.rindex(")") + 2:].split()
    uids = (-1, -1, -1, -1)
    for line in status.splitlines():
        if line.startswith("Uid:"):
            fields = line.split()
            uids = (int(fields[1]), int(fields[2]), int(fields[3]), int(fields[4]))
            break
    return Proc(pid=pid, name=clean(name, 64), state=rest[0], ppid=int(rest[1]),
                flags=int(rest[6]), cpu_ticks=int(rest[11]) + int(rest[12]),
                start_time=int(rest[19]), rss_bytes=int(rest[21]) * PAGE, uids=uids,
                session=int(rest[3]))


def audit_ids(pid: int, root: str = "/proc") -> tuple[int | None, int | None]:
    """The process's audit login uid and login session id (``/proc/<pid>/loginuid``,
    ``sessionid``), each None when unset or unknown: set by ``pam_loginuid`` at login and
    inherited by everything started in that login, never by what init starts."""
    out: list[int | None] = []
    for name in ("loginuid", "sessionid"):
        try:
            value: int | None = int(_read(f"{root}/{pid}/{name}").strip() or UNSET_AUDIT_ID)
        except (OSError, ValueError):
            value = None
        out.append(None if value in (None, UNSET_AUDIT_ID, -1) else value)
    return out[0], out[1]


def cmdline(pid: int, root: str = "/proc", limit: int = 400) -> str:
    """The command line as a shell-quoted string (control characters removed, capped at
    ``limit`` characters)."""
    try:
        raw = _read(f"{root}/{pid}/cmdline")
    except (FileNotFoundError, ProcessLookupError):
        return ""
    parts = [p.decode("utf-8", "replace") for p in raw.rstrip(b"\x00").split(b"\x00") if raw]
    return clean(shlex.join(parts), limit) if parts else ""


def list_pids(root: str = "/proc") -> list[int]:
    return sorted(int(entry) for entry in os.listdir(root) if entry.isdigit())


def ancestors(pid: int, root: str = "/proc") -> set[int]:
    """``pid`` and every process above it, up to pid 1."""
    chain: set[int] = set()
    while pid > 0 and pid not in chain:
        chain.add(pid)
        proc = read_proc(pid, root)
        if proc is None:
            break
        pid = proc.ppid
    return chain


def uptime_s(root: str = "/proc") -> float:
    return float(_read(f"{root}/uptime").split()[0])


def meminfo(root: str = "/proc") -> dict[str, int]:
    """/proc/meminfo in bytes."""
    out: dict[str, int] = {}
    for line in _read(f"{root}/meminfo").decode().splitlines():
        key, _, value = line.partition(":")
        fields = value.split()
        if fields and fields[0].isdigit():
            out[key] = int(fields[0]) * (1024 if fields[1:] == ["kB"] else 1)
    return out
