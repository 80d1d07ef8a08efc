"""Issue 13, section 5: kills and full disks leave no silent gaps.

Through the real ``adjutant`` command (``run`` on a pseudo-terminal with the
file-scripted model, every question answered "grant"; ``mcp serve`` over stdio with
the MCP SDK), real SIGKILLs, a real full disk (a 2 MiB tmpfs as the data home):

- a run cut by a kill while its sandboxed command runs is closed as ``interrupted``
  at the next start, naming the step that had no result, and ``log verify``,
  ``status`` and ``doctor`` say so; the sandbox (bubblewrap and its ``sleep``) died
  with the operator;
- a kill landing right after the grant, before bubblewrap runs, still takes the
  sandbox with it, round after round; the pids cgroup it leaves is removed by the
  next process's first sandboxed run;
- a full disk refuses to run with one line (exit 1, no traceback), and no effect
  happens without its intent in the log; ``mcp serve`` answers a JSON-RPC error
  and keeps serving;
- a corrupt or deleted ``data.mdb`` is reported by ``doctor`` and at start-up.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from adjutant.testing import needs_sandbox

from .helpers import PROMPT, Attack, plan

SLEEP = "sleep"


def _marker() -> str:
    """A unique ``sleep`` duration: the sandbox's processes carry it in their argv."""
    return f"29.{os.getpid() % 1000:03d}{time.time_ns() % 10**7:07d}"


