"""proc.list and proc.kill with real processes, and every rule proc.kill enforces."""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from adjutant_hookspecs import ExecutionResult, ToolCall, ToolContext
from adjutant_system import ProcKill, ProcList
from adjutant_system._procfs import audit_ids, read_proc

pytestmark = pytest.mark.anyio


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(cwd=str(tmp_path), cages=(str(tmp_path),), run_id="run-1")


@pytest.fixture
def sleeper() -> Iterator[subprocess.Popen[bytes]]:
    child = subprocess.Popen(["sleep", "30"])
    yield child
    child.kill()
    child.wait()


def kill(pid: object) -> ToolCall:
    return ToolCall(tool="proc.kill", args={"pid": pid}, dry_run=False)


async def both(tool: ProcKill, pid: object, ctx: ToolContext) -> list[ExecutionResult]:
    return [await tool.dry_run(kill(pid), ctx), await tool.execute(kill(pid), ctx)]


async def test_list_shows_own_processes(ctx: ToolContext,
                                        sleeper: subprocess.Popen[bytes]) -> None:
    result = await ProcList().execute(
        ToolCall(tool="proc.list", args={"name": "slee", "sort": "pid", "limit": 1000}), ctx)
    assert result.status == "ok"
    rows = {int(line.split()[0]): line.split() for line in result.stdout.splitlines()[1:-1]}
    assert sleeper.pid in rows
    assert rows[sleeper.pid][1] == str(os.getpid()) and rows[sleeper.pid][-1] == "sleep"
    assert all(row[-1].lower().find("slee") >= 0 for row in rows.values())


async def test_list_hides_other_users_and_kernel_threads(ctx: ToolContext) -> None:
    result = await ProcList().execute(
        ToolCall(tool="proc.list", args={"sort": "pid", "limit": 1000}), ctx)
    pids = [int(line.split()[0]) for line in result.stdout.splitlines()[1:-1]]
    assert os.getpid() in pids and 2 not in pids
    for pid in pids:
        status = Path(f"/proc/{pid}/status").read_text() if Path(f"/proc/{pid}").exists() else ""
        uid_line = [line for line in status.splitlines() if line.startswith("Uid:")]
        assert not uid_line or int(uid_line[0].split()[1]) == os.getuid()


async def test_kill_sends_sigterm_after_a_dry_run(ctx: ToolContext,
                                                  sleeper: subprocess.Popen[bytes]) -> None:
    tool = ProcKill()
    preview, result = await both(tool, sleeper.pid, ctx)
    assert preview.status == "dry_run"
    assert "signal: SIGTERM" in (preview.dry_run_diff or "")
    assert "command: sleep 30" in (preview.dry_run_diff or "")
    assert result.status == "ok", result.stderr
    assert sleeper.wait(timeout=5) == -15


@pytest.fixture
def long_sleeper() -> Iterator[subprocess.Popen[bytes]]:
    child = subprocess.Popen(["sleep", "30", *["0"] * 300])  # GNU sleep adds its operands
    yield child
    child.kill()
    child.wait()


async def test_kill_preview_shows_owner_session_and_the_full_command_line(
        ctx: ToolContext, long_sleeper: subprocess.Popen[bytes]) -> None:
    """Long command lines are not cut at 400 characters any more; the owner is named."""
    preview = await ProcKill().dry_run(kill(long_sleeper.pid), ctx)
    diff = preview.dry_run_diff or ""
    assert preview.status == "dry_run", preview.stderr
    assert f"command: sleep 30{' 0' * 300}\n" in diff + "\n"
    name = pwd.getpwuid(os.getuid()).pw_name
    assert f"owner: {name} (uid {os.getuid()})" in diff
    assert f"in your session: yes, started by Adjutant (pid {os.getpid()})" in diff


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[int]:
    """A `sleep` of our own uid that init adopted, in a session of its own: a daemon."""
    if audit_ids(os.getpid())[0] is not None:
        pytest.skip("this login has an audit login uid: an orphan of ours shares it and "
                    "is in our session by design (see _session)")
    if shutil.which("setsid") is None:
        pytest.skip("needs setsid(1)")
    pidfile = tmp_path / "daemon.pid"
    subprocess.run(["setsid", "-f", "sh", "-c", f'echo $$ > "{pidfile}"; exec sleep 30'],
                   check=True)
    pid = _wait_for_exec(pidfile)
    yield pid
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


def _wait_for_exec(pidfile: Path) -> int:
    for _ in range(500):
        if pidfile.exists() and pidfile.read_text().strip():
            pid = int(pidfile.read_text())
            if Path(f"/proc/{pid}/comm").read_text() == "sleep\n":
                return pid
        time.sleep(0.01)
    raise AssertionError("the daemon did not start")


async def test_kill_refuses_a_daemon_of_our_own_uid_outside_the_session(
        ctx: ToolContext, daemon: int) -> None:
    proc = read_proc(daemon)
    assert proc is not None and proc.session == daemon and proc.uids[0] == os.getuid()
    for result in await both(ProcKill(), daemon, ctx):
        assert "refused by rule `never-system-daemons`" in result.stderr, result
        assert "is outside your session" in result.stderr
    assert (now := read_proc(daemon)) is not None and now.state != "Z"


