"""Configuration: both mcp.json shapes, the overlay, workspace trust, hot reload."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from adjutant_mcp import bridge_of
from adjutant_mcp._config import ConfigError, Overlay, load_servers, parse_server

from .helpers import harness, stdio, write_config

TIME = stdio("-m", "mcp_server_time")


def test_both_shapes_and_vscode_fields(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / ".vscode").mkdir(parents=True)
    (ws / ".vscode" / "mcp.json").write_text(json.dumps({"servers": {
        "Fetch-Web": {"type": "stdio", "command": "uvx", "args": ["${workspaceFolder}/x"],
                      "env": {"TOKEN": "${env:MY_TOKEN}"}},
        "remote": {"type": "http", "url": "http://127.0.0.1:9/mcp",
                   "headers": {"Authorization": "Bearer t"}}}}))
    write_config(tmp_path / "home", {"time": TIME})
    servers, problems = load_servers(tmp_path / "home", str(ws), {"MY_TOKEN": "s3"})
    assert problems == []
    assert servers["Fetch-Web"].key == "fetch_web"
    assert servers["Fetch-Web"].args == (f"{ws}/x",)
    assert servers["Fetch-Web"].env == {"TOKEN": "s3"}
    assert servers["remote"].transport == "http"
    assert servers["remote"].headers == {"Authorization": "Bearer t"}
    assert servers["time"].enabled and not servers["time"].workspace


def test_workspace_servers_stay_off_until_trusted_and_trust_is_bound_to_the_definition(
        tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".mcp.json").write_text(json.dumps({"mcpServers": {"evil": {"command": "sh",
                                                                       "args": ["-c", "x"]}}}))
    home = tmp_path / "home"
    servers, _ = load_servers(home, str(ws), {})
    assert not servers["evil"].enabled and "adjutant mcp enable evil" in servers["evil"].note
    overlay = Overlay.load(home)
    overlay.trusted["evil"] = servers["evil"].digest
    overlay.save()
    assert load_servers(home, str(ws), {})[0]["evil"].enabled
    (ws / ".mcp.json").write_text(json.dumps({"mcpServers": {"evil": {"command": "sh",
                                                                       "args": ["-c", "y"]}}}))
    changed = load_servers(home, str(ws), {})[0]["evil"]
    assert not changed.enabled and "changed since you enabled it" in changed.note


def test_overlay_wins_and_can_disable_or_hide(tmp_path: Path) -> None:
    home = tmp_path / "home"
    write_config(home, {"time": TIME, "other": TIME})
    overlay = Overlay.load(home)
    overlay.servers["time"] = {"command": "python3", "args": ["-m", "mcp_server_time"]}
    overlay.disabled.append("other")
    overlay.save()
    servers, _ = load_servers(home, str(tmp_path), {})
    assert servers["time"].command == "python3"
    assert not servers["other"].enabled
    overlay.removed.append("other")
    overlay.save()
    assert "other" not in load_servers(home, str(tmp_path), {})[0]


@pytest.mark.parametrize(("entry", "message"), [
    ({"command": 3}, "must be strings"),
    ({"args": ["x"]}, "needs a 'command'"),
    ({"type": "sse", "url": "http://x"}, "SSE transport is deprecated"),
    ({"command": "x", "args": "not a list"}, "must be a list of strings"),
    ({"command": "x", "env": {"A": "${input:token}"}}, "does not prompt for inputs"),
    ({"command": "x", "adjutant": {"timeout": -1}}, "positive number"),
    ({"command": "x", "adjutant": {"examples": {"t": {"request": 1}}}}, "adjutant.examples.t"),
    ({"command": "x", "adjutant": {"pathArguments": "path"}}, "adjutant.pathArguments"),
])
def test_bad_entries_say_where_and_why(entry: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match="server 'x'") as info:
        parse_server("x", entry, source="f.json", workspace="/w", env={})
    assert message in str(info.value)


def test_a_broken_file_is_a_problem_not_a_crash(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "mcp.json").write_text("{not json")
    servers, problems = load_servers(home, str(tmp_path), {})
    assert servers == {}
    assert "not valid JSON" in problems[0] and str(home / "mcp.json") in problems[0]


def test_names_that_mount_alike_are_refused(tmp_path: Path) -> None:
    write_config(tmp_path, {"My Server": TIME, "my-server": TIME})
    servers, problems = load_servers(tmp_path, str(tmp_path), {})
    assert list(servers) == ["My Server"]
    assert "both mount as mcp.my_server.*" in problems[0]


@pytest.mark.anyio
async def test_edits_are_picked_up_without_a_restart(tmp_path: Path) -> None:
    write_config(tmp_path, {})
    async with harness(tmp_path) as h:
        assert not any(n.startswith("mcp.") for n in h.kernel.tools)
        write_config(tmp_path, {"time": TIME})
        with anyio.fail_after(15):
            while "time" not in bridge_of(h.kernel).servers:  # noqa: ASYNC110 - polls the bridge's state
                await anyio.sleep(0.1)
        await bridge_of(h.kernel).refresh("time")
        assert "mcp.time.get_current_time" in h.kernel.tools
        overlay = Overlay.load(tmp_path)
        overlay.disabled.append("time")
        overlay.save()
        with anyio.fail_after(15):
            while "mcp.time.get_current_time" in h.kernel.tools:  # noqa: ASYNC110 - polls the bridge's state
                await anyio.sleep(0.1)
        assert bridge_of(h.kernel).connections["time"].state == "stopped"


