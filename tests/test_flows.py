"""The golden flows end to end: the real tool packs, the real safety stack (guard,
write-gate, LMDB log), real git, real processes; the model is scripted, the user
approves through a scripted approver, the operator is in execute-with-confirmation."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from adjutant.testing import Harness, RunResult, ScriptedApprover, needs_sandbox, plan
from adjutant_hookspecs import Response

packs = [pytest.importorskip(m) for m in ("adjutant_files", "adjutant_system", "adjutant_git",
                                          "adjutant_guard", "adjutant_write_gate",
                                          "adjutant_lmdb")]
pytestmark = [pytest.mark.anyio,
              needs_sandbox]
GIT_ENV = {"PATH": "/usr/bin:/bin", "GIT_CONFIG_NOSYSTEM": "1"}


def git(cwd: Path, *argv: str) -> str:
    return subprocess.run(["git", *argv], cwd=cwd, env={**GIT_ENV, "HOME": str(cwd)},
                          capture_output=True, text=True, check=True).stdout


def harness(tmp_path: Path) -> Harness:
    """Every pack and the safety stack; the user approves each step as it comes."""
    return Harness(*packs, home=tmp_path / "home", mode="execute-with-confirmation",
                   approver=ScriptedApprover(plan="step", default="grant"))


async def operate(h: Harness, *replies: Any, request: str) -> RunResult:
    h.provider.queue(*replies)
    return await h.run(request)


APP = '''import sys


def ratio(done, total):
    return done / total


if __name__ == "__main__":
    print("progress", ratio(3, 0))
'''


async def test_fix_this_error(tmp_path: Path) -> None:
    """Read the log, grep for the failing code, patch it, rerun, see it healthy."""
    async with harness(tmp_path) as h:
        work = h.workspace
        (work / "app.py").write_text(APP)
        crashed = subprocess.run(  # noqa: ASYNC221 - set-up: produce the real crash log
            [sys.executable, "app.py"], cwd=work, capture_output=True, text=True, check=False)
        (work / "app.log").write_text(crashed.stderr)
        assert "ZeroDivisionError" in crashed.stderr
        fix = ("--- a/app.py\n+++ b/app.py\n@@ -4,3 +4,3 @@\n def ratio(done, total):\n"
               "-    return done / total\n+    return done / total if total else 0.0\n \n")
        outcome = await operate(
            h, plan(("fs.read", {"path": "app.log"}),
                    ("search.grep", {"pattern": "def ratio", "paths": ["."]}),
                    ("editor.patch", {"patch": fix}),
                    ("shell.exec", {"argv": ["python3", "app.py"]})),
            request="the app crashed, fix it")
        results = outcome.results
        fixed = (work / "app.py").read_text()
    assert outcome.status == "executed", (outcome.error, [r.stderr for r in results])
    assert [r.status for r in results] == ["ok"] * 4, [r.stderr for r in results]
    assert "ZeroDivisionError" in results[0].stdout
    assert "app.py" in results[1].stdout and "def ratio" in results[1].stdout
    assert results[3].stdout == "progress 0.0\n", "rerun healthy"
    assert "return done / total if total else 0.0" in fixed


async def test_create_a_feature_branch_and_commit(tmp_path: Path) -> None:
    async with harness(tmp_path) as h:
        work = h.workspace
        git(work, "init", "-q", "-b", "main")
        git(work, "config", "user.name", "Flow")
        git(work, "config", "user.email", "flow@example.com")
        (work / "README.md").write_text("# demo\n")
        git(work, "add", ".")
        git(work, "commit", "-q", "-m", "initial")
        outcome = await operate(
            h, plan(("git.branch", {"name": "feature/notes"}),
                    ("fs.write", {"path": "NOTES.md", "content": "notes\n"}),
                    ("git.commit", {"message": "Add notes", "paths": ["NOTES.md"]})),
            request="create a feature branch and commit a notes file")
        log = git(work, "log", "--format=%s|%D", "-2")
    assert outcome.status == "executed", [r.stderr for r in outcome.results]
    assert [r.status for r in outcome.results] == ["ok"] * 3, \
        [r.stderr for r in outcome.results]
    assert log == "Add notes|HEAD -> feature/notes\ninitial|main\n"


async def test_run_a_command_and_explain_its_output(tmp_path: Path) -> None:
    async with harness(tmp_path) as h:
        (h.workspace / "data.csv").write_text("a,b\n1,2\n")
        ran = await operate(h, plan(("shell.exec", {"argv": ["wc", "-l", "data.csv"]})),
                            request="how many lines does data.csv have? explain")
        explained = await operate(h, Response(text="data.csv has 2 lines: a header and a row."),
                                  request="explain that output")
        prompt = h.provider.requests[-1].prompt
    assert ran.status == "executed" and ran.results[0].stdout == "2 data.csv\n"
    assert explained.status == "answered" and "2 lines" in explained.text
    assert "Request: explain that output" in prompt


@pytest.fixture
def python_process() -> Iterator[subprocess.Popen[bytes]]:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    yield child
    child.kill()
    child.wait()


async def test_list_python_processes(tmp_path: Path,
                                     python_process: subprocess.Popen[bytes]) -> None:
    async with harness(tmp_path) as h:
        outcome = await operate(h, plan(("proc.list", {"name": "python", "sort": "pid"})),
                                request="list python processes")
    assert outcome.status == "executed", [r.stderr for r in outcome.results]
    listing = outcome.results[0].stdout
    assert str(python_process.pid) in listing and "python" in listing.lower()
