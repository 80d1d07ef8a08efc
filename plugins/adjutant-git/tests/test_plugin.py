"""The plugin registers what it says: by itself, and when found by its entry point."""

from pathlib import Path

import pytest

import adjutant_git
from adjutant.testing import Harness, needs_sandbox
from adjutant.testing.plugin_checks import assert_entry_point, assert_registers

from .helpers import sh

#: What this plugin registers, by kind; update it along with the plugin.
REGISTERS = {"tools": ["git.status", "git.diff", "git.log", "git.commit", "git.branch",
                       "git.switch"]}
PYPROJECT = Path(__file__).parents[1] / "pyproject.toml"


@pytest.mark.anyio
async def test_registers_what_it_says() -> None:
    await assert_registers(adjutant_git, REGISTERS)


@pytest.mark.anyio
@needs_sandbox
async def test_branch_and_commit_through_the_harness() -> None:
    """The user's path: the harness workspace is a repository; branch, then commit."""
    async with Harness(adjutant_git) as h:
        sh(h.workspace, "init", "-q", "-b", "main")
        sh(h.workspace, "config", "user.name", "Ada")
        sh(h.workspace, "config", "user.email", "ada@example.com")
        (h.workspace / "a.txt").write_text("a\n")
        sh(h.workspace, "add", "a.txt")
        sh(h.workspace, "commit", "-q", "-m", "first")
        branch = await h.execute("git.branch", name="feature/x")
        (h.workspace / "a.txt").write_text("b\n")
        preview = await h.dry_run("git.commit", message="Change a", all=True)
        commit = await h.execute("git.commit", message="Change a", all=True)
        log = sh(h.workspace, "log", "--format=%s %D", "-2")
    assert branch.status == "ok", branch.stderr
    assert "M\ta.txt" in (preview.dry_run_diff or "")
    assert commit.status == "ok", commit.stderr
    assert log == "Change a HEAD -> feature/x\nfirst main\n"


def test_entry_point_is_found_and_loads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert_entry_point(PYPROJECT, adjutant_git, REGISTERS, tmp_path, monkeypatch)
