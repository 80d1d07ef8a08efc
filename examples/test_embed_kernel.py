"""The embedding example runs as documented, on asyncio and trio, and says what is
missing instead of failing with a KeyError."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).with_name("embed_kernel.py")


def run(*args: str, prelude: str = "") -> subprocess.CompletedProcess[str]:
    code = (f"{prelude}import runpy, sys; sys.argv = ['embed_kernel.py', *{list(args)!r}]; "
            f"runpy.run_path({str(EXAMPLE)!r}, run_name='__main__')")
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, check=False)


@pytest.mark.parametrize("args", [(), ("--trio",)])
def test_the_example_approves_in_code_streams_and_cancels(args: tuple[str, ...]) -> None:
    pytest.importorskip("trio") if args else None
    done = run(*args)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "event adjutant.approval.requested Write a note to notes/todo.txt?" in out
    assert "event adjutant.step.denied host.note by user" in out
    assert "outcome: executed; host.note notes/todo.txt: ok, host.note README.md: denied" in out
    assert "outcome: cancelled (cancelled by the user)" in out
    assert "event RUN_ERROR cancelled by the user" in out


def test_trio_missing_is_said_not_a_key_error() -> None:
    done = run("--trio", prelude="import sys; sys.modules['trio'] = None; ")
    assert done.returncode == 1
    assert "--trio needs trio, which is not installed: pip install trio" in done.stderr
    assert "KeyError" not in done.stderr


def test_without_the_first_party_plugins_it_says_so_and_still_runs() -> None:
    hide = ("import sys\nfor m in ('adjutant_guard', 'adjutant_write_gate', 'adjutant_lmdb'):"
            "\n    sys.modules[m] = None\n")
    done = run(prelude=hide)
    assert done.returncode == 0, done.stderr
    assert ("not installed: adjutant-guard, adjutant-write-gate, adjutant-lmdb (the action "
            "log is in memory: demo only)") in done.stdout
    assert "outcome: executed" in done.stdout
