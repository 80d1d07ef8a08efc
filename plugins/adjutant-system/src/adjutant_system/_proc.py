"""``proc.list`` and ``proc.kill``: the user's own processes, from /proc directly."""

from __future__ import annotations

import contextlib
import os
import pwd
import signal
from collections import OrderedDict
from typing import Any

from adjutant_hookspecs import ExecutionResult, ToolCall, ToolContext, ToolDeclaration
from adjutant_hookspecs import ToolSafety as Safety

from ._common import clean, int_arg, object_schema, preview, refuse
from ._procfs import CLK_TCK, Proc, ancestors, cmdline, list_pids, meminfo, read_proc, uptime_s
from ._session import session_reason

__all__ = ["ProcKill", "ProcList"]

PID_MAX = 4194304
#: How much of a command line the preview shows (``/proc/<pid>/cmdline`` may be far
#: longer; the rest is replaced by "...", and the identity check compares this text).
CMDLINE_SHOWN = 4096
_SORTS = ("cpu", "mem", "pid")


class ProcList:
    """List the current user's processes: pid, parent, state, CPU and memory, name."""

    declaration = ToolDeclaration(
        name="proc.list",
        version="0.1.0",
        summary="List processes[ named {name}]",
        description=(
            "List your own processes (same user id as Adjutant), read from /proc: pid, "
            "parent pid, state, CPU seconds and average CPU %, resident memory and %, and "
            "the program name (command lines are not shown: they can hold secrets)."
        ),
        args_schema=object_schema(
            {
                "name": {"type": "string", "minLength": 1, "maxLength": 64,
                         "description": "Only processes whose name contains this text "
                                        "(case-insensitive)."},
                "sort": {"type": "string", "enum": list(_SORTS),
                         "description": "Order: highest CPU first (default), highest "
                                        "memory first, or by pid."},
                "limit": {"type": "integer", "minimum": 1, "maximum": 1000,
                          "description": "At most this many rows: the top N processes "
                                         "(default 50)."},
            },
            [],
            ["what is using the most CPU?", "is there a python process running?",
             "list my processes by memory"],
        ),
        safety=Safety(writes=False, level="read", network=False),
        examples=({}, {"name": "python", "limit": 10}, {"sort": "mem", "limit": 5}),
    )

    def _check(self, call: ToolCall) -> tuple[str, str, int] | ExecutionResult:
        if unknown := sorted(set(call.args) - {"name", "sort", "limit"}):
            return refuse(call, "schema", f"unknown argument(s) {unknown}")
        name = call.args.get("name", "")
        if not isinstance(name, str) or len(name) > 64:
            return refuse(call, "schema", "`name` must be a string of at most 64 characters")
        sort = call.args.get("sort", "cpu")
        if sort not in _SORTS:
            return refuse(call, "schema", f"`sort` must be one of {list(_SORTS)}")
        limit = int_arg(call, "limit", 50, 1, 1000)
        if isinstance(limit, str):
            return refuse(call, "schema", limit)
        return name, sort, limit

    async def dry_run(self, call: ToolCall, ctx: ToolContext) -> ExecutionResult:
        checked = self._check(call)
        if isinstance(checked, ExecutionResult):
            return checked
        name, sort, limit = checked
        where = f" named like {name!r}" if name else ""
        return preview(call, f"read /proc: list up to {limit} processes of uid {os.getuid()}"
                             f"{where}, sorted by {sort} (read-only)")

    async def execute(self, call: ToolCall, ctx: ToolContext) -> ExecutionResult:
        checked = self._check(call)
        if isinstance(checked, ExecutionResult):
            return checked
        name, sort, limit = checked
        uid, now = os.getuid(), uptime_s()
        total = meminfo().get("MemTotal", 0) or 1
        rows: list[tuple[Proc, float]] = []
        for pid in list_pids():
            proc = read_proc(pid)
            if proc is None or proc.uids[0] != uid or proc.kernel_thread:
                continue
            if name and name.lower() not in proc.name.lower():
                continue
            age = max(now - proc.start_time / CLK_TCK, 1e-3)
            rows.append((proc, 100.0 * proc.cpu_ticks / CLK_TCK / age))
        key: dict[str, Any] = {"cpu": lambda r: (-r[1], r[0].pid),
                               "mem": lambda r: (-r[0].rss_bytes, r[0].pid),
                               "pid": lambda r: r[0].pid}
        rows.sort(key=key[sort])
        lines = [f"{'PID':>7} {'PPID':>7} S {'CPU_S':>9} {'CPU%':>6} {'RSS_MB':>9} "
                 f"{'MEM%':>5} NAME"]
        for proc, cpu in rows[:limit]:
            lines.append(f"{proc.pid:>7} {proc.ppid:>7} {proc.state} "
                         f"{proc.cpu_ticks / CLK_TCK:>9.2f} {cpu:>6.1f} "
                         f"{proc.rss_bytes / 1048576:>9.1f} "
                         f"{100.0 * proc.rss_bytes / total:>5.1f} {proc.name}")
        footer = f"({len(rows)} matching processes of uid {uid}, {min(len(rows), limit)} shown)"
        return ExecutionResult(tool=call.tool, args=dict(call.args), status="ok",
                               stdout="\n".join([*lines, footer]) + "\n")


