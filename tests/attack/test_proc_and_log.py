"""Issue 13, section 6: ``proc.kill`` and system daemons; what ``log verify`` proves.

Through the real ``adjutant`` command with the file-scripted model, approvals answered
"grant" on a pseudo-terminal (`Attack.run_granting`), real processes and real kills:

- the packet names the process: full command line, owner (name and uid), and why it is
  in the user's session; a process the user left in their terminal session is stopped
  after approval;
- a daemon outside the user's session is refused before any question, even when every
  question would be granted: one of the user's own uid (here root's: tests run as
  root, so it is a root daemon), one of another uid, and pid 1.

And the log: its checkpoints live in the data home (which sandboxed commands cannot
see, section 2); a process running as the user outside Adjutant can still rewrite the
whole log and recompute every checkpoint, and plain ``log verify`` then passes, but a
head kept elsewhere (``adjutant log head``) does not match (``log verify --head``).
"""

from __future__ import annotations

import contextlib
import json
import os
import pwd
import re
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from adjutant.testing import on_terminal

from .helpers import ADJUTANT, Attack, have, plan

REQUEST = "stop that process"


# -- processes --------------------------------------------------------------------------


def _wait_for_exec(pidfile: Path, comm: str = "sleep") -> int:
    """The pid written to ``pidfile``, once that process runs ``comm``."""
    for _ in range(1000):
        text = pidfile.read_text().strip() if pidfile.exists() else ""
        if text:
            pid = int(text)
            with contextlib.suppress(FileNotFoundError):
                if Path(f"/proc/{pid}/comm").read_text() == f"{comm}\n":
                    return pid
        time.sleep(0.01)
    raise AssertionError(f"no {comm} in {pidfile}")


def _alive(pid: int) -> bool:
    """Running, and not a zombie waiting for init."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"


def _gone(pid: int, timeout: float = 10) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not _alive(pid):
            return True
        time.sleep(0.05)
    return False


def _stop(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


def _daemon(tmp_path: Path, *prefix: str) -> Iterator[int]:
    """A `sleep` started the way a service is: in a session of its own, its parent gone
    (init adopts it), never a descendant of Adjutant or of Adjutant's session."""
    if not have("setsid"):
        pytest.skip("needs setsid(1)")
    if Path("/proc/self/loginuid").read_text().strip() not in ("4294967295", "-1"):
        pytest.skip("this host sets audit login uids: an orphan of ours would share ours "
                    "and count as the user's (see adjutant_system._session)")
    pidfile = tmp_path / f"daemon-{len(prefix)}.pid"
    subprocess.run(["setsid", "-f", "sh", "-c", f'echo $$ > "{pidfile}"; exec "$@"', "sh",
                    *prefix, "sleep", "300"], check=True, timeout=10)
    pid = _wait_for_exec(pidfile)
    yield pid
    _stop(pid)


@pytest.fixture
def root_daemon(tmp_path: Path) -> Iterator[int]:
    """A daemon of the user's own uid (root here)."""
    yield from _daemon(tmp_path)


@pytest.fixture
def nobody_daemon(tmp_path: Path) -> Iterator[int]:
    """A daemon of another uid (nobody, 65534)."""
    if os.getuid() != 0 or not have("setpriv"):
        pytest.skip("a process of another user needs root and setpriv")
    yield from _daemon(tmp_path, "setpriv", "--reuid=65534", "--regid=65534",
                       "--clear-groups")


def _refused_before_any_question(attack: Attack, shown: str, rule: str) -> None:
    assert rule in shown, shown
    assert "[g] grant" not in shown  # the packet was never put to the user
    bodies = attack.log()
    assert rule in json.dumps(bodies)
    assert not [b for b in bodies if b.get("kind") == "approval" and b.get("scope") == "step"]


@pytest.fixture
def confirming(attack: Attack) -> Attack:
    attack.mode("execute-with-confirmation")
    return attack


