"""shell.exec with real processes: refusals, and what the sandbox makes impossible."""

from __future__ import annotations

import os
import shutil
import socket
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st

from adjutant.safety import sandbox
from adjutant.testing import needs_sandbox, outliving
from adjutant_hookspecs import ExecutionResult, ToolCall, ToolContext
from adjutant_system import ShellExec

pytestmark = pytest.mark.anyio


def call(**args: Any) -> ToolCall:
    return ToolCall(tool="shell.exec", args=args, dry_run=False)


async def run(tmp_path: Path, argv: Any, cages: tuple[str, ...] = (), tool: ShellExec | None = None,
              **args: Any) -> ExecutionResult:
    ctx = ToolContext(cwd=str(tmp_path), cages=cages)
    return await (tool or ShellExec()).execute(call(argv=argv, **args), ctx)


@pytest.mark.parametrize(("argv", "rule"), [
    ("ls -la | grep x", "no-shell-string"),
    (["ls -la | grep x"], "no-shell-string"),
    ([], "argv"),
    ([""], "argv-empty-program"),
    (["   "], "argv-empty-program"),
    (["ls\x00", "-l"], "argv-nul"),
    (["echo", "a\x00b"], "argv-nul"),
    (["sudo", "id"], "no-privilege-escalation"),
    (["/usr/bin/SUDO", "id"], "no-privilege-escalation"),
    (["pkexec", "id"], "no-privilege-escalation"),
    (["run0", "id"], "no-privilege-escalation"),
    (["echo", 3], "argv"),
])
async def test_refused_before_anything_runs(tmp_path: Path, argv: Any, rule: str) -> None:
    ctx = ToolContext(cwd=str(tmp_path), cages=(str(tmp_path),))
    for method in (ShellExec().dry_run, ShellExec().execute):
        result = await method(call(argv=argv), ctx)
        assert result.status == "error"
        assert f"refused by rule `{rule}`" in result.stderr, result.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("seconds", [0, -1, 601, True, "5"])
async def test_timeout_is_bounded(tmp_path: Path, seconds: Any) -> None:
    result = await run(tmp_path, ["true"], timeout=seconds)
    assert "refused by rule `timeout`" in result.stderr


async def test_dry_run_is_exactly_the_sandbox_preview(tmp_path: Path) -> None:
    ctx = ToolContext(cwd=str(tmp_path), cages=(str(tmp_path), "/elsewhere"))
    result = await ShellExec().dry_run(call(argv=["git", "status", "a b"], timeout=7), ctx)
    assert result.status == "dry_run"
    assert result.dry_run_diff == sandbox.preview(
        ["git", "status", "a b"], cwd=str(tmp_path), writable=[str(tmp_path), "/elsewhere"],
        network=False, timeout=7)


async def test_a_program_that_is_not_here_is_said_in_the_preview(tmp_path: Path) -> None:
    """Gibberish planned as a command ("asdf qwer zxcv"): the preview says no such
    program exists, so nobody approves a run that cannot start; a real one is not
    flagged, nor an executable file in the folder named by its path."""
    ctx = ToolContext(cwd=str(tmp_path), cages=(str(tmp_path),))
    made_up = await ShellExec().dry_run(call(argv=["asdf", "qwer"]), ctx)
    assert made_up.status == "dry_run"
    assert "no program named 'asdf' on PATH" in (made_up.dry_run_diff or "")
    real = await ShellExec().dry_run(call(argv=["ls", "-la"]), ctx)
    assert "note:" not in (real.dry_run_diff or "")
    script = tmp_path / "go.sh"
    script.write_text("#!/bin/sh\necho hi\n")
    script.chmod(0o755)
    here = await ShellExec().dry_run(call(argv=["./go.sh"]), ctx)
    assert "note:" not in (here.dry_run_diff or "")
    gone = await ShellExec().dry_run(call(argv=["./gone.sh"]), ctx)
    assert "'./gone.sh' is not an executable file here" in (gone.dry_run_diff or "")


@given(st.lists(st.text(max_size=20), max_size=6))
def test_any_argv_is_refused_or_previewed_never_raises(argv: list[str]) -> None:
    ctx = ToolContext(cwd="/w", cages=("/w",))
    result = anyio.run(ShellExec().dry_run, call(argv=argv), ctx)
    if result.status == "dry_run":
        assert argv and argv[0].strip() and not any("\x00" in a for a in argv)
        preview = sandbox.preview(argv, cwd="/w", writable=["/w"]).rstrip("\n")
        assert result.dry_run_diff is not None and result.dry_run_diff.startswith(preview)
        program = os.path.realpath(os.path.join("/w", argv[0]))
        runnable = (not program.startswith("/w/") or (os.path.isfile(program)
                    and os.access(program, os.X_OK))) \
            if "/" in argv[0] else shutil.which(argv[0]) is not None
        assert ("note:" in result.dry_run_diff[len(preview):]) != runnable
    else:
        assert result.status == "error" and "refused by rule" in result.stderr


