"""No privilege escalation through argv: every wrapper peeled, every spelling caught."""

import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from adjutant_guard._commands import ESCALATION, check_argv

ESCALATING = [
    # plain, by path, by case
    ["sudo", "id"],
    ["/usr/bin/sudo", "id"],
    ["./sudo", "id"],
    ["../../bin/sudo"],
    ["SUDO", "id"],
    ["Sudo", "-i"],
    [" sudo", "id"],
    # env: options, assignments, -S splitting
    ["env", "sudo", "id"],
    ["/usr/bin/env", "sudo"],
    ["env", "-i", "PATH=/usr/bin", "sudo", "id"],
    ["env", "-u", "HOME", "sudo"],
    ["env", "-iuHOME", "sudo"],
    ["env", "--unset=HOME", "--chdir=/tmp", "sudo"],
    ["env", "--ignore-env", "sudo"],  # an abbreviation, as getopt_long accepts
    ["env", "-", "sudo"],
    ["env", "--", "sudo"],
    ["env", "-S", "sudo id"],
    ["env", "-Ssudo id"],
    ["env", "--split-string=sudo -i"],
    ["env", "-S", "A=1 nice sudo"],
    ["A=1", "sudo"],
    # nice, timeout, nohup, stdbuf, ionice, chrt, setsid, time, command, exec
    ["nice", "sudo"],
    ["nice", "-n", "5", "sudo"],
    ["nice", "-n5", "sudo"],
    ["nice", "-10", "sudo"],
    ["nice", "--10", "sudo"],
    ["nice", "--adjustment=3", "sudo"],
    ["nice", "--adj", "3", "sudo"],
    ["timeout", "5", "sudo"],
    ["timeout", "-s", "KILL", "5s", "sudo"],
    ["timeout", "-sKILL", "-k1", "5", "sudo"],
    ["timeout", "--kill-after=1", "--preserve-status", "5", "sudo"],
    ["nohup", "sudo"],
    ["nohup", "--", "sudo"],
    ["stdbuf", "-oL", "sudo"],
    ["stdbuf", "-o", "L", "-e0", "sudo"],
    ["ionice", "-c3", "sudo"],
    ["ionice", "-c", "2", "-n", "7", "sudo"],
    ["chrt", "-f", "10", "sudo"],
    ["chrt", "10", "sudo"],
    ["chrt", "--idle", "0", "sudo"],
    ["setsid", "sudo"],
    ["setsid", "-fw", "sudo"],
    ["time", "sudo"],
    ["time", "-p", "-o", "/tmp/t", "sudo"],
    ["command", "sudo"],
    ["command", "-p", "sudo"],
    ["exec", "sudo"],
    ["exec", "-a", "innocent", "sudo"],
    # xargs, busybox, flock, unshare, chroot, taskset
    ["xargs", "sudo"],
    ["xargs", "-0", "-n1", "sudo"],
    ["xargs", "-I{}", "sudo", "{}"],
    ["xargs", "-I", "{}", "sudo", "{}"],
    ["xargs", "--replace", "sudo"],
    ["busybox", "su"],
    ["toybox", "sudo"],
    ["flock", "/tmp/lock", "sudo", "id"],
    ["flock", "-n", "/tmp/lock", "-c", "sudo id"],
    ["flock", "-w", "5", "/tmp/lock", "--command", "sudo id"],
    ["flock", "-c", "sudo id", "/tmp/lock"],
    ["unshare", "-r", "sudo"],
    ["unshare", "--map-root-user", "--fork", "sudo"],
    ["unshare", "-m/tmp/ns", "sudo"],
    ["chroot", "/", "sudo"],
    ["chroot", "--userspec=1:1", "/", "sudo"],
    ["taskset", "0x1", "sudo"],
    # chains
    ["nice", "env", "timeout", "5", "nohup", "/usr/bin/sudo", "id"],
    ["timeout", "5", "env", "-S", "nice -n 1 sudo id"],
    ["xargs", "env", "A=1", "busybox", "su"],
    # interpreters: the code, joined options, names passed outside the code
    ["bash", "-c", "sudo id"],
    ["sh", "-c", "echo hi && sudo id"],
    ["bash", "-ec", "true; sudo id"],
    ["bash", "-c", "s''udo id"],
    ["bash", "-c", "s\\udo id"],
    ["bash", "-c", '"$0" id', "sudo"],
    ["bash", "-c", "/usr/bin/sudo -n true"],
    ["zsh", "-c", "doas id"],
    ["dash", "-c", "pkexec id"],
    ["/bin/sh", "-c", "run0 id"],
    ["python3", "-c", "import os; os.system('sudo id')"],
    ["python3.11", "-c", "import subprocess; subprocess.run(['sudo', 'id'])"],
    ["python", "-Ic", "__import__('os').execvp('sudo', ['sudo'])"],
    ["python3", "-c", "import os,sys; os.execvp(sys.argv[1], sys.argv[1:])", "sudo", "id"],
    ["perl", "-e", "system('sudo id')"],
    ["perl", "-le", "exec 'su'"],
    ["ruby", "-e", "`sudo id`"],
    ["node", "-e", "require('child_process').execSync('sudo id')"],
    ["node", "--eval=require('child_process').execSync('pkexec id')"],
    ["awk", "BEGIN { system(\"sudo id\") }"],
    ["env", "bash", "-c", "SUDO id"],
    ["busybox", "sh", "-c", "su -c id"],
    # programs that run programs
    ["find", ".", "-exec", "sudo", "id", ";"],
    ["watch", "sudo id"],
    ["strace", "-f", "sudo", "id"],
    ["script", "-c", "sudo id", "/dev/null"],
    # git configuration that runs code
    ["git", "-c", "alias.x=!sudo id", "x"],
    ["env", "git", "-c", "core.pager=sudo less", "log"],
    # D-Bus, the road run0 and systemd-run take
    ["busctl", "call", "org.freedesktop.systemd1", "/org/freedesktop/systemd1"],
    ["gdbus", "call", "--system", "--dest", "org.freedesktop.systemd1"],
    # every escalation program by name
    *([name, "id"] for name in sorted(ESCALATION)),
    # unparsable wrapper, but it mentions sudo
    ["env", "--no-such-option", "sudo"],
]