def _running(marker: str) -> list[int]:
    """Processes (not zombies) whose command line holds ``marker``: bwrap, sleep."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes()
            stat = (proc / "stat").read_text()
        except OSError:
            continue
        if marker.encode() in cmdline and stat[stat.rindex(")") + 2] != "Z":
            found.append(int(proc.name))
    return found


def _settle(marker: str, seconds: float = 3.0) -> list[int]:
    """What still runs with ``marker`` once a dying sandbox had time to go."""
    deadline = time.monotonic() + seconds
    left = _running(marker)
    while left and time.monotonic() < deadline:
        time.sleep(0.05)
        left = _running(marker)
    return left


def _kill(pids: list[int]) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def _children(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        with contextlib.suppress(OSError):
            found += [int(c) for c in (task / "children").read_text().split()]
    return found


def _granted_run(attack: Attack, marker: str) -> Any:
    """``adjutant run`` of a sandboxed ``sleep MARKER``, stopped right after the user
    granted it; the pexpect child."""
    attack.script(plan(("shell.exec", {"argv": [SLEEP, marker]})))
    child = attack.spawn("run", "wait a while")
    child.expect_exact(PROMPT)
    child.sendline("g")
    return child


def _outcomes(records: list[dict[str, Any]], status: str) -> list[dict[str, Any]]:
    return [r for r in records if r["kind"] == "outcome" and r.get("status") == status]


@needs_sandbox
def test_a_run_killed_mid_step_is_closed_as_interrupted_and_its_sandbox_dies_with_it(
        attack: Attack) -> None:
    attack.mode("execute-with-confirmation")
    marker = _marker()
    child = _granted_run(attack, marker)
    deadline = time.monotonic() + 30
    while not any(Path(f"/proc/{p}/comm").read_text().strip() == SLEEP
                  for p in _running(marker) if Path(f"/proc/{p}/comm").exists()):
        assert time.monotonic() < deadline, child.before
        time.sleep(0.02)
    os.kill(child.pid, signal.SIGKILL)  # mid-step: sleep runs in the sandbox
    child.close(force=True)
    left = _settle(marker)
    _kill(left)
    assert left == [], "the sandbox outlived the operator"

    verify = attack.cli("log", "verify")  # the next start closes the run
    assert verify.returncode == 0, verify.stdout + verify.stderr
    assert "1 run(s) were interrupted" in verify.stdout
    assert "1 with a tool call without a result" in verify.stdout
    assert "step 0 shell.exec" in verify.stdout
    (closed,) = _outcomes(attack.log(), "interrupted")
    detail = closed["interrupted"]
    assert detail["execute_started"] is True
    assert detail["tool_call_without_result"]["tool"] == "shell.exec"
    assert "its effect may have happened unrecorded" in closed["error"]

    status = attack.cli("status")
    assert status.returncode == 0, status.stderr
    assert "interrupted runs: 1" in status.stdout and "1 with a tool call without a result" \
        in status.stdout and f"run {closed['run_id']}: step 0 shell.exec" in status.stdout
    info = json.loads(attack.cli("status", "--json").stdout)
    assert info["interrupted"]["runs"] == 1
    assert info["last_tasks"][-1]["outcome"] == "interrupted"
    doctor = attack.cli("doctor")
    assert "[warn] lmdb" in doctor.stdout, doctor.stdout
    assert "1 run(s) were interrupted" in doctor.stdout
    assert f"run {closed['run_id']}: step 0 shell.exec may have taken effect" in doctor.stdout
    assert len(_outcomes(attack.log(), "interrupted")) == 1  # closed once, not at each start


@needs_sandbox
def test_a_kill_right_after_the_grant_takes_the_sandbox_with_it_every_time(
        attack: Attack) -> None:
    """The kill lands the moment the operator has forked the sandbox's first process,
    before bubblewrap runs: the window the issue found (4 of 12 survived)."""
    attack.mode("execute-with-confirmation")
    survived = []
    rounds = 4
    for round_ in range(rounds):
        marker = _marker()
        child = _granted_run(attack, marker)
        deadline = time.monotonic() + 30
        while not _children(child.pid) and time.monotonic() < deadline:
            pass  # spin: kill within microseconds of the fork
        os.kill(child.pid, signal.SIGKILL)
        child.close(force=True)
        time.sleep(0.3)  # an unguarded chain reaches bubblewrap and sleep by then
        if left := _settle(marker, 1.0):
            survived.append(round_)
            _kill(left)
    assert survived == []
    assert attack.cli("log", "verify").returncode == 0
    assert len(_outcomes(attack.log(), "interrupted")) == rounds


@needs_sandbox
def test_the_cgroup_a_killed_operator_left_is_removed_at_the_next_start(
        attack: Attack) -> None:
    root = Path("/sys/fs/cgroup/pids")
    if not os.access(root, os.W_OK):
        pytest.skip(f"no pids cgroup can be made here ({root} is not writable)")
    attack.mode("execute-with-confirmation")
    marker = _marker()
    child = _granted_run(attack, marker)
    deadline = time.monotonic() + 30
    while not _running(marker) and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.2)
    pid = child.pid
    os.kill(pid, signal.SIGKILL)
    child.close(force=True)
    _kill(_settle(marker))
    left = list(root.glob(f"adjutant-{pid}-*"))
    assert left, "the killed operator's cgroup was expected to stay behind"
    attack.script(plan(("shell.exec", {"argv": ["true"]})))
    attack.run_granting("run something")
    assert list(root.glob(f"adjutant-{pid}-*")) == []


# -- a full disk ------------------------------------------------------------------------


class FullDisk:
    """A 2 MiB tmpfs holding the data home (``data``) and a spare directory (``work``,
    for a workspace on the same disk)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.data = root / "data"
        self.work = root / "work"
        self._readers: list[subprocess.Popen[bytes]] = []

    def fill(self) -> None:
        """Fill what is left, to the last byte."""
        fd = os.open(self.root / "filler", os.O_WRONLY | os.O_CREAT | os.O_APPEND)
        try:
            for size in (1 << 16, 1 << 12, 1):
                with contextlib.suppress(OSError):
                    while True:
                        os.write(fd, b"\0" * size)
        finally:
            os.close(fd)
        with pytest.raises(OSError, match=r"No space left|quota") as full:
            (self.root / "probe").write_bytes(b"x" * 8192)
        assert full.value.errno in (errno.ENOSPC, errno.EDQUOT)

    def free(self) -> None:
        (self.root / "filler").unlink(missing_ok=True)
        for path in self.work.glob("*"):
            path.unlink()

    def pin_pages(self) -> None:
        """Keep a read transaction open on the log from another process, so every
        commit needs new pages (LMDB cannot reuse pages a reader may still see): on a
        full disk, the very next commit fails."""
        reader = subprocess.Popen([sys.executable, "-c", (
            "import sys, time, lmdb\n"
            "env = lmdb.open(sys.argv[1], readonly=True, max_dbs=4)\n"
            "txn = env.begin()\n"
            "print('pinned', flush=True)\n"
            "time.sleep(120)\n"), str(self.data / "lmdb")], stdout=subprocess.PIPE)
        assert reader.stdout is not None and reader.stdout.readline() == b"pinned\n"
        self._readers.append(reader)

    def close(self) -> None:
        for reader in self._readers:
            reader.kill()
            reader.wait()
            assert reader.stdout is not None
            reader.stdout.close()


