"""The second outside attack: what a session that never read the code found through
the public interfaces (the CLI, a fake HOME with marked secrets), each kept as a
reproduction that failed on the code it was found on.

1. a named pipe among the files git opens stalled every git preview for its 30 s
   timeout, then reported an empty repository; the context bulletin lost ``git``;
2. a secret used as a JSON *key* (a proposed argument's name) left in the bundle;
3. password forms on command lines in the shell history reached the bulletin;
4. ``adjutant bundle`` hung forever on a named pipe at its output name;
5. ``adjutant bundle`` wrote through a symbolic link at its output name;
6. a one-character (or empty) token file was accepted as the dock's secret;
7. everyday configuration secrets (kubeconfig, Maven, .pgpass, cookies, signed URLs)
   passed the redactor.

The bench lives under ``/var/tmp``: the sandbox mounts a fresh ``/tmp``.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import tarfile
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from adjutant.testing import needs_sandbox

from .helpers import MARKER, Attack, plan

#: Well under git's own 30 s timeout: a run that reaches it was stalled by a file.
NO_STALL = 25


@pytest.fixture
def bench() -> Iterator[Attack]:
    root = Path(tempfile.mkdtemp(prefix="adjutant-outsider2-", dir="/var/tmp"))
    try:
        yield Attack(root)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _repository(work: Path) -> None:
    env = {"PATH": "/usr/bin:/bin", "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(work),
           "GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@x", "GIT_COMMITTER_NAME": "a",
           "GIT_COMMITTER_EMAIL": "a@x"}
    for argv in (["init", "-q"], ["commit", "-q", "--allow-empty", "-m", "first"]):
        subprocess.run(["git", *argv], cwd=work, env=env, check=True, capture_output=True)


def _special(path: Path, kind: str, bench: Attack) -> None:
    path.unlink(missing_ok=True)
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "socket":
        with socket.socket(socket.AF_UNIX) as server:
            server.bind(str(path))  # the socket file stays once closed
    else:  # a link to a FIFO elsewhere in the workspace
        target = bench.work / "elsewhere.fifo"
        os.mkfifo(target)
        path.symlink_to(target)


# -- 1. special files among git's -------------------------------------------------------

@needs_sandbox
@pytest.mark.parametrize(("name", "kind"), [(".git/packed-refs", "fifo"),
                                            (".git/info/exclude", "fifo"),
                                            (".gitattributes", "fifo"),
                                            (".git/packed-refs", "link"),
                                            (".gitignore", "socket")])
def test_a_special_file_among_gits_never_stalls_a_preview_and_is_named(
        bench: Attack, name: str, kind: str) -> None:
    _repository(bench.work)
    (bench.work / ".git" / "info").mkdir(exist_ok=True)
    _special(bench.work / name, kind, bench)
    bench.mode("propose-only")
    for tool in ("git.status", "git.diff", "git.log"):
        bench.script(plan((tool, {})))
        done = bench.cli("run", f"show the {tool}", timeout=NO_STALL)
        assert done.returncode == 0, done.stderr
        shown = " ".join((done.stdout + done.stderr).split())  # folded long lines
        assert "special-file" in shown and name in shown, shown
        assert "not a file: git would wait on it forever" in shown
    context = json.loads(bench.cli("context", "--json", check=True, timeout=NO_STALL).stdout)
    assert name in context["git"]["unavailable"], context  # said, not silently dropped


@needs_sandbox
def test_a_named_pipe_deeper_in_the_tree_ends_at_the_bulletins_timeout_with_its_reason(
        bench: Attack) -> None:
    _repository(bench.work)
    (bench.work / "docs").mkdir()
    os.mkfifo(bench.work / "docs" / ".gitignore")  # git status opens it: found only by waiting
    context = json.loads(bench.cli("context", "--json", check=True, timeout=60).stdout)
    assert "did not finish" in context["git"]["unavailable"], context
