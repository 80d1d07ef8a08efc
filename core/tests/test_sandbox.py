"""The bubblewrap sandbox with real processes: what a child can and cannot do."""

from __future__ import annotations

import os
import socket
import time
from pathlib import Path

import anyio
import pytest

from adjutant import sandbox

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(sandbox.available() is not None, reason="bubblewrap is not installed"),
]


async def sh(script: str, cwd: Path, **kw: object) -> sandbox.SandboxResult:
    return await sandbox.run(["sh", "-c", script], cwd=str(cwd), **kw)  # type: ignore[arg-type]


async def test_root_is_read_only_and_only_the_cage_is_writable(tmp_path: Path) -> None:
    cage = tmp_path / "cage"
    cage.mkdir()
    result = await sh(f"echo ok > {cage}/a; echo no > {tmp_path}/b; touch /usr/x", tmp_path,
                      writable=[str(cage)])
    assert (cage / "a").read_text() == "ok\n"
    assert not (tmp_path / "b").exists()
    assert result.stderr.count("Read-only file system") == 2


async def test_no_network_not_even_loopback_of_the_host(tmp_path: Path) -> None:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    port = server.getsockname()[1]
    try:
        result = await sandbox.run(
            ["python3", "-c", f"import socket; socket.create_connection(('127.0.0.1', {port}), 2)"],
            cwd=str(tmp_path))
        assert result.returncode != 0
        assert "Connection refused" in result.stderr or "unreachable" in result.stderr
    finally:
        server.close()


async def test_clean_environment_and_refused_variables(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret")
    monkeypatch.setenv("LD_PRELOAD", "/evil.so")
    result = await sh("env", tmp_path, env={"MY_SETTING": "1"})
    names = {line.split("=", 1)[0] for line in result.stdout.splitlines()}
    assert "OPENAI_API_KEY" not in names and "LD_PRELOAD" not in names
    assert {"PATH", "HOME", "MY_SETTING"} <= names
    for bad in ("LD_PRELOAD", "PYTHONPATH", "BASH_ENV", "GIT_SSH_COMMAND", "GITHUB_TOKEN"):
        with pytest.raises(ValueError, match=bad):
            await sh("true", tmp_path, env={bad: "x"})


async def test_no_new_privileges_and_no_capabilities(tmp_path: Path) -> None:
    result = await sh("grep -E 'NoNewPrivs|CapEff' /proc/self/status", tmp_path)
    fields = dict(line.split(":\t") for line in result.stdout.splitlines())
    assert fields["NoNewPrivs"].strip() == "1"
    assert int(fields["CapEff"].strip(), 16) == 0


async def test_timeout_kills_everything_including_setsid_and_double_forks(tmp_path: Path) -> None:
    marker = tmp_path / "cage"
    marker.mkdir()
    script = (f"setsid sh -c 'sleep 2; touch {marker}/setsid' & "
              f"(sh -c 'sleep 2; touch {marker}/double' &) ; sleep 30")
    started = time.monotonic()
    result = await sh(script, tmp_path, writable=[str(marker)], timeout=1)
    assert result.timed_out and result.returncode is None
    assert time.monotonic() - started < 10
    assert "killed by Adjutant after 1s" in result.stderr
    await anyio.sleep(2.5)
    assert list(marker.iterdir()) == []  # nothing survived to write its file


async def test_children_left_behind_after_a_normal_exit_die_too(tmp_path: Path) -> None:
    marker = tmp_path / "cage"
    marker.mkdir()
    result = await sh(f"setsid sh -c 'sleep 1; touch {marker}/orphan' & echo done", tmp_path,
                      writable=[str(marker)])
    assert result.stdout == "done\n"
    await anyio.sleep(1.5)
    assert list(marker.iterdir()) == []


async def test_fork_bomb_is_contained(tmp_path: Path) -> None:
    result = await sh("b(){ b|b& }; b; sleep 30", tmp_path, timeout=3, max_processes=32)
    assert result.timed_out
    left: list[str] = []
    for _ in range(50):  # the kill is immediate; reaping a loaded machine can lag a little
        await anyio.sleep(0.2)
        ps = (await anyio.run_process(["ps", "-eo", "args"])).stdout.decode()
        left = [line for line in ps.splitlines() if line.startswith("sh -c b()")]
        if not left:
            break
    assert left == []


async def test_runaway_output_is_capped_with_a_visible_marker(tmp_path: Path) -> None:
    result = await sh("yes | head -c 5000000", tmp_path, max_output=4096)
    assert result.truncated
    assert result.stdout.endswith("[... output truncated by Adjutant at 4096 bytes ...]\n")
    assert len(result.stdout) < 4096 + 100


async def test_binary_output_and_terminal_escapes_are_neutralised(tmp_path: Path) -> None:
    binary = await sh("head -c 100 /dev/zero", tmp_path)
    assert binary.binary and binary.stdout == "<binary output, 100 bytes>"
    escapes = await sandbox.run(
        ["python3", "-c", "print('\\x1b[31mred\\x1b[0m \\x1b]0;title\\x07bell\\x07\\x08')"],
        cwd=str(tmp_path))
    assert escapes.stdout == "red bell\n"


def test_preview_is_exact_and_stable(tmp_path: Path) -> None:
    text = sandbox.preview(["git", "status", "--", "a b"], cwd="/w", writable=["/w"])
    assert text == ("run: git status -- 'a b'\ncwd: /w\nwritable: /w\nnetwork: no\n"
                    "timeout: 30s")


async def test_bad_arguments_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="argv"):
        await sandbox.run([], cwd=str(tmp_path))
    with pytest.raises(ValueError, match="NUL"):
        await sandbox.run(["echo", "a\x00b"], cwd=str(tmp_path))
    with pytest.raises(ValueError, match="not an existing directory"):
        await sandbox.run(["true"], cwd=str(tmp_path / "missing"))


def test_repository_dirs_are_found_by_reading_never_running(tmp_path: Path) -> None:
    import subprocess

    from adjutant.sandbox import repository_dirs

    repo = tmp_path / "repo"
    (repo / "src").mkdir(parents=True)
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "GIT_CONFIG_NOSYSTEM": "1"}
    for argv in (["init", "-q", "-b", "main"], ["-c", "user.name=a", "-c", "user.email=a@b",
                                                 "commit", "-q", "--allow-empty", "-m", "x"],
                 ["worktree", "add", "-q", "-b", "side", str(tmp_path / "linked")]):
        subprocess.run(["git", *argv], cwd=repo, env=env, check=True, capture_output=True)
    real = os.path.realpath
    assert repository_dirs(str(repo / "src")) == [real(repo)]
    linked = repository_dirs(str(tmp_path / "linked"))
    assert linked[0] == real(tmp_path / "linked")
    assert real(linked[2]) == real(repo / ".git")  # the common directory
    assert repository_dirs(str(tmp_path)) == []
