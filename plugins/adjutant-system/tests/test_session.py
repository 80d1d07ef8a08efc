"""Which processes are "in the user's session" for proc.kill: each rule of `_session`,
on a fabricated /proc (so that audit login ids, which a test cannot set, are covered)."""

from __future__ import annotations

from pathlib import Path

import pytest

from adjutant_system._procfs import UNSET_AUDIT_ID, read_proc
from adjutant_system._session import session_reason

ME = 500


def fake(root: Path, pid: int, *, ppid: int, sid: int, loginuid: int = UNSET_AUDIT_ID,
         sessionid: int = UNSET_AUDIT_ID, audit: bool = True) -> None:
    d = root / str(pid)
    d.mkdir(parents=True)
    fields = ["S", str(ppid), str(pid), str(sid), "0", "-1", "0", *["0"] * 12, "1234", "0",
              "10"]
    (d / "stat").write_text(f"{pid} (proc {pid}) {' '.join(fields)}\n")
    (d / "status").write_text("Name:\tproc\nUid:\t0\t0\t0\t0\n")
    if audit:
        (d / "loginuid").write_text(str(loginuid))
        (d / "sessionid").write_text(str(sessionid))


def reason(root: Path, pid: int) -> str | None:
    proc = read_proc(pid, str(root))
    assert proc is not None
    return session_reason(proc, ME, str(root))


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """pid 1 (init); 400 a shell leading session 400; 500 Adjutant, its child."""
    fake(tmp_path, 1, ppid=0, sid=1)
    fake(tmp_path, 400, ppid=1, sid=400)
    fake(tmp_path, ME, ppid=400, sid=400)
    return tmp_path


def test_started_by_adjutant(root: Path) -> None:
    fake(root, 600, ppid=ME, sid=600)  # even after setsid
    assert reason(root, 600) == f"started by Adjutant (pid {ME})"


def test_same_terminal_session(root: Path) -> None:
    fake(root, 700, ppid=1, sid=400)  # orphaned, still in the session
    assert reason(root, 700) == "same terminal session as Adjutant (session id 400)"


def test_below_the_session_leader_after_setsid(root: Path) -> None:
    fake(root, 800, ppid=400, sid=800)
    fake(root, 801, ppid=800, sid=800)
    assert reason(root, 801) == ("descends from pid 400, the leader of Adjutant's "
                                 "terminal session")


def test_a_daemon_is_outside(root: Path) -> None:
    fake(root, 900, ppid=1, sid=900)
    fake(root, 901, ppid=900, sid=900)
    assert reason(root, 900) is None and reason(root, 901) is None


def test_session_zero_never_matches(tmp_path: Path) -> None:
    """Adjutant in no real session (sid 0, e.g. started from outside the pid namespace):
    nothing is admitted by equal session ids."""
    other = tmp_path / "other"
    fake(other, 1, ppid=0, sid=0)
    fake(other, ME, ppid=1, sid=0)
    fake(other, 901, ppid=1, sid=0)
    assert reason(other, 901) is None


def test_same_audit_login_session_and_login_uid(tmp_path: Path) -> None:
    other = tmp_path / "login"
    fake(other, 1, ppid=0, sid=1)
    fake(other, ME, ppid=1, sid=ME, loginuid=1000, sessionid=7)
    fake(other, 901, ppid=1, sid=901, loginuid=1000, sessionid=7)
    fake(other, 902, ppid=1, sid=902, loginuid=1000, sessionid=8)
    fake(other, 903, ppid=1, sid=903, loginuid=1001, sessionid=9)
    fake(other, 904, ppid=1, sid=904)  # a daemon init started: unset ids
    fake(other, 905, ppid=1, sid=905, audit=False)
    assert reason(other, 901) == "same login session as Adjutant (audit session 7)"
    assert reason(other, 902) == "same login as Adjutant (login uid 1000)"
    assert [reason(other, pid) for pid in (903, 904, 905)] == [None] * 3


def test_unset_audit_ids_never_match_each_other(tmp_path: Path) -> None:
    """A container or a service: Adjutant's ids are unset, and so are every daemon's."""
    fake(tmp_path, 1, ppid=0, sid=1)
    fake(tmp_path, ME, ppid=1, sid=ME)
    fake(tmp_path, 901, ppid=1, sid=901)
    assert reason(tmp_path, 901) is None