@pytest.mark.parametrize("argv", ESCALATING, ids=lambda a: " ".join(a)[:60])
def test_escalation_is_denied(argv: list[str]) -> None:
    check = check_argv(argv)
    assert check.decision == "deny", check
    assert "never escalates privileges" in check.reason


HARMLESS = [
    ["ls", "-l"],
    ["git", "status"],
    ["git", "commit", "-m", "fix the sudo docs"],  # a message, not configuration
    ["grep", "-r", "sudo", "."],  # not a program runner: a search for the word is fine
    ["env", "FOO=1", "ls"],
    ["env"],
    ["nice", "-n", "5", "make"],
    ["timeout", "5", "pytest", "-q"],
    ["xargs", "-0", "rm"],
    ["bash", "-c", "ls -l"],
    ["python3", "-c", "print('pseudo-code')"],  # "sudo" inside a word
    ["python3", "-c", "import sudoku"],
    ["sudoku"],
    ["chrt", "-p", "1234"],
    ["ionice", "-p", "1234"],
    ["busybox", "--list"],
    ["flock", "3"],
    ["A=1"],
]


@pytest.mark.parametrize("argv", HARMLESS, ids=lambda a: " ".join(a)[:60])
def test_ordinary_commands_pass(argv: list[str]) -> None:
    assert check_argv(argv).decision is None


@pytest.mark.parametrize(
    "argv",
    [["env", "-Q", "ls"], ["nice", "-n"], ["timeout", "--ver", "5", "ls"], ["env", "-S", "'"]],
)
def test_unparsable_wrapper_asks(argv: list[str]) -> None:
    check = check_argv(argv)
    assert check.decision == "ask"
    assert check.reason.startswith(f"cannot tell which command {argv[0]} runs")


@pytest.mark.parametrize(
    "argv", [[], "sudo id", ["ls", 3], [None], ["ls", "a\x00b"], {"0": "ls"}]
)
def test_malformed_argv_is_denied(argv: Any) -> None:
    assert check_argv(argv).decision == "deny"


def test_depth_limit() -> None:
    check = check_argv(["nice"] * 40 + ["ls"])
    assert (check.decision, "levels deep" in check.reason) == ("deny", True)


