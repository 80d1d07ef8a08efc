"""Shared test helpers: real git for set-up and inspection, and a small repository."""

from __future__ import annotations

import subprocess
from pathlib import Path

from adjutant_hookspecs import ToolContext

_ENV = {"PATH": "/usr/bin:/bin", "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z"}


def sh(cwd: Path, *argv: str) -> str:
    """Run real git (outside any sandbox: the test's own set-up and inspection)."""
    done = subprocess.run(["git", *argv], cwd=cwd, env={**_ENV, "HOME": str(cwd)},
                          capture_output=True, text=True, check=True)
    return done.stdout


def make_repo(root: Path) -> Path:
    """``root/repo`` with one commit on `main` (README.md, notes.txt), local identity."""
    repo = root / "repo"
    repo.mkdir()
    sh(repo, "init", "-q", "-b", "main")
    sh(repo, "config", "user.name", "Ada Tester")
    sh(repo, "config", "user.email", "ada@example.com")
    (repo / "README.md").write_text("# demo\n")
    (repo / "notes.txt").write_text("one\n")
    sh(repo, "add", ".")
    sh(repo, "commit", "-q", "-m", "initial")
    return repo


def ctx_for(repo: Path) -> ToolContext:
    return ToolContext(cwd=str(repo), cages=(str(repo),))
