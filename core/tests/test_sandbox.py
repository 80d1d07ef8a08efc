"""The bubblewrap sandbox with real processes: what a child can and cannot do."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest

from adjutant.safety import sandbox
from adjutant.safety.protection import Shield
from adjutant.testing import needs_sandbox, outliving

pytestmark = [
    pytest.mark.anyio,
    needs_sandbox,
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
    # either the timeout ends it, or the process limit already stops the shell itself
    # from forking its `sleep` (a loaded machine decides which): contained both ways
    assert result.timed_out or "Cannot fork" in result.stderr, result
    assert await outliving("sh -c b()") == []


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

    from adjutant.safety.sandbox import repository_dirs

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


# -- the sandbox dies with Adjutant, always --------------------------------------------------

#: An operator process that starts one sandboxed ``sleep`` (argv[1]: its unique duration).
OPERATOR = """
import sys, anyio
from adjutant.safety import sandbox
anyio.run(lambda: sandbox.run(["sleep", sys.argv[1]], cwd=sys.argv[2], timeout=60))
"""


def _children(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        with contextlib.suppress(OSError):
            found += [int(c) for c in (task / "children").read_text().split()]
    return found


def _running(marker: str) -> list[int]:
    """Processes whose command line holds ``marker`` (zombies excluded)."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            if marker.encode() in (proc / "cmdline").read_bytes() and \
                    " Z " not in (proc / "stat").read_text().rsplit(")", 1)[1][:3]:
                found.append(int(proc.name))
        except OSError:
            pass
    return found


def _kill_all(pids: list[int]) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs Linux /proc")
def test_a_kill_right_after_the_sandbox_is_forked_takes_the_sandbox_with_it(
        tmp_path: Path) -> None:
    """The operator is SIGKILLed the moment its sandbox child exists, before bubblewrap
    runs (so before bubblewrap's own --die-with-parent): the child must die or not
    start, never run on reparented to init."""
    survived = []
    for round_ in range(6):
        marker = f"29.{os.getpid() % 1000:03d}{round_}{time.time_ns() % 10**6:06d}"
        operator = subprocess.Popen([sys.executable, "-c", OPERATOR, marker, str(tmp_path)])
        deadline = time.monotonic() + 20
        while not _children(operator.pid) and time.monotonic() < deadline \
                and operator.poll() is None:
            pass  # spin: the kill must land within microseconds of the fork
        os.kill(operator.pid, signal.SIGKILL)
        operator.wait()
        time.sleep(0.5)  # long enough for an unguarded chain to reach sleep
        left = _running(marker)
        for _ in range(20):  # a dying sandbox may take a moment to be reaped
            if not left:
                break
            time.sleep(0.1)
            left = _running(marker)
        if left:
            survived.append((round_, [_describe_process(pid) for pid in left]))
            _kill_all(left)
    assert survived == []


