"""Real things for the tests: repositories made with the real git, fake X11 programs."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

GIT_ENV = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null",
           "GIT_AUTHOR_NAME": "Test", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "Test", "GIT_COMMITTER_EMAIL": "t@example.com"}


def git(cwd: Path, *args: str) -> str:
    """Run the real git (in the test, on a repository the test made)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    proc = subprocess.run(["git", *args], cwd=cwd, env={**env, **GIT_ENV},
                          capture_output=True, text=True, check=True)
    return proc.stdout


def make_repo(path: Path, branch: str = "main") -> str:
    """A repository with one commit of ``README.md``; returns the commit id."""
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", branch)
    (path / "README.md").write_text("hello\n")
    git(path, "add", "README.md")
    git(path, "commit", "-q", "-m", "first")
    return git(path, "rev-parse", "HEAD").strip()


def fake_program(bin_dir: Path, name: str, script: str) -> Path:
    """An executable shell script ``name`` in ``bin_dir``."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    program = bin_dir / name
    program.write_text("#!/bin/sh\n" + script)
    program.chmod(0o755)
    return program
