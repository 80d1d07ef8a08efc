"""The plugin registers what it says, imports cheaply, and its command works end to end."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import adjutant_mcp
from adjutant.testing.plugin_checks import (
    assert_cheap_import,
    assert_entry_point,
    assert_registers,
)

REGISTERS = {"commands": ["mcp"]}
PYPROJECT = Path(__file__).parents[1] / "pyproject.toml"
ADJUTANT = [sys.executable, "-m", "adjutant.cli"]


@pytest.mark.anyio
async def test_registers_what_it_says() -> None:
    await assert_registers(adjutant_mcp.McpPlugin, REGISTERS)


def test_entry_point_is_found_and_loads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert_entry_point(PYPROJECT, adjutant_mcp.McpPlugin, REGISTERS, tmp_path, monkeypatch)


def test_import_is_cheap() -> None:
    assert_cheap_import(adjutant_mcp, ["mcp", "pydantic", "httpx2", "uvicorn"])


def _adjutant(tmp_path: Path, *args: str, workspace: Path | None = None
              ) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "ADJUTANT_HOME": str(tmp_path / "home"),
           "ADJUTANT_WORKSPACE": str(workspace or tmp_path),
           "XDG_CACHE_HOME": str(tmp_path / "cache"), "ADJUTANT_LOAD_PLUGINS": "mcp"}
    return subprocess.run([*ADJUTANT, *args], env=env, capture_output=True, text=True,
                          timeout=120, cwd=tmp_path)


def test_the_mcp_command_manages_servers(tmp_path: Path) -> None:
    added = _adjutant(tmp_path, "mcp", "add", "time", "--read-only", "get_current_time",
                      "--path-arg", "timezone", "--", sys.executable, "-m", "mcp_server_time")
    assert added.returncode == 0, added.stderr
    assert "MCP handshake ok with mcp-time" in added.stdout
    assert ("mcp.time.get_current_time  (read, open-world, paths caged: timezone; "
            "definition new)") in added.stdout
    assert "mcp.time.convert_time  (destructive, open-world; definition new)" in added.stdout

    listed = json.loads(_adjutant(tmp_path, "mcp", "list", "--json").stdout)
    assert [(s["name"], s["tools"]) for s in listed["servers"]] == [("time", 2)]

    assert _adjutant(tmp_path, "mcp", "disable", "time").returncode == 0
    off = json.loads(_adjutant(tmp_path, "mcp", "list", "--json").stdout)["servers"][0]
    assert off["state"] == "off" and off["tools"] == 0
    tested = _adjutant(tmp_path, "mcp", "test", "time")
    assert tested.returncode == 1 and "disabled" in tested.stderr
    assert _adjutant(tmp_path, "mcp", "enable", "time").returncode == 0
    assert _adjutant(tmp_path, "mcp", "test", "time").returncode == 0
    assert _adjutant(tmp_path, "mcp", "remove", "time").returncode == 0
    assert json.loads(_adjutant(tmp_path, "mcp", "list", "--json").stdout)["servers"] == []
    unknown = _adjutant(tmp_path, "mcp", "test", "time")
    assert unknown.returncode == 2 and "no MCP server named 'time'" in unknown.stderr


def test_a_failing_server_reports_why(tmp_path: Path) -> None:
    result = _adjutant(tmp_path, "mcp", "add", "broken", "--", sys.executable, "-c",
                       "import sys; sys.stderr.write('missing API key\\n'); sys.exit(1)")
    assert result.returncode == 1
    assert "closed the connection during the MCP handshake" in result.stderr
    assert "missing API key" in result.stderr


def test_a_workspace_server_runs_only_once_enabled(tmp_path: Path) -> None:
    ws = tmp_path / "project"
    (ws / ".vscode").mkdir(parents=True)
    marker = tmp_path / "ran"
    (ws / ".vscode" / "mcp.json").write_text(json.dumps({"servers": {"proj": {
        "type": "stdio", "command": sys.executable,
        "args": ["-c", f"open({str(marker)!r}, 'w').close()"]}}}))
    listed = json.loads(_adjutant(tmp_path, "mcp", "list", "--json", workspace=ws).stdout)
    assert listed["servers"][0]["state"] == "off"
    assert "adjutant mcp enable proj" in listed["servers"][0]["note"]
    tested = _adjutant(tmp_path, "mcp", "test", "proj", workspace=ws)
    assert tested.returncode == 1
    assert not marker.exists()  # nothing from the cloned repository ran
    enabled = _adjutant(tmp_path, "mcp", "enable", "proj", workspace=ws)
    assert f"it runs {sys.executable} -c open(" in enabled.stdout.replace('"', "")
    _adjutant(tmp_path, "mcp", "test", "proj", workspace=ws)
    assert marker.exists()


@pytest.mark.anyio
async def test_another_plugin_reaches_the_servers_through_the_kernel(tmp_path: Path) -> None:
    """What a dock's MCP panel uses: ``kernel.plugin("mcp")``, an `McpServers`, this
    kernel's own bridge (another kernel has another), and nothing before start-up."""
    from adjutant import Kernel
    from adjutant.testing import Harness

    (tmp_path / "mcp.json").write_text(json.dumps({"mcpServers": {
        "broken": {"command": str(tmp_path / "no-such-server")}}}))
    idle = Kernel(plugins=[adjutant_mcp.McpPlugin], load_installed=False, home=tmp_path,
                  env={}).load()
    not_started = idle.plugin("mcp")
    assert isinstance(not_started, adjutant_mcp.McpPlugin)
    with pytest.raises(RuntimeError, match="starts with the kernel"):
        not_started.server_rows()
    async with Harness(adjutant_mcp.McpPlugin, home=tmp_path) as h, \
            Harness(adjutant_mcp.McpPlugin, home=tmp_path / "other") as other:
        servers, elsewhere = h.kernel.plugin("mcp"), other.kernel.plugin("mcp")
        assert isinstance(servers, adjutant_mcp.McpServers)
        assert isinstance(servers, adjutant_mcp.McpPlugin) and servers is not elsewhere
        [row] = servers.server_rows()
        assert (row["name"], row["state"], row["tools"]) == ("broken", "error", 0)
        assert servers.server_problems() == []
        assert adjutant_mcp.bridge_of(h.kernel) is servers.bridge
        assert isinstance(elsewhere, adjutant_mcp.McpServers) and elsewhere.server_rows() == []