def test_a_daemon_of_the_users_own_uid_is_refused_even_when_granted(
        confirming: Attack, root_daemon: int) -> None:
    confirming.script(plan(("proc.kill", {"pid": root_daemon})))
    shown = confirming.run_granting(REQUEST)
    _refused_before_any_question(confirming, shown, "never-system-daemons")
    assert "is outside your session" in shown
    assert _alive(root_daemon)


def test_a_daemon_of_another_uid_is_refused_even_when_granted(
        confirming: Attack, nobody_daemon: int) -> None:
    confirming.script(plan(("proc.kill", {"pid": nobody_daemon})))
    shown = confirming.run_granting(REQUEST)
    _refused_before_any_question(confirming, shown, "own-processes-only")
    assert "nobody (uid 65534)" in shown
    assert _alive(nobody_daemon)


def test_pid_1_is_refused_even_when_granted(confirming: Attack) -> None:
    confirming.script(plan(("proc.kill", {"pid": 1})))
    shown = confirming.run_granting(REQUEST)
    assert "[g] grant" not in shown
    assert re.search(r"pid.*(minimum|1 is less than|never-pid-1)", shown, re.S), shown
    assert _alive(1)


def _answer_granting(child: Any) -> str:
    """Answer every question of ``adjutant run`` "grant" (step by step); what it showed."""
    pexpect = pytest.importorskip("pexpect")

    shown: list[str] = []
    try:
        for _ in range(8):
            index = child.expect([r"\[x\] execute the plan, \[s\] step by step, \[d\] deny: ",
                                  r"\[g\] grant, \[d\] deny, \[e\] edit arguments: ",
                                  pexpect.EOF])
            shown.append(str(child.before))
            if index == 2:
                break
            shown.append("[g] grant" if index == 1 else "")
            child.sendline("s" if index == 0 else "g")
    finally:
        child.close(force=True)
    return "".join(shown)


def test_a_process_left_in_the_users_terminal_session_is_stopped_after_approval(
        confirming: Attack, tmp_path: Path) -> None:
    """The user's terminal: a shell that left a long-running job behind (its parent
    gone, so it is no child of Adjutant) and then runs ``adjutant run`` itself."""
    pytest.importorskip("pexpect")
    pidfile, go = tmp_path / "job.pid", tmp_path / "go"
    operands = " ".join(["0"] * 250)  # GNU sleep adds them: a 500-character command line
    shell = (f'(sleep 300 {operands} & echo $! > "{pidfile}"); '
             f'while [ ! -e "{go}" ]; do sleep 0.05; done; '
             f'exec "{ADJUTANT}" run "{REQUEST}"')
    child = on_terminal("sh", ["-c", shell], env=confirming.env, cwd=str(confirming.work),
                        encoding="utf-8", timeout=60, dimensions=(50, 200))
    job = _wait_for_exec(pidfile)
    try:
        confirming.script(plan(("proc.kill", {"pid": job})))
        go.touch()
        shown = _answer_granting(child)
        flat = re.sub(r"\s+", " ", shown)
        me = os.getuid()
        assert f"owner: {pwd.getpwuid(me).pw_name} (uid {me})" in shown, shown
        assert "in your session: yes, same terminal session as Adjutant" in shown
        assert f"command: sleep 300 {operands}" in flat
        assert "[g] grant" in shown  # it was asked, and granted
        assert _gone(job), "the granted SIGTERM did not stop the process"
    finally:
        _stop(job)


# -- the log: checkpoints in the data home, and a head kept elsewhere -------------------


def _logged(attack: Attack) -> str:
    """A few records in the log, and the head printed by `adjutant log head`."""
    attack.mode("propose-only")
    attack.mode("execute-with-confirmation")
    done = attack.cli("log", "head", check=True)
    head: str = done.stdout.strip()
    assert re.fullmatch(r"\d+:[0-9a-f]{64}", head), done
    assert "adjutant log verify --head" in done.stderr
    return head


