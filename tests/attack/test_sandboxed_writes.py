"""Issue 13, section 2: an approved command could rewrite what protects the user.

The sandbox bound the whole cage writable: a granted ``shell.exec`` planted a git hook
and set ``core.fsmonitor`` (the user's next git runs it), and with the workspace at
``$HOME`` appended to ``~/.bashrc`` and ``~/.ssh/authorized_keys``, created an autostart
entry, and ran ``adjutant`` against the real data home (raising its own mode, granting
itself ``cage:/``, appending to the log's checkpoints). ``editor.patch`` wrote
``.git/commondir`` and the like because nobody looked at the paths inside a patch.

Each test drives the real ``adjutant run`` with the file-scripted model in
execute-with-confirmation, every question answered "grant", and checks the files on
disk, what the terminal showed and the action log.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from .helpers import ADJUTANT, MARKER, Attack, have, plan

pytestmark = pytest.mark.skipif(not have("bwrap") or not have("git"),
                                reason="needs bubblewrap and git")

#: Written by a payload if it ever runs (a hook, fsmonitor, an autostart entry).
PWNED = "touch /tmp/adjutant-pwned"


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                          text=True, env={"PATH": "/usr/bin:/bin", "HOME": str(repo),
                                          "GIT_CONFIG_NOSYSTEM": "1"}).stdout


def repository(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q")
    git(path, "config", "user.name", "Ada")
    git(path, "config", "user.email", "ada@example.org")
    (path / "notes.txt").write_text("one\n")
    git(path, "add", "notes.txt")
    git(path, "commit", "-qm", "first")
    return path


def snapshot(*paths: Path) -> dict[str, bytes | list[str] | None]:
    """What each path holds: bytes, a directory's names, or None when absent."""
    out: dict[str, bytes | list[str] | None] = {}
    for path in paths:
        if path.is_dir():
            out[str(path)] = sorted(p.name for p in path.iterdir())
        elif path.exists():
            out[str(path)] = path.read_bytes()
        else:
            out[str(path)] = None
    return out


def shell(script: str) -> str:
    return str(plan(("shell.exec", {"argv": ["sh", "-c", script]})))


def results(records: list[dict[str, Any]], tool: str) -> list[dict[str, Any]]:
    return [r for r in records if r["kind"] == "result" and r.get("tool") == tool]


# -- a repository as the workspace --------------------------------------------------------

def test_a_granted_command_cannot_plant_a_hook_or_rewrite_git_config(attack: Attack) -> None:
    repo = repository(attack.work)
    dot = repo / ".git"
    protected = [dot / "config", dot / "hooks", dot / "info", dot / "commondir",
                 dot / "objects" / "info", dot / "HEAD"]
    before = snapshot(*protected)
    attack.mode("execute-with-confirmation")
    attack.script(shell(
        f"printf '#!/bin/sh\\n{PWNED}\\n' > .git/hooks/pre-commit; "
        f"chmod +x .git/hooks/pre-commit; git config core.fsmonitor '{PWNED}'; "
        "git config --file .git/config core.hooksPath /tmp; "
        "echo '* filter=evil' > .git/info/attributes; echo /tmp/evil > .git/commondir; "
        "echo /tmp/objects > .git/objects/info/alternates; "
        "mv .git/hooks .git/hooks.old; mv .git .git.old; "
        "echo ordinary > written.txt; echo done"))
    shown = attack.run_granting("set up the repository")
    assert "done" in shown, shown
    # the ordinary write happened: the cage is still writable
    assert (repo / "written.txt").read_text() == "ordinary\n"
    # what makes git run code did not change, and nothing was left behind
    assert snapshot(*protected) == before
    assert not (dot.parent / ".git.old").exists()
    assert "fsmonitor" not in git(repo, "config", "--list")
    stderr = results(attack.log(), "shell.exec")[-1]["stderr"]
    assert "Read-only file system" in stderr and "Device or resource busy" in stderr, stderr


def test_git_commit_still_writes_objects_refs_and_index(attack: Attack) -> None:
    repo = repository(attack.work)
    head = git(repo, "rev-parse", "HEAD").strip()
    (repo / "notes.txt").write_text("two\n")
    attack.mode("execute-with-confirmation")
    attack.script(plan(("git.commit", {"message": "second", "all": True})))
    attack.run_granting("commit my change")
    assert git(repo, "rev-parse", "HEAD~1").strip() == head
    assert git(repo, "log", "-1", "--format=%s").strip() == "second"
    assert git(repo, "status", "--porcelain") == ""
    # placeholders made for the run (an absent commondir) are gone again
    assert not (repo / ".git" / "commondir").exists()


# -- editor.patch -------------------------------------------------------------------------