def test_heads_list_each_layer() -> None:
    assert check_argv(["env", "A=1", "nice", "./tool", "x"]).heads == ("env", "nice", "./tool")


def test_reason_names_the_wrappers_peeled() -> None:
    reason = check_argv(["env", "nice", "timeout", "5", "sudo"]).reason
    assert "env → nice → timeout" in reason


# -- through the policy, with real files ---------------------------------------------

@pytest.mark.anyio
async def test_guard_denies_sudo_for_a_shell_tool(world: Any, guard: Any) -> None:
    for argv in (["env", "sudo", "id"], ["bash", "-c", "sudo id"], ["timeout", "5", "sudo"]):
        verdict = await guard.evaluate(world.write("shell.run", argv=argv))
        assert (verdict.decision, verdict.policy) == ("deny", "guard"), argv
        assert "sudo" in verdict.reason


@pytest.mark.anyio
async def test_guard_asks_for_ordinary_commands(world: Any, guard: Any) -> None:
    verdict = await guard.evaluate(world.write("shell.run", argv=["ls", "-l"]))
    assert verdict.decision == "ask"  # a command runs: the baseline for writes


SU = shutil.which("su") or ""


@pytest.mark.anyio
@pytest.mark.skipif(not SU, reason="no su on this machine")
async def test_symlink_to_an_escalation_program_is_denied(world: Any, guard: Any) -> None:
    """`./helper` looks innocent; it is a link to su."""
    os.symlink(SU, world.cage / "helper")
    verdict = await guard.evaluate(world.write("shell.run", argv=["./helper", "-c", "id"]))
    assert verdict.decision == "deny"
    assert "privilege-escalation program su" in verdict.reason
    # The same through a wrapper.
    verdict = await guard.evaluate(world.write("shell.run", argv=["nice", "./helper"]))
    assert verdict.decision == "deny"


@pytest.mark.anyio
@pytest.mark.skipif(not SU, reason="no su on this machine")
async def test_hard_link_to_an_escalation_program_is_denied(world: Any, guard: Any) -> None:
    """A hard link has no target to read: its set-user-ID bit or inode gives it away."""
    try:
        os.link(os.path.realpath(SU), world.cage / "innocent")
    except OSError as exc:  # another file system, or protected_hardlinks for non-root
        pytest.skip(f"cannot hard-link {SU}: {exc}")
    verdict = await guard.evaluate(world.write("shell.run", argv=["./innocent", "-c", "id"]))
    assert verdict.decision == "deny"
    assert "set-user-ID" in verdict.reason or "hard link to a privilege" in verdict.reason


@pytest.mark.anyio
async def test_hard_link_to_a_non_setuid_escalation_program_is_denied(
    world: Any, guard: Any, tmp_path: Path
) -> None:
    """systemd-run is not set-user-ID; a hard link to it is caught by its inode."""
    from adjutant_guard._policy import Rules  # the rules behind the Guard facade

    fake_bin = tmp_path / "bin"
    fake_bin.mkdir()
    (fake_bin / "systemd-run").write_text("#!/bin/sh\n")
    (fake_bin / "systemd-run").chmod(0o755)
    os.link(fake_bin / "systemd-run", world.cage / "runner")
    g = Rules()
    g._escalation_inodes = frozenset(  # as if tmp_path/bin were /usr/bin
        {(os.stat(fake_bin / "systemd-run").st_dev, os.stat(fake_bin / "systemd-run").st_ino)}
    )
    verdict = await g.evaluate(world.write("shell.run", argv=["./runner"]))
    assert verdict.decision == "deny"
    assert "hard link to a privilege-escalation program" in verdict.reason


@pytest.mark.anyio
@pytest.mark.skipif(not SU, reason="no su on this machine")
async def test_path_argument_resolving_to_su_is_denied_when_executed(
    world: Any, guard: Any
) -> None:
    os.symlink(SU, world.cage / "tool")
    run = world.write(
        "shell.exec", roles={"program": "path", "argv": "argv"}, program="tool", argv=["x"]
    )
    verdict = await guard.evaluate(run)
    assert verdict.decision == "deny"
    assert "su" in verdict.reason
    # A read-only tool looking at the same file executes nothing.
    read = world.request("files.stat", path="tool")
    assert (await guard.evaluate(read)).decision == "ask"  # outside the cage once resolved
