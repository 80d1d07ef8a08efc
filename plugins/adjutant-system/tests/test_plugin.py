"""The plugin registers what it says: by itself, and when found by its entry point."""

import subprocess
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

import adjutant_system
from adjutant import Kernel, sandbox
from adjutant.testing import Harness

#: What this plugin registers, by kind; update it along with the plugin.
REGISTERS = {"tools": ["shell.exec", "proc.list", "proc.kill", "sys.info", "net.check_port"]}
PYPROJECT = Path(__file__).parents[1] / "pyproject.toml"


@pytest.mark.anyio
async def test_registers_what_it_says() -> None:
    async with Harness(adjutant_system) as h:
        (info,) = [p for p in h.kernel.plugins if p.module == adjutant_system.__name__]
        assert (info.status, info.registered) == ("loaded", REGISTERS)
        for kind, names in REGISTERS.items():
            registry = getattr(h.kernel, kind)
            assert [registry.owner(name) for name in names] == [info.name] * len(names)


@pytest.mark.anyio
@pytest.mark.skipif(sandbox.available() is not None, reason="bubblewrap is not installed")
async def test_shell_exec_through_the_harness() -> None:
    async with Harness(adjutant_system) as h:
        (h.workspace / "notes.txt").write_text("a\nb\n")
        preview = await h.dry_run("shell.exec", argv=["wc", "-l", "notes.txt"])
        result = await h.execute("shell.exec", argv=["wc", "-l", "notes.txt"])
        workspace = str(h.workspace)
    assert preview.dry_run_diff == sandbox.preview(
        ["wc", "-l", "notes.txt"], cwd=workspace, writable=[workspace])
    assert (result.status, result.stdout, result.stderr) == ("ok", "2 notes.txt\n",
                                                             "[exit status: 0]\n")


@pytest.fixture
def child() -> Iterator[subprocess.Popen[bytes]]:
    process = subprocess.Popen(["sleep", "30"])
    yield process
    process.kill()
    process.wait()


@pytest.mark.anyio
async def test_proc_kill_through_the_harness(child: subprocess.Popen[bytes]) -> None:
    async with Harness(adjutant_system) as h:
        preview = await h.dry_run("proc.kill", pid=child.pid)
        result = await h.execute("proc.kill", pid=child.pid)
    assert f"pid: {child.pid}\nname: sleep\n" in (preview.dry_run_diff or "")
    assert result.status == "ok", result.stderr
    assert child.wait(timeout=5) == -15


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
    assert (info.module, info.registered) == (adjutant_system.__name__, REGISTERS)