@needs_sandbox
async def test_exit_status_duration_and_output(tmp_path: Path) -> None:
    ok = await run(tmp_path, ["echo", "hi"])
    assert (ok.status, ok.stdout, ok.stderr) == ("ok", "hi\n", "[exit status: 0]\n")
    failed = await run(tmp_path, ["sh", "-c", "echo oops >&2; exit 3"])
    assert (failed.status, failed.stderr) == ("error", "oops\n[exit status: 3]\n")
    slow = await run(tmp_path, ["sleep", "0.2"])
    assert slow.duration_ms >= 200


@needs_sandbox
async def test_sh_c_cannot_write_outside_the_cages(tmp_path: Path) -> None:
    cage = tmp_path / "cage"
    cage.mkdir()
    script = f"echo ok > {cage}/a; echo no > {tmp_path}/b; echo no > /etc/adjutant-x; true"
    result = await run(tmp_path, ["sh", "-c", script], cages=(str(cage),))
    assert (cage / "a").read_text() == "ok\n"
    assert not (tmp_path / "b").exists() and not Path("/etc/adjutant-x").exists()
    assert result.stderr.count("Read-only file system") == 2


@needs_sandbox
async def test_sh_c_has_no_network(tmp_path: Path) -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        code = f"import socket; socket.create_connection(('127.0.0.1', {port}), 2)"
        result = await run(tmp_path, ["sh", "-c", f'python3 -c "{code}"'])
    assert result.status == "error"
    assert "Connection refused" in result.stderr or "unreachable" in result.stderr
    lookup = "import socket; socket.getaddrinfo('example.com', 80)"
    dns = await run(tmp_path, ["python3", "-c", lookup])
    assert dns.status == "error" and "gaierror" in dns.stderr


@needs_sandbox
async def test_environment_secrets_do_not_reach_the_child(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ADJUTANT_TEST_PLAIN", "plain-value-123")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-456")
    monkeypatch.setenv("LD_PRELOAD", "/evil.so")
    result = await run(tmp_path, ["sh", "-c", "env; cat /proc/self/environ"])
    assert result.status == "ok"
    for leaked in ("plain-value-123", "sk-secret-456", "/evil.so"):
        assert leaked not in result.stdout


@needs_sandbox
async def test_runaway_output_is_capped_with_a_marker(tmp_path: Path) -> None:
    tool = ShellExec(max_output=4096)
    result = await run(tmp_path, ["sh", "-c", "yes | head -c 5000000"], tool=tool)
    assert result.stdout.endswith("[... output truncated by Adjutant at 4096 bytes ...]\n")
    assert len(result.stdout) < 4096 + 100
    endless = await run(tmp_path, ["yes"], tool=tool, timeout=1)
    assert len(endless.stdout) < 4096 + 100 and "killed at the timeout" in endless.stderr


@needs_sandbox
async def test_timeout_leaves_no_survivors_setsid_or_double_fork(tmp_path: Path) -> None:
    cage = tmp_path / "cage"
    cage.mkdir()
    script = (f"setsid sh -c 'sleep 2; touch {cage}/setsid' & "
              f"(sh -c 'sleep 2; touch {cage}/double' &) ; sleep 30")
    started = time.monotonic()
    result = await run(tmp_path, ["sh", "-c", script], cages=(str(cage),), timeout=1)
    assert time.monotonic() - started < 10
    assert result.status == "error"
    assert result.stderr.endswith("[exit status: none, killed at the timeout]\n")
    await anyio.sleep(2.5)
    assert list(cage.iterdir()) == []


@needs_sandbox
async def test_fork_bomb_is_contained(tmp_path: Path) -> None:
    tool = ShellExec(max_processes=32)
    result = await run(tmp_path, ["sh", "-c", "b(){ b|b& }; b; sleep 30"], tool=tool, timeout=3)
    # either the timeout ends it, or the process limit already stops the shell itself
    # from forking its `sleep` (a loaded machine decides which): contained both ways
    assert result.status == "error", result
    assert "killed at the timeout" in result.stderr or "Cannot fork" in result.stderr
    assert await outliving("sh -c b()") == []  # none outlives the sandbox


@needs_sandbox
async def test_missing_cage_is_refused(tmp_path: Path) -> None:
    result = await run(tmp_path, ["true"], cages=(str(tmp_path / "missing"),))
    assert "refused by rule `sandbox`" in result.stderr