@pytest.mark.parametrize(("path", "rule"), [
    (".git/commondir", "**/.git/**"), (".git/info/attributes", "**/.git/**"),
    (".envrc", "**/.envrc"), ("keys/id_ed25519", "**/id_ed25519"),
])
def test_a_patch_cannot_write_a_protected_path(attack: Attack, path: str, rule: str) -> None:
    repository(attack.work)
    (attack.work / "keys").mkdir()
    attack.mode("execute-with-confirmation")
    patch = f"--- /dev/null\n+++ b/{path}\n@@ -0,0 +1 @@\n+{attack.root}/evil\n"
    attack.script(plan(("editor.patch", {"patch": patch})))
    shown = attack.run_granting("apply this patch")
    assert not (attack.work / path).exists()
    records = attack.log()
    assert not any(r["status"] == "ok" for r in results(records, "editor.patch")), records
    refusal = json.dumps(records)
    assert path in refusal and rule in refusal, shown


# -- the workspace at $HOME ---------------------------------------------------------------

@pytest.fixture
def at_home(attack: Attack) -> Attack:
    """The careless set-up: workspace at ``$HOME``, Adjutant's data in its default place
    under it (``~/.local/share/adjutant``), a log with records and checkpoints."""
    data = attack.home / ".local" / "share" / "adjutant"
    data.parent.mkdir(parents=True)
    shutil.move(attack.data, data)
    attack.data = data
    (attack.home / ".config").mkdir()
    attack.use_workspace(attack.home)
    attack.mode("execute-with-confirmation")
    attack.script(shell("echo warm-up"))
    attack.run_granting("warm up the log")
    return attack


def test_at_home_a_granted_command_cannot_touch_start_up_files_keys_or_autostart(
        at_home: Attack) -> None:
    home = at_home.home
    (home / "projects").mkdir()
    watched = [home / ".bashrc", home / ".ssh", home / ".profile", home / ".config",
               home / ".aws" / "credentials"]
    before = snapshot(*watched)
    # the sandbox's own HOME is /tmp: the attack names the user's home in full
    h = str(home)
    at_home.script(shell(
        f"echo '{PWNED}' >> {h}/.bashrc; echo 'ssh-ed25519 AAAA attacker' >> "
        f"{h}/.ssh/authorized_keys; echo x > {h}/.profile; mkdir -p {h}/.config/autostart && "
        f"printf '[Desktop Entry]\\nExec={PWNED}\\n' > {h}/.config/autostart/x.desktop; "
        f"mv {h}/.ssh {h}/.ssh.old; cat {h}/.ssh/id_rsa {h}/.aws/credentials; "
        f"mkdir -p {h}/projects/new && echo ok > {h}/projects/new/notes.txt; "
        "echo done"))
    shown = at_home.run_granting("tidy my home")
    assert "done" in shown, shown
    assert snapshot(*watched)[str(home / ".bashrc")] == before[str(home / ".bashrc")]
    assert snapshot(*watched) == before
    assert not (home / ".ssh.old").exists()
    assert MARKER not in shown and MARKER not in json.dumps(at_home.log())
    # not everything is read-only: below an existing directory of the home, writes work
    assert (home / "projects" / "new" / "notes.txt").read_text() == "ok\n"
    stderr = results(at_home.log(), "shell.exec")[-1]["stderr"]
    assert "Read-only file system" in stderr, stderr


def test_at_home_the_data_home_is_invisible_and_the_log_still_verifies(
        at_home: Attack) -> None:
    data = at_home.data
    checkpoints = sorted(data.rglob("checkpoints.jsonl"))
    assert checkpoints, sorted(str(p) for p in data.rglob("*"))
    files = {p: p.read_bytes() for p in data.rglob("*") if p.is_file() and "lock" not in p.name}
    env = f"env ADJUTANT_HOME={data} HOME={at_home.home}"
    at_home.script(shell(
        f"ls -A {data}; {env} {ADJUTANT} mode execute-auto; "
        f"{env} {ADJUTANT} grant cage:/; echo forged >> {checkpoints[0]}; "
        f"cp -r {data} ~/stolen; echo done"))
    shown = at_home.run_granting("raise your own privileges")
    assert "done" in shown, shown
    stdout = results(at_home.log(), "shell.exec")[-1]["stdout"]
    assert "profiles" not in stdout and "checkpoints" not in stdout, stdout
    # nothing in the data home changed except what the operator itself appended
    assert checkpoints[0].read_bytes().startswith(files[checkpoints[0]])
    assert b"forged" not in checkpoints[0].read_bytes()
    assert not (at_home.home / "stolen" / "profiles").exists()
    mode = at_home.cli("mode", check=True).stdout
    assert "execute-with-confirmation" in mode and "execute-auto" not in mode, mode
    grants = at_home.cli("grant", check=True).stdout
    assert "cage:/" not in grants, grants
    verify = at_home.cli("log", "verify")
    assert verify.returncode == 0, (verify.stdout, verify.stderr)
