"""The same request plans the same way run after run (issue 22, item 6), through
`adjutant run --json` in propose-only with the embedded model, each run a new process
sharing one cache, as a user's runs do.

Two causes had made a plan depend on what ran before it: scores kept on disk (a second
run of a request read them and evaluated its reply another way), and the calibration's
scoring pass run after the request's own (the first request of a process evaluated its
reply after that pass). Whatever the plan, it must be the same each time; which plan it
is, is `bench/planning.py`'s to measure."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

for needed in ("adjutant_llamacpp", "adjutant_files", "adjutant_git", "adjutant_system"):
    pytest.importorskip(needed, reason="planning needs the embedded model and the tools")
ADJUTANT = str(Path(sys.executable).with_name("adjutant"))
WORKSPACE = Path(__file__).parent / "golden" / "workspace"
GIT_ENV = {"PATH": "/usr/bin:/bin", "GIT_CONFIG_NOSYSTEM": "1"}
#: Asked again in a new process, it had planned `git.log` with a made-up `path: "."`.
ASKED = "show the history of release/1.0"


def workspace(into: Path) -> Path:
    """The golden workspace: a repository on ``work`` beside ``release/1.0``."""
    target = into / "work"
    shutil.copytree(WORKSPACE, target)
    env = {**GIT_ENV, "HOME": str(into)}
    for argv in (["init", "-q", "-b", "main"], ["config", "user.name", "Test"],
                 ["config", "user.email", "test@example.com"], ["add", "."],
                 ["commit", "-q", "-m", "workspace"], ["branch", "release/1.0"],
                 ["switch", "-q", "-c", "work"]):
        subprocess.run(["git", *argv], cwd=target, env=env, check=True, capture_output=True)
    return target


def test_a_request_plans_the_same_in_every_new_process(tmp_path: Path) -> None:
    from adjutant_llamacpp import DEFAULT_MODEL
    from adjutant_llamacpp._models import preset_path

    work = workspace(tmp_path)
    cache = tmp_path / "cache"
    env = {**os.environ, "ADJUTANT_HOME": str(tmp_path / "home"), "NO_COLOR": "1",
           "XDG_CACHE_HOME": str(cache), "ADJUTANT_WORKSPACE": str(work),
           # the model as assembled already; the scores and states start empty
           "ADJUTANT_LLAMACPP_MODEL": str(preset_path(DEFAULT_MODEL))}

    def plan(request: str) -> list[dict[str, Any]]:
        done = subprocess.run([ADJUTANT, "run", "--json", "--non-interactive", request],
                              env=env, cwd=work, capture_output=True, text=True,
                              timeout=300, check=False)
        assert done.returncode == 0, done.stderr
        outcome = json.loads(done.stdout)
        return [{"tool": s["tool"], "args": s["args"]}
                for s in (outcome.get("plan") or {}).get("steps", [])]

    plan("list the files here")  # another request first: the calibration is kept
    first = plan(ASKED)  # scored here
    assert any((cache / "adjutant" / "models" / "scores").glob("*.json"))
    again = plan(ASKED)  # its scores read from disk
    assert again == first
    assert first and first[0]["tool"] == "git.log", first