@pytest.fixture
def orphan(tmp_path: Path) -> Iterator[int]:
    """A `sleep` whose parent exited: init adopted it, but it is still in our session."""
    pidfile = tmp_path / "orphan.pid"
    subprocess.run(["sh", "-c", f'sh -c \'echo $$ > "{pidfile}"; exec sleep 30\' &'],
                   check=True)
    pid = _wait_for_exec(pidfile)
    yield pid
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


async def test_kill_of_a_process_left_behind_in_our_terminal_session(
        ctx: ToolContext, orphan: int) -> None:
    proc = read_proc(orphan)
    assert proc is not None and proc.session == os.getsid(0) and proc.ppid != os.getpid()
    preview, result = await both(ProcKill(), orphan, ctx)
    if os.getsid(0) <= 1:
        # Session 0 or 1 (some containers and CI runners) names no terminal session:
        # an orphan there is indistinguishable from a daemon, so it is refused.
        assert "is outside your session" in result.stderr, result
        assert (now := read_proc(orphan)) is not None and now.state != "Z"
        return
    assert f"same terminal session as Adjutant (session id {os.getsid(0)})" in (
        preview.dry_run_diff or ""), preview
    assert result.status == "ok", result.stderr


async def test_kill_without_a_dry_run_in_this_run_is_refused(
        ctx: ToolContext, sleeper: subprocess.Popen[bytes]) -> None:
    tool = ProcKill()
    result = await tool.execute(kill(sleeper.pid), ctx)
    assert "refused by rule `preview-first`" in result.stderr
    await tool.dry_run(kill(sleeper.pid), ctx)
    other_run = ToolContext(cwd=ctx.cwd, cages=ctx.cages, run_id="run-2")
    assert "preview-first" in (await tool.execute(kill(sleeper.pid), other_run)).stderr
    assert sleeper.poll() is None


@pytest.mark.parametrize(("pid", "rule"), [
    (1, "never-pid-1"), (0, "pid-range"), (-1, "pid-range"), (10**9, "pid-range"),
    (True, "schema"), ("123", "schema"),
])
async def test_kill_refuses_bad_pids(ctx: ToolContext, pid: object, rule: str) -> None:
    for result in await both(ProcKill(), pid, ctx):
        assert f"refused by rule `{rule}`" in result.stderr


async def test_kill_refuses_itself_and_its_ancestors(ctx: ToolContext) -> None:
    for pid in (os.getpid(), os.getppid()):
        for result in await both(ProcKill(), pid, ctx):
            assert "refused by rule `never-self-or-ancestors`" in result.stderr


async def test_kill_refuses_kernel_threads(ctx: ToolContext) -> None:
    stat = Path("/proc/2/stat")
    if not stat.exists() or "(kthreadd)" not in stat.read_text():
        pytest.skip("no kthreadd at pid 2 here (container pid namespace)")
    for result in await both(ProcKill(), 2, ctx):
        assert "refused by rule `never-kernel-threads`" in result.stderr


@pytest.fixture
def other_user() -> Iterator[subprocess.Popen[bytes]]:
    """A `sleep` owned by nobody (65534), once setpriv has switched user and exec'd."""
    if os.getuid() != 0 or shutil.which("setpriv") is None:
        pytest.skip("creating another user's process needs root and setpriv")
    other = subprocess.Popen(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                              "sleep", "30"])
    for _ in range(200):
        status = Path(f"/proc/{other.pid}/status").read_text()
        if "\nUid:\t65534" in status and Path(f"/proc/{other.pid}/comm").read_text() == "sleep\n":
            break
        time.sleep(0.01)
    yield other
    other.kill()
    other.wait()


async def test_kill_refuses_another_users_process(
        ctx: ToolContext, other_user: subprocess.Popen[bytes]) -> None:
    for result in await both(ProcKill(), other_user.pid, ctx):
        assert "refused by rule `own-processes-only`" in result.stderr
    assert other_user.poll() is None


async def test_kill_refuses_when_the_pid_was_reused(
        ctx: ToolContext, sleeper: subprocess.Popen[bytes]) -> None:
    """Simulated: the recorded identity no longer matches the process at that pid."""
    tool = ProcKill()
    await tool.dry_run(kill(sleeper.pid), ctx)
    start, command, uids = tool.recorded[(ctx.run_id, sleeper.pid)]
    for changed in [(start + 1, command, uids), (start, "sleep 31", uids)]:
        tool.recorded[(ctx.run_id, sleeper.pid)] = changed
        result = await tool.execute(kill(sleeper.pid), ctx)
        assert "refused by rule `pid-reuse`" in result.stderr
    assert sleeper.poll() is None


async def test_kill_of_a_process_that_exited_after_the_dry_run(
        ctx: ToolContext, sleeper: subprocess.Popen[bytes]) -> None:
    tool = ProcKill()
    await tool.dry_run(kill(sleeper.pid), ctx)
    sleeper.kill()
    sleeper.wait()
    result = await tool.execute(kill(sleeper.pid), ctx)
    assert "refused by rule `no-such-process`" in result.stderr


async def test_dry_run_records_are_bounded(ctx: ToolContext,
                                           sleeper: subprocess.Popen[bytes]) -> None:
    tool = ProcKill()
    tool.MAX_RECORDS = 3
    for run in range(10):
        await tool.dry_run(kill(sleeper.pid), ToolContext(cwd=ctx.cwd, run_id=str(run)))
    assert list(tool.recorded) == [("7", sleeper.pid), ("8", sleeper.pid), ("9", sleeper.pid)]
