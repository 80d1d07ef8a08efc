"""The context bulletin's git follows no repository out of the workspace.

The ``git`` context provider runs ``git status`` in the workspace before any request,
without a question. A repository the user cloned or unpacked can send git elsewhere:
a ``.git`` file or a ``commondir`` naming another repository's git directory,
``core.worktree`` naming another directory, an ``include.path`` to a file outside,
alternates. Git then reports names from there (a branch, changed and untracked
paths) into the bulletin, which goes to the model. Each test plants `MARKER` in such
a name outside the workspace and asks the real ``adjutant context``; the bulletin must
have no git at all (the provider applies the git tools' checks, `adjutant.safety.protection`'s
`confined_repository` and `audit_git_config`), and MARKER must appear nowhere.

The bench lives under ``/var/tmp``: the sandbox mounts a fresh ``/tmp``.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from adjutant.testing import needs_sandbox

from .helpers import MARKER, Attack

pytestmark = needs_sandbox



def git(cwd: Path, *argv: str) -> str:
    """Real git for the set-up (outside any sandbox, as the attacker would)."""
    env = {"PATH": "/usr/bin:/bin", "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(cwd),
           "GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@x", "GIT_COMMITTER_NAME": "a",
           "GIT_COMMITTER_EMAIL": "a@x"}
    return subprocess.run(["git", *argv], cwd=cwd, env=env, capture_output=True, text=True,
                          check=True).stdout


def outside(bench: Attack) -> Path:
    """A repository outside the workspace whose names carry MARKER: its branch, a
    committed file, an untracked file."""
    repo = bench.root / "elsewhere"
    repo.mkdir()
    git(repo, "init", "-q", "-b", f"leak-{MARKER}")
    (repo / f"committed-{MARKER}.txt").write_text("x\n")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "outside")
    (repo / f"untracked-{MARKER}.txt").write_text("x\n")
    return repo


def bulletin(bench: Attack) -> dict[str, Any]:
    done = bench.cli("context", "--json")
    assert done.returncode == 0, done.stderr
    assert MARKER not in done.stdout + done.stderr
    shown = bench.cli("context")
    assert MARKER not in shown.stdout + shown.stderr
    found: dict[str, Any] = json.loads(done.stdout)
    return found


def test_an_ordinary_repository_gives_git_context(bench: Attack) -> None:
    """The control: without it the refusals below would prove nothing."""
    git(bench.work, "init", "-q", "-b", "main")
    (bench.work / "ok.txt").write_text("x\n")
    git(bench.work, "add", ".")
    git(bench.work, "commit", "-qm", "ok")
    (bench.work / "new.txt").write_text("x\n")
    state = bulletin(bench)["git"]
    assert state["branch"] == "main" and state["changed"] == ["new.txt"]
    assert state["root"] == str(bench.work.resolve())


def test_a_git_file_naming_a_git_dir_outside(bench: Attack) -> None:
    repo = outside(bench)
    (bench.work / ".git").write_text(f"gitdir: {repo / '.git'}\n")
    assert not bulletin(bench).get("git")


def test_a_commondir_outside(bench: Attack) -> None:
    repo = outside(bench)
    git(bench.work, "init", "-q", "-b", "main")
    (bench.work / ".git" / "commondir").write_text(f"{repo / '.git'}\n")
    (bench.work / ".git" / "HEAD").write_text(f"ref: refs/heads/leak-{MARKER}\n")
    assert not bulletin(bench).get("git")


def test_a_work_tree_outside(bench: Attack) -> None:
    repo = outside(bench)
    git(bench.work, "init", "-q", "-b", "main")
    git(bench.work, "config", "core.worktree", str(repo))
    assert not bulletin(bench).get("git")


def test_an_included_config_outside(bench: Attack) -> None:
    repo = outside(bench)
    included = bench.root / "included.gitconfig"
    included.write_text(f"[core]\n\tworktree = {repo}\n")
    git(bench.work, "init", "-q", "-b", "main")
    git(bench.work, "config", "include.path", str(included))
    assert not bulletin(bench).get("git")


def test_an_included_config_outside_that_changes_nothing_visible(bench: Attack) -> None:
    """Reading a file outside is the breach, whatever it holds."""
    included = bench.root / "included.gitconfig"
    included.write_text(f"[user]\n\tname = {MARKER}\n")
    git(bench.work, "init", "-q", "-b", "main")
    git(bench.work, "config", "include.path", str(included))
    assert not bulletin(bench).get("git")


def test_alternates_outside(bench: Attack) -> None:
    repo = outside(bench)
    git(bench.work, "init", "-q", "-b", "main")
    (bench.work / ".git" / "objects" / "info" / "alternates").write_text(
        f"{repo / '.git' / 'objects'}\n")
    head = git(repo, "rev-parse", "HEAD").strip()
    (bench.work / ".git" / "refs" / "heads" / "main").write_text(f"{head}\n")
    assert not bulletin(bench).get("git")


def test_a_filter_that_runs_a_program(bench: Attack) -> None:
    """Configuration that makes ``git status`` run a program: refused like the git
    tools refuse it (the sandbox would still hold the program)."""
    git(bench.work, "init", "-q", "-b", "main")
    git(bench.work, "config", "filter.x.clean", f"echo {MARKER}")
    (bench.work / ".gitattributes").write_text("* filter=x\n")
    assert not bulletin(bench).get("git")