def _describe_process(pid: int) -> str:
    """What a survivor is, for the failure message: its parent, the parent-death
    signal it would get (not in /proc: shown as the command line and its states)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
        fields = dict(line.split(":\t", 1) for line in status.splitlines() if ":\t" in line)
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[:4]
        return (f"{pid} ppid={fields.get('PPid', '?').strip()} "
                f"nspid={fields.get('NSpid', '?').strip()} uid={fields.get('Uid', '?')} "
                f"caps={fields.get('CapEff', '?').strip()} argv={argv}")
    except OSError as exc:
        return f"{pid} ({exc.strerror})"


def test_stale_cgroups_of_dead_processes_are_removed_with_what_is_in_them() -> None:
    root = Path("/sys/fs/cgroup/pids")
    if not os.access(root, os.W_OK):
        pytest.skip(f"cannot make a pids cgroup here ({root} is not writable)")
    gone = subprocess.Popen(["true"])
    gone.wait()  # a pid that no longer runs
    stale = root / f"adjutant-{gone.pid}-123"
    live = root / f"adjutant-{os.getpid()}-456"  # this process's: left alone
    stale.mkdir()
    live.mkdir()
    survivor = subprocess.Popen(["sleep", "30"])
    try:
        (stale / "cgroup.procs").write_text(str(survivor.pid))
        removed = sandbox.remove_stale_cgroups()
        assert str(stale) in removed and not stale.exists()
        assert live.exists()
        assert survivor.wait(timeout=5) == -signal.SIGKILL  # what the sandbox left: killed
    finally:
        survivor.kill()
        for path in (stale, live):
            with contextlib.suppress(OSError):
                path.rmdir()


async def test_without_setpriv_the_guard_is_set_by_python(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    which = sandbox.shutil.which
    monkeypatch.setattr(sandbox.shutil, "which",
                        lambda name: None if name == "setpriv" else which(name))
    result = await sh("grep -c . /proc/self/status; echo ok", tmp_path)
    assert result.returncode == 0 and result.stdout.endswith("ok\n")
    assert sandbox._guarded(["true"], None)[:2] == [sys.executable, "-S"]


# -- what protects the user stays out of reach ----------------------------------------------


def _home(tmp_path: Path) -> tuple[Path, Shield]:
    """A home with a key, a start-up file, a config directory and a data home in it."""
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text("KEY\n")
    (home / ".bashrc").write_text("# rc\n")
    (home / ".config").mkdir()
    (home / "projects").mkdir()
    data = home / ".local" / "share" / "adjutant"
    data.mkdir(parents=True)
    (data / "checkpoints.jsonl").write_text("{}\n")
    return home, Shield(str(home), str(data))


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                   env={"PATH": "/usr/bin:/bin", "HOME": str(repo)})


async def test_protected_paths_in_a_cage_are_read_only_the_rest_writable(
        tmp_path: Path) -> None:
    cage = tmp_path / "cage"
    (cage / "sub" / ".vscode").mkdir(parents=True)
    (cage / "keys").mkdir()
    files = {cage / ".envrc": "a\n", cage / "sub" / ".vscode" / "mcp.json": "{}\n",
             cage / "keys" / "id_ed25519": "k\n", cage / ".env": "X=1\n"}
    for path, text in files.items():
        path.write_text(text)
    _git(cage, "init", "-q")
    config = (cage / ".git" / "config").read_bytes()
    result = await sh("for f in .envrc sub/.vscode/mcp.json keys/id_ed25519 .env .git/config "
                      ".git/hooks/pre-commit .git/info/attributes .git/commondir; do "
                      "echo x >> $f; done; mv sub gone; mv .git g; mv keys k2; "
                      "echo ok > plain.txt; echo ok > sub/plain.txt; git add plain.txt; "
                      "echo rc=$?", cage, writable=[str(cage)], shield=Shield(str(tmp_path)))
    assert {path: path.read_text() for path in files} == files
    assert (cage / ".git" / "config").read_bytes() == config
    assert not (cage / ".git" / "hooks" / "pre-commit").exists()
    assert not (cage / ".git" / "commondir").exists()  # the placeholder is gone again
    assert (cage / "sub").is_dir() and (cage / ".git").is_dir() and (cage / "keys").is_dir()
    assert (cage / "plain.txt").read_text() == (cage / "sub" / "plain.txt").read_text() == "ok\n"
    assert result.stdout.endswith("rc=0\n"), result.stderr  # git still writes its index
    assert result.stderr.count("Read-only file system") >= 7, result.stderr


async def test_secrets_and_the_data_home_are_hidden_even_without_a_cage(
        tmp_path: Path) -> None:
    home, shield = _home(tmp_path)
    result = await sh("ls -A .ssh .local/share/adjutant; cat .ssh/id_rsa; "
                      "cat .local/share/adjutant/checkpoints.jsonl; cat .bashrc",
                      home, shield=shield)
    assert "KEY" not in result.stdout and "{}" not in result.stdout
    assert "id_rsa" not in result.stdout and "checkpoints" not in result.stdout
    assert "# rc" in result.stdout  # a protected file that is no secret stays readable


async def test_at_home_nothing_protected_can_be_created_and_nothing_is_left_behind(
        tmp_path: Path) -> None:
    home, shield = _home(tmp_path)
    before = sorted(str(p.relative_to(home)) for p in home.rglob("*"))
    result = await sh(f"H={home}; echo x >> $H/.bashrc; echo x > $H/.profile; "
                      "mkdir -p $H/.config/autostart $H/.aws; echo k >> $H/.ssh/authorized_keys; "
                      "echo f >> $H/.local/share/adjutant/checkpoints.jsonl; "
                      "mv $H/.config $H/c2; mv $H/.local/share $H/s2; "
                      "echo ok > $H/projects/a.txt; mkdir $H/projects/deep && "
                      "echo ok > $H/projects/deep/b.txt", home, writable=[str(home)],
                      shield=shield)
    assert (home / "projects" / "a.txt").read_text() == "ok\n"
    assert (home / "projects" / "deep" / "b.txt").read_text() == "ok\n"
    after = sorted(str(p.relative_to(home)) for p in home.rglob("*"))
    assert sorted(set(after) - set(before)) == ["projects/a.txt", "projects/deep",
                                                "projects/deep/b.txt"], result.stderr
    assert (home / ".bashrc").read_text() == "# rc\n"
    assert (home / ".local/share/adjutant/checkpoints.jsonl").read_text() == "{}\n"


async def test_a_link_to_a_protected_file_does_not_open_it(tmp_path: Path) -> None:
    home, shield = _home(tmp_path)
    dotfiles = home / "projects" / "dotfiles"
    dotfiles.mkdir()
    (dotfiles / "zshrc").write_text("# zsh\n")
    (home / ".zshrc").symlink_to(dotfiles / "zshrc")
    os.link(home / ".bashrc", home / "projects" / "twin")  # a second name, no link to see
    await sh(f"H={home}; echo x >> $H/.zshrc; rm $H/.zshrc; echo x > $H/.zshrc; "
             "echo x >> $H/projects/twin", home, writable=[str(home)], shield=shield)
    assert (home / ".zshrc").is_symlink() and (dotfiles / "zshrc").read_text() == "# zsh\n"
    assert (home / ".bashrc").read_text() == "# rc\n"


async def test_git_placeholders_mean_what_their_absence_meant(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    hooks = repo / ".git" / "hooks"
    for hook in hooks.iterdir():
        hook.unlink()
    hooks.rmdir()
    # while the run holds them, git outside the sandbox still sees the same repository
    result = await sh(f"mkdir .git/hooks; echo x > .git/hooks/pre-commit; "
                      f"git -C {repo} rev-parse --git-common-dir; cat .git/commondir",
                      repo, writable=[str(repo)], shield=Shield(str(tmp_path)))
    assert result.stdout.splitlines()[-1] == "."
    assert not (repo / ".git" / "hooks").exists()
    assert not (repo / ".git" / "commondir").exists()


def test_the_walk_stops_at_its_budget_and_skips_huge_trees(tmp_path: Path) -> None:
    cage = tmp_path / "cage"
    for i in range(30):
        (cage / f"d{i}").mkdir(parents=True)
        (cage / f"d{i}" / "f.txt").write_text("")
    (cage / "node_modules" / "x").mkdir(parents=True)
    (cage / "node_modules" / "x" / ".envrc").write_text("")
    (cage / ".envrc").write_text("")
    layout = sandbox.sandbox_layout(Shield(str(tmp_path)), [str(cage)], budget=10)
    assert layout.exhausted and layout.walked == 10
    layout.close()
    layout = sandbox.sandbox_layout(Shield(str(tmp_path)), [str(cage)])
    assert not layout.exhausted and str(cage / ".envrc") in layout.args
    assert not any("node_modules" in arg for arg in layout.args)
    layout.close()


def test_doctor_removes_and_reports_what_a_killed_adjutant_left(tmp_path: Path) -> None:
    """A SIGKILLed server left its pids cgroup until the next sandboxed run: `adjutant
    doctor` removes such leftovers and says so."""
    import json
    import sys

    root = Path("/sys/fs/cgroup/pids")
    if not os.access(root, os.W_OK) or sandbox.available() is not None:
        pytest.skip(f"cannot make a pids cgroup here ({root} is not writable)")
    gone = subprocess.Popen(["true"])
    gone.wait()
    stale = root / f"adjutant-{gone.pid}-789-s1"
    stale.mkdir()
    try:
        assert str(stale) in sandbox.stale_cgroups()
        done = subprocess.run([str(Path(sys.executable).with_name("adjutant")), "doctor",
                               "--json"], capture_output=True, text=True, timeout=120,
                              env={**os.environ, "ADJUTANT_HOME": str(tmp_path / "home")},
                              check=False)
        checks = {c["check"]: c for c in json.loads(done.stdout)}
        assert checks["sandbox"]["status"] == "ok", checks["sandbox"]
        assert not stale.exists()
        # (another test's doctor, in a parallel worker, may have reaped it first)
        assert "removed" in checks["sandbox"]["message"] or not stale.exists()
    finally:
        with contextlib.suppress(OSError):
            stale.rmdir()


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs Linux /proc")
def test_a_command_that_leaves_its_session_and_ignores_signals_ends_at_the_timeout(
        tmp_path: Path) -> None:
    """An outsider's escape from a timeout: the sandboxed command double-forks into a
    new session that ignores TERM and HUP (outside the guard's process group, as
    bubblewrap's own setsid is). The guard's tree kill must still end it."""
    marker = f"30.{os.getpid() % 1000:03d}{time.time_ns() % 10**6:06d}"  # seconds
    script = (f'setsid sh -c \'trap "" TERM HUP; exec sleep {marker}\' & '
              f'setsid sh -c \'trap "" TERM HUP; sleep {marker}\' & sleep 30')

    async def main() -> sandbox.SandboxResult:
        return await sandbox.run(["sh", "-c", script], cwd=str(tmp_path), timeout=2)

    result = anyio.run(main)
    assert result.timed_out
    left = _running(marker)
    for _ in range(20):
        if not left:
            break
        time.sleep(0.1)
        left = _running(marker)
    _kill_all(left)
    assert left == [], [_describe_process(pid) for pid in left]
