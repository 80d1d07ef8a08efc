"""``git``: the state of real repositories made in the test, git run only in the sandbox."""

import os
from pathlib import Path

import pytest

from adjutant.safety import sandbox
from adjutant.testing import needs_sandbox
from adjutant_context import GitProvider
from adjutant_context._git import MAX_CHANGED, parse_status

from .helpers import git, make_repo

pytestmark = pytest.mark.anyio


@needs_sandbox
async def test_a_clean_repository(tmp_path: Path) -> None:
    head = make_repo(tmp_path / "repo")
    fields = await GitProvider().gather(str(tmp_path / "repo"))
    assert fields == {"git": {"root": str((tmp_path / "repo").resolve()), "branch": "main",
                              "head": head, "dirty": False, "changed": []}}


@needs_sandbox
async def test_changes_seen_from_a_subdirectory(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    make_repo(repo)
    (repo / "README.md").write_text("changed\n")
    (repo / "sub").mkdir()
    (repo / "sub" / "new file.txt").write_text("x")
    (repo / "naïve.txt").write_text("x")
    git(repo, "mv", "README.md", "README.rst")
    fields = await GitProvider().gather(str(repo / "sub"))
    state = fields["git"]
    assert state["root"] == str(repo.resolve())
    assert state["dirty"] is True
    assert sorted(state["changed"]) == ["README.rst", "naïve.txt", "sub/"]


@needs_sandbox
async def test_a_repository_before_its_first_commit(tmp_path: Path) -> None:
    (tmp_path / "repo").mkdir()
    git(tmp_path / "repo", "init", "-q", "-b", "trunk")
    (tmp_path / "repo" / "a").write_text("a")
    fields = await GitProvider().gather(str(tmp_path / "repo"))
    assert fields["git"] == {"root": str((tmp_path / "repo").resolve()), "branch": "trunk",
                             "head": None, "dirty": True, "changed": ["a"]}


@needs_sandbox
async def test_detached_head(tmp_path: Path) -> None:
    head = make_repo(tmp_path / "repo")
    git(tmp_path / "repo", "checkout", "-q", "--detach")
    fields = await GitProvider().gather(str(tmp_path / "repo"))
    assert (fields["git"]["branch"], fields["git"]["head"]) == (None, head)


@needs_sandbox
async def test_at_most_50_changed_paths(tmp_path: Path) -> None:
    make_repo(tmp_path / "repo")
    for i in range(MAX_CHANGED + 10):
        (tmp_path / "repo" / f"f{i:03}").write_text("x")
    fields = await GitProvider().gather(str(tmp_path / "repo"))
    assert len(fields["git"]["changed"]) == MAX_CHANGED


@needs_sandbox
async def test_the_repository_cannot_run_code(tmp_path: Path) -> None:
    """A hostile repository: an fsmonitor, hooks and a pager that would leave a mark."""
    repo = tmp_path / "repo"
    make_repo(repo)
    mark = tmp_path / "pwned"
    script = repo / "evil.sh"
    script.write_text(f"#!/bin/sh\ntouch {mark}\n")
    script.chmod(0o755)
    git(repo, "config", "core.fsmonitor", str(script))
    git(repo, "config", "core.pager", str(script))
    hook = repo / ".git" / "hooks" / "post-index-change"
    hook.write_text(f"#!/bin/sh\ntouch {mark}\n")
    hook.chmod(0o755)
    fields = await GitProvider().gather(str(repo))
    assert fields["git"]["branch"] == "main"
    assert not mark.exists()


@needs_sandbox
async def test_secrets_in_paths_are_redacted(tmp_path: Path) -> None:
    make_repo(tmp_path / "repo")
    (tmp_path / "repo" / "token=abc123").write_text("x")
    fields = await GitProvider().gather(str(tmp_path / "repo"))
    assert fields["git"]["changed"] == ["token=[REDACTED]"]


async def test_nothing_outside_a_repository(tmp_path: Path) -> None:
    assert await GitProvider().gather(str(tmp_path)) == {}


async def test_nothing_without_the_sandbox(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No bubblewrap: git is not run at all (an empty PATH would fail loudly if it were)."""
    make_repo(tmp_path / "repo")
    monkeypatch.setenv("PATH", str(tmp_path / "nothing-here"))
    assert sandbox.available() is not None
    assert await GitProvider().gather(str(tmp_path / "repo")) == {}
    assert os.environ["PATH"].endswith("nothing-here")


def test_parse_status() -> None:
    text = ("## main...origin/main [ahead 1, behind 2]\n M a.py\nR  old.py -> new.py\n"
            '?? "tab\\there.txt"\n')
    assert parse_status(text) == {"branch": "main", "dirty": True,
                                  "changed": ["a.py", "new.py", "tab\there.txt"]}
    assert parse_status("## HEAD (no branch)\n") == {"branch": None, "dirty": False,
                                                     "changed": []}
    assert parse_status("## No commits yet on dev\n")["branch"] == "dev"