def _rewrite_everything(attack: Attack, *, keep: int | None = None) -> None:
    """What a process running as the user outside Adjutant can do: rewrite every
    record's body (or cut the log after record ``keep``), recompute the whole chain,
    and rewrite the checkpoint file to match."""
    import lmdb

    from adjutant_lmdb._chain import index_key, make_record, parse_record
    from adjutant_lmdb._files import checkpoint_line

    env = lmdb.open(str(attack.data / "lmdb"), max_dbs=8, subdir=True)
    lines = []
    with env.begin(write=True, db=env.open_db(b"log")) as txn:
        records = [parse_record(v) for _, v in txn.cursor()]
        prev = bytes(32)
        for old in records:
            if keep is not None and old.index > keep:
                txn.delete(index_key(old.index))
                continue
            body = old.body if keep is not None else old.body.replace(b"propose", b"PROPOSE")
            forged = make_record(old.index, old.time_ns, prev, body)
            txn.put(index_key(old.index), forged.pack())
            lines.append(checkpoint_line(old.index, forged.hash))
            prev = forged.hash
    env.close()
    (attack.data / "lmdb" / "checkpoints.jsonl").write_bytes(b"".join(lines))


def test_checkpoints_live_in_the_data_home(attack: Attack) -> None:
    """Where section 2's sandbox hides them: never in the workspace."""
    _logged(attack)
    checkpoints = attack.data / "lmdb" / "checkpoints.jsonl"
    assert checkpoints.stat().st_size > 0
    assert not checkpoints.resolve().is_relative_to(attack.work.resolve())


def test_a_kept_head_matches_an_intact_log(attack: Attack) -> None:
    head = _logged(attack)
    attack.mode("propose-only")  # the log grows past the kept head: still fine
    done = attack.cli("log", "verify", "--head", head)
    assert done.returncode == 0, done.stdout + done.stderr
    index = head.split(":")[0]
    assert f"kept head #{index} matches: records 0..{index} are those you kept" in done.stdout
    report = json.loads(attack.cli("log", "verify", "--head", head, "--json").stdout)
    assert report["ok"] and report["kept_head"]["matches"] is True


def test_a_rewritten_log_passes_plain_verify_but_not_the_kept_head(attack: Attack) -> None:
    """What `verify` cannot prove without a kept head, and what the kept head adds."""
    head = _logged(attack)
    _rewrite_everything(attack)
    plain = attack.cli("log", "verify")
    assert plain.returncode == 0, plain.stdout  # consistent forgery: the checkpoints agree
    done = attack.cli("log", "verify", "--head", head)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "log TAMPERED" in done.stdout
    assert "differs from the kept head" in done.stdout
    report = json.loads(attack.cli("log", "verify", "--head", head, "--json").stdout)
    assert not report["ok"] and report["kept_head"]["matches"] is False


def test_a_log_cut_before_the_kept_head_is_named(attack: Attack) -> None:
    head = _logged(attack)
    _rewrite_everything(attack, keep=int(head.split(":")[0]) - 2)
    done = attack.cli("log", "verify", "--head", head)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "missing, but the kept head" in done.stdout


def test_log_head_refuses_to_vouch_for_a_tampered_log(attack: Attack) -> None:
    _logged(attack)
    (attack.data / "lmdb" / "checkpoints.jsonl").write_bytes(
        b'{"index":0,"hash":"' + b"0" * 64 + b'"}\n')
    done = attack.cli("log", "head")
    assert done.returncode == 1 and done.stdout == ""
    assert "not printed, the log does not verify" in done.stderr


@pytest.mark.parametrize("bad", ["", "12", "x:" + "0" * 64, "3:" + "0" * 63, "-1:" + "0" * 64])
def test_a_malformed_kept_head_is_a_usage_error(attack: Attack, bad: str) -> None:
    _logged(attack)
    done = attack.cli("log", "verify", f"--head={bad}")
    assert done.returncode == 2 and "expected INDEX:SHA256" in done.stderr, done
