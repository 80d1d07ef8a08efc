"""Whether a process belongs to the user's session: what ``proc.kill`` may signal.

A process of the user's own uid is *in the user's session* when at least one holds:

1. it is Adjutant itself's descendant (something Adjutant started);
2. it shares Adjutant's session id (``getsid``: the terminal session Adjutant runs in),
   when that id names a real session (above 1);
3. it shares Adjutant's audit login session (``/proc/<pid>/sessionid``), when set;
4. it shares Adjutant's audit login uid (``/proc/<pid>/loginuid``: the person who
   logged in, kept across ``sudo``), when set;
5. it descends from the leader of Adjutant's session (the shell or terminal that
   started it), even after ``setsid`` or ``nohup``.

Anything else of the same uid is a *system daemon* for ``proc.kill``: started by init
or a service manager outside any login of this person (as root: every root daemon).
The audit ids are unset (4294967295) for what init starts and on hosts without
``pam_loginuid``; an unset id never matches anything, so on such hosts (containers,
services) only rules 1, 2 and 5 can admit a process.
"""

from __future__ import annotations

import os

from ._procfs import Proc, audit_ids, read_proc

__all__ = ["session_reason"]


def session_reason(target: Proc, me: int | None = None, root: str = "/proc") -> str | None:
    """Why ``target`` is in the session of process ``me`` (default: this process), or
    None when it is not (see the module docstring for the rules)."""
    me = os.getpid() if me is None else me
    mine = read_proc(me, root)
    if mine is None:
        return None
    chain = _ancestry(target, root)
    if me in chain:
        return f"started by Adjutant (pid {me})"
    if mine.session > 1 and target.session == mine.session:
        return f"same terminal session as Adjutant (session id {mine.session})"
    my_login, my_audit = audit_ids(me, root)
    login, audit = audit_ids(target.pid, root)
    if my_audit is not None and audit == my_audit:
        return f"same login session as Adjutant (audit session {my_audit})"
    if my_login is not None and login == my_login:
        return f"same login as Adjutant (login uid {my_login})"
    leader = chain.get(mine.session)
    if mine.session > 1 and leader is not None and leader.session == leader.pid:
        return (f"descends from pid {mine.session}, the leader of Adjutant's terminal "
                "session")
    return None


def _ancestry(target: Proc, root: str) -> dict[int, Proc]:
    """``target`` and every process above it, up to (not including) pid 1."""
    chain: dict[int, Proc] = {}
    proc: Proc | None = target
    while proc is not None and proc.pid > 1 and proc.pid not in chain:
        chain[proc.pid] = proc
        proc = read_proc(proc.ppid, root)
    return chain