@pytest.fixture
def full_disk(attack: Attack) -> Iterator[FullDisk]:
    """The data home on a 2 MiB tmpfs (skipped where mount is not permitted)."""
    disk = FullDisk(attack.root / "tmpfs")
    disk.root.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(disk.root)],
                             capture_output=True, text=True, check=False)
    if mounted.returncode != 0:
        pytest.skip(f"a full disk needs a small tmpfs, and mount is not permitted here: "
                    f"{mounted.stderr.strip()}")
    try:
        disk.work.mkdir()
        shutil.copytree(attack.data, disk.data)
        attack.data = disk.data
        attack.mode("execute-with-confirmation")
        yield disk
    finally:
        disk.close()
        subprocess.run(["umount", "-l", str(disk.root)], check=False)


def _one_line_refusal(text: str) -> str:
    """The refusal line, checked: one line, the reason, never a traceback."""
    assert "Traceback" not in text, text
    lines = [line for line in text.splitlines() if "cannot write" in line]
    assert len(lines) == 1, text
    assert lines[0].startswith("adjutant: cannot write the "), text
    assert "(No space left on device)" in lines[0], text
    return lines[0]


def _run_granting(attack: Attack, request: str,
                  before_grant: Any = None) -> tuple[int | None, str]:
    """``adjutant run REQUEST`` granting every question (``before_grant()`` first);
    its exit status and what the terminal showed."""
    import pexpect

    child = attack.spawn("run", request)
    shown = ""
    while child.expect_exact([PROMPT, pexpect.EOF]) == 0:
        shown += str(child.before) + PROMPT
        if before_grant is not None:
            before_grant()
        child.sendline("g")
    shown += str(child.before)
    child.close()
    return child.exitstatus, shown


def test_a_full_disk_refuses_a_run_with_one_line(attack: Attack, full_disk: FullDisk) -> None:
    full_disk.fill()
    attack.script(plan(("fs.write", {"path": "written.txt", "content": "effect\n"})))
    status, shown = _run_granting(attack, "write the file")
    assert status == 1, shown
    assert _one_line_refusal(shown).endswith(": nothing was run")
    assert not (attack.work / "written.txt").exists()
    for command in ("chat",):  # the session refuses the same way
        done = attack.cli(command, input="write the file\n")
        assert done.returncode == 1, done
        _one_line_refusal(done.stderr)


def test_a_step_whose_intent_cannot_be_logged_never_runs(attack: Attack,
                                                         full_disk: FullDisk) -> None:
    full_disk.pin_pages()
    target = attack.work / "written.txt"
    attack.script(plan(("fs.write", {"path": "written.txt", "content": "effect\n"})))
    # everything up to the question is logged; the disk fills while the user decides
    status, shown = _run_granting(attack, "write the file", before_grant=full_disk.fill)
    assert status == 1, shown
    line = _one_line_refusal(shown)
    assert line == ("adjutant: cannot write the action log (No space left on device): "
                    "nothing was run")
    assert not target.exists()
    still_full = attack.cli("log", "verify")  # the log still reads on the full disk
    assert still_full.returncode == 0 and "Traceback" not in still_full.stderr, still_full

    full_disk.close()
    full_disk.free()
    records = attack.log()  # the next start closes the run: no step had started
    assert [r for r in records if r["kind"] == "tool_call"] == []
    (closed,) = _outcomes(records, "interrupted")
    assert closed["interrupted"]["execute_started"] is False


