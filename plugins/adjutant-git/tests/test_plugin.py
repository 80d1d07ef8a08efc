"""The plugin registers what it says: by itself, and when found by its entry point."""

import tomllib
from pathlib import Path

import pytest

import adjutant_git
from adjutant import Kernel, sandbox
from adjutant.testing import Harness

from .helpers import sh

#: What this plugin registers, by kind; update it along with the plugin.
REGISTERS = {"tools": ["git.status", "git.diff", "git.log", "git.commit", "git.branch",
                       "git.switch"]}
PYPROJECT = Path(__file__).parents[1] / "pyproject.toml"


@pytest.mark.anyio
async def test_registers_what_it_says() -> None:
    async with Harness(adjutant_git) as h:
        (info,) = [p for p in h.kernel.plugins if p.module == adjutant_git.__name__]
        assert (info.status, info.registered) == ("loaded", REGISTERS)
        for kind, names in REGISTERS.items():
            registry = getattr(h.kernel, kind)
            assert [registry.owner(name) for name in names] == [info.name] * len(names)


@pytest.mark.anyio
@pytest.mark.skipif(sandbox.available() is not None, reason="bubblewrap is not installed")
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
    """Install-free check of the pyproject's entry point (as in the template)."""
    project = tomllib.loads(PYPROJECT.read_text())["project"]
    dist_info = tmp_path / f"{project['name'].replace('-', '_')}-0.dist-info"
    dist_info.mkdir()
    (dist_info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {project['name']}\n")
    entries = project["entry-points"]["adjutant"]
    lines = "".join(f"{name} = {value}\n" for name, value in entries.items())
    (dist_info / "entry_points.txt").write_text(f"[adjutant]\n{lines}")
    monkeypatch.syspath_prepend(tmp_path)

    env = {"ADJUTANT_HOME": str(tmp_path), "ADJUTANT_LOAD_PLUGINS": project["name"]}
    kernel = Kernel(env=env).load()
    (info,) = [p for p in kernel.plugins if p.distribution == project["name"]]
    assert info.status == "loaded", info.error
    assert (info.module, info.registered) == (adjutant_git.__name__, REGISTERS)
