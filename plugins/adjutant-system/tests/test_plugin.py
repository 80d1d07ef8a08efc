"""The plugin registers what it says: by itself, and when found by its entry point."""

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

import adjutant_system
from adjutant.safety import sandbox
from adjutant.testing import Harness, needs_sandbox
from adjutant.testing.plugin_checks import assert_entry_point, assert_registers

#: What this plugin registers, by kind; update it along with the plugin.
REGISTERS = {"tools": ["shell.exec", "proc.list", "proc.kill", "sys.info", "net.check_port"]}
PYPROJECT = Path(__file__).parents[1] / "pyproject.toml"


@pytest.mark.anyio
async def test_registers_what_it_says() -> None:
    await assert_registers(adjutant_system, REGISTERS)


@pytest.mark.anyio
@needs_sandbox
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
    assert_entry_point(PYPROJECT, adjutant_system, REGISTERS, tmp_path, monkeypatch)