@needs_sandbox
def test_a_result_the_full_disk_refused_is_said_and_its_run_closed_as_interrupted(
        attack: Attack, full_disk: FullDisk) -> None:
    """The step's own effect fills the disk (the workspace shares it with the data
    home): it ran, its result cannot be logged, and Adjutant says so."""
    attack.use_workspace(full_disk.work)
    full_disk.pin_pages()
    attack.script(plan(("shell.exec", {"argv": ["sh", "-c", "head -c 4M /dev/zero > big"]})))
    status, shown = _run_granting(attack, "fill the disk")
    assert status == 1, shown
    line = _one_line_refusal(shown)
    assert "after shell.exec ran: its result may be missing from the log" in line
    assert (full_disk.work / "big").exists()  # the effect happened

    full_disk.close()
    full_disk.free()
    records = attack.log()
    assert len([r for r in records if r["kind"] == "tool_call"]) == 1  # logged before it ran
    (closed,) = _outcomes(records, "interrupted")
    assert closed["interrupted"]["tool_call_without_result"]["tool"] == "shell.exec"
    assert "1 with a tool call without a result" in attack.cli("log", "verify").stdout


def test_mcp_serve_answers_a_full_disk_with_an_error_and_keeps_serving(
        attack: Attack, full_disk: FullDisk) -> None:
    # `mcp.client.stdio` is imported before the redirect below: its `stdio_client` binds
    # `sys.stderr` as a default at import, and a file closed after this test broke every
    # later MCP test in the same worker
    import anyio
    import mcp.client.stdio  # noqa: F401

    from .test_approval_display import served

    (attack.work / "notes.txt").write_text("hello\n")
    stderr = attack.root / "serve.err"

    async def scenario() -> list[Any]:
        from mcp import MCPError

        got: list[Any] = []
        async with served(attack) as (client, _terminal):
            full_disk.fill()
            for _ in range(2):  # refused each time, the server still there
                try:
                    got.append(await client.call_tool("fs.read", {"path": "notes.txt"}))
                except MCPError as exc:
                    got.append(exc)
            full_disk.free()
            got.append(await client.call_tool("fs.read", {"path": "notes.txt"}))
        return got

    with stderr.open("w") as err, contextlib.redirect_stderr(err):
        first, second, after = anyio.run(scenario)
    for refused in (first, second):
        assert "cannot write the" in str(refused), refused
        assert "(No space left on device): nothing was run" in str(refused)
    assert "hello" in after.content[0].text
    assert "Traceback" not in stderr.read_text()


# -- a corrupt or missing database -------------------------------------------------------


def test_a_corrupt_database_fails_doctor_with_no_warning_leaking(attack: Attack) -> None:
    attack.cli("log", "verify", check=True)
    (attack.data / "lmdb" / "data.mdb").write_bytes(b"not an LMDB file" * 512)
    doctor = attack.cli("doctor")
    assert doctor.returncode == 1
    assert "[FAIL] lmdb" in doctor.stdout and "MDB_INVALID" in doctor.stdout
    for command in (("doctor",), ("status",), ("run", "hello")):
        done = attack.cli(*command)
        assert done.returncode == 1
        assert "never awaited" not in done.stderr and "Traceback" not in done.stderr


def test_a_deleted_database_is_reported_at_start_up_until_acknowledged(attack: Attack) -> None:
    attack.mode("execute-with-confirmation")
    attack.script(json.dumps({"type": "response", "text": "hello to you"}))
    attack.cli("run", "hello", check=True)
    (attack.data / "lmdb" / "data.mdb").unlink()
    for command in (("run", "hello"), ("status",), ("log", "verify")):
        done = attack.cli(*command)
        assert done.returncode == 1, done
        assert "is missing, but a log existed here" in done.stderr
        assert "adjutant log reset --yes" in done.stderr
    doctor = attack.cli("doctor")
    assert "[FAIL] lmdb" in doctor.stdout and "is missing" in doctor.stdout
    assert not (attack.data / "lmdb" / "data.mdb").exists()

    attack.cli("log", "reset", "--yes", check=True)
    verify = attack.cli("log", "verify", check=True)
    assert "was lost" in verify.stdout
