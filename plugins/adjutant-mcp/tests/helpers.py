"""Shared by the MCP bridge tests: configuring servers and driving calls."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import adjutant_guard
import adjutant_mcp
from adjutant.testing import Harness, ScriptedApprover

HOSTILE = str(Path(__file__).parent / "servers" / "hostile.py")


def stdio(*args: str, **ours: Any) -> dict[str, Any]:
    """A ``mcpServers`` entry running this Python with ``args``."""
    entry: dict[str, Any] = {"command": sys.executable, "args": list(args)}
    if ours:
        entry["adjutant"] = ours
    return entry


def write_config(home: Path, servers: dict[str, Any], shape: str = "mcpServers") -> Path:
    home.mkdir(parents=True, exist_ok=True)
    path = home / "mcp.json"
    path.write_text(json.dumps({shape: servers}))
    return path


def harness(home: Path, *plugins: object) -> Harness:
    """A kernel with the bridge and the standard policies (paths, patterns, limits)."""
    return Harness(adjutant_guard, adjutant_mcp.McpPlugin, *plugins, home=home)


async def call(h: Harness, tool: str, approver: ScriptedApprover | None = None,
               mode: str = "execute-with-confirmation", network: bool = False,
               **args: Any) -> Any:
    """One call through the whole pipeline, as an MCP client or app would make it;
    ``network``: the user granted the tool the network for the session."""
    h.approver = approver or ScriptedApprover()
    await h.set_mode(mode)
    if network:
        await h.copilot.grant(f"network:{tool}", seconds=600, channel="user")
    outcome = await h.call(tool, caller="test", **args)
    return outcome.results[0] if outcome.results else outcome