class ProcKill:
    """Send SIGTERM to one of the user's own processes in the user's session, safe
    against pid reuse.

    Refused, whatever the approval: pid 1, kernel threads, Adjutant and its parents,
    processes of another uid (real, effective, saved or filesystem), and processes
    outside the user's session (system daemons; see `_session`). No grant widens this:
    a daemon is stopped by its service manager or from the user's own shell.

    The dry-run shows and records the process's identity (start time, command line,
    owner) for the run; execute re-reads it through a pidfd and refuses if anything
    changed."""

    declaration = ToolDeclaration(
        name="proc.kill",
        version="0.1.0",
        summary="Kill process {pid}",
        description=(
            "Ask one of your own processes to stop (SIGTERM only, never SIGKILL). Refused "
            "for pid 1, kernel threads, Adjutant itself and its parents, other users' "
            "processes, and system daemons (processes outside your login or terminal "
            "session, such as services started by init). The preview names the process "
            "(owner, session, start time and full command line); if the pid now belongs "
            "to another process, nothing is signalled."
        ),
        args_schema=object_schema(
            {"pid": {"type": "integer", "minimum": 2, "maximum": PID_MAX,
                     "description": "The process id to send SIGTERM to (see proc.list)."}},
            ["pid"],
            ["stop process 4242", "kill the runaway sleep I started",
             "terminate the dev server (pid 1234)"],
        ),
        safety=Safety(writes=True, level="destructive", network=False),
        examples=({"pid": 4242}, {"pid": 31337}),
    )

    MAX_RECORDS = 1024

    def __init__(self) -> None:
        #: (run id, pid) -> identity seen by the latest dry-run
        self.recorded: OrderedDict[tuple[str | None, int], tuple[int, str, tuple[int, ...]]] = (
            OrderedDict())

    def _target(self, call: ToolCall) -> tuple[Proc, str] | ExecutionResult:
        """The process to signal and why it is in the user's session, or the refusal."""
        if unknown := sorted(set(call.args) - {"pid"}):
            return refuse(call, "schema", f"unknown argument(s) {unknown}")
        pid = int_arg(call, "pid", None, -(2**31), 2**31)
        if isinstance(pid, str):
            return refuse(call, "schema", pid)
        if pid == 1:
            return refuse(call, "never-pid-1", "pid 1 (init) is never signalled")
        if not 2 <= pid <= PID_MAX:
            return refuse(call, "pid-range", f"pid must be between 2 and {PID_MAX}")
        if pid in ancestors(os.getpid()):
            return refuse(call, "never-self-or-ancestors",
                          f"pid {pid} is Adjutant itself or one of its parent processes")
        proc = read_proc(pid)
        if proc is None:
            return refuse(call, "no-such-process", f"no process with pid {pid}")
        if proc.kernel_thread:
            return refuse(call, "never-kernel-threads", f"pid {pid} is a kernel thread")
        uid = os.getuid()
        if proc.uids != (uid,) * 4:
            real, effective, saved, fs = proc.uids
            return refuse(call, "own-processes-only", f"pid {pid} ({proc.name}) belongs to "
                          f"{_owner(real)} (effective uid {effective}, saved {saved}, "
                          f"filesystem {fs}), not to you ({_owner(uid)})")
        if (reason := session_reason(proc)) is None:
            return refuse(call, "never-system-daemons", f"pid {pid} ({proc.name}, "
                          f"{_owner(uid)}) is outside your session: not started by "
                          "Adjutant, not in its terminal or login session, not below its "
                          "session leader. A system daemon is stopped by its service "
                          "manager (systemctl), or from your own shell if you mean it.")
        return proc, reason

    async def dry_run(self, call: ToolCall, ctx: ToolContext) -> ExecutionResult:
        target = self._target(call)
        if isinstance(target, ExecutionResult):
            return target
        proc, reason = target
        command = cmdline(proc.pid, limit=CMDLINE_SHOWN)
        key = (ctx.run_id, proc.pid)
        self.recorded[key] = (proc.start_time, command, proc.uids)
        self.recorded.move_to_end(key)
        while len(self.recorded) > self.MAX_RECORDS:
            self.recorded.popitem(last=False)
        return preview(call, f"signal: SIGTERM\npid: {proc.pid}\nname: {proc.name}\n"
                             f"owner: {_owner(proc.uids[0])}\n"
                             f"in your session: yes, {reason}\n"
                             f"start time: {proc.start_time} ticks after boot\n"
                             f"command: {command or '(none: no command line)'}")

    async def execute(self, call: ToolCall, ctx: ToolContext) -> ExecutionResult:
        target = self._target(call)
        if isinstance(target, ExecutionResult):
            return target
        proc = target[0]
        recorded = self.recorded.get((ctx.run_id, proc.pid))
        if recorded is None:
            return refuse(call, "preview-first", f"pid {proc.pid} was not previewed in this "
                          "run: run the dry-run first, so the process it names is the one "
                          "signalled")
        pidfd = _pidfd_open(proc.pid)
        try:
            # Checked after the pidfd pins the process: if the pid was reused in between,
            # the identity read here is the new process's and differs.
            now = read_proc(proc.pid)
            current = None if now is None else (
                now.start_time, cmdline(proc.pid, limit=CMDLINE_SHOWN), now.uids)
            if current != recorded:
                return refuse(call, "pid-reuse", f"pid {proc.pid} is no longer the process "
                              "that was previewed (start time, command line or owner "
                              "changed); nothing was signalled")
            try:
                if pidfd is not None:
                    signal.pidfd_send_signal(pidfd, signal.SIGTERM)
                else:
                    os.kill(proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                return refuse(call, "no-such-process", f"pid {proc.pid} exited meanwhile")
            except PermissionError as exc:
                return refuse(call, "own-processes-only", f"the kernel refused: {exc}")
        finally:
            if pidfd is not None:
                os.close(pidfd)
        self.recorded.pop((ctx.run_id, proc.pid), None)
        how = "pidfd" if pidfd is not None else "kill(2), no pidfd support here"
        return ExecutionResult(tool=call.tool, args=dict(call.args), status="ok",
                               stdout=f"sent SIGTERM to pid {proc.pid} ({proc.name}) via "
                                      f"{how}\n")


def _owner(uid: int) -> str:
    """``name (uid N)``, or ``uid N`` when the user database does not know it."""
    try:
        return f"{clean(pwd.getpwuid(uid).pw_name, 64)} (uid {uid})"
    except (KeyError, OverflowError):
        return f"uid {uid}"


def _pidfd_open(pid: int) -> int | None:
    if not hasattr(os, "pidfd_open") or not hasattr(signal, "pidfd_send_signal"):
        return None
    with contextlib.suppress(OSError):
        return os.pidfd_open(pid)
    return None
