"""What `adjutant mcp serve` offers, checked in memory with the SDK's own client."""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client, MCPError

import adjutant_files
import adjutant_guard
from adjutant import ModelPreset, Profile
from adjutant.testing import Harness, ScriptedApprover, ScriptedProvider
from adjutant_mcp._serve import build_server

pytestmark = pytest.mark.anyio


def meta(result: Any) -> dict[str, Any]:
    assert result.meta is not None, result
    found: dict[str, Any] = result.meta
    return found


def refusal(result: Any) -> str:
    """The reason of a call Adjutant refused: a tool result with ``isError`` (the MCP
    way, so the calling model reads it), marked as a refusal, never a protocol error."""
    assert result.is_error, result
    assert meta(result)["adjutant/refused"] is True, result
    (content,) = result.content
    assert content.type == "text"
    text: str = content.text
    return text


async def test_only_the_tools_the_profile_allows_are_served_and_callable() -> None:
    provider = ScriptedProvider()
    profile = Profile(model=ModelPreset(provider=provider.name), tools=("fs.read", "fs.diff"))
    async with Harness(adjutant_guard, adjutant_files, provider=provider, profile=profile,
                       mode="execute-with-confirmation", approver=ScriptedApprover()) as h:
        (h.workspace / "a.txt").write_text("alpha\n")
        copilot = h.copilot
        async with Client(build_server(h.kernel, copilot)) as client:
            listed = {t.name: t for t in (await client.list_tools()).tools}
            assert set(listed) == {"fs.read", "fs.diff"}
            assert listed["fs.read"].annotations.read_only_hint is True
            read = await client.call_tool("fs.read", {"path": "a.txt"})
            assert not read.is_error and "alpha" in read.content[0].text
            outside = await client.call_tool("fs.write", {"path": "a.txt", "content": "x"})
            # refused by the pipeline, and logged
            assert "not in the tool allow-list" in refusal(outside)
            assert "fs.write was not run" in refusal(outside)
            assert meta(outside)["adjutant/run_id"]
            shadow = await client.call_tool("fs.read", {"path": "/etc/shadow"})
            assert "fs.read was not run" in refusal(shadow)
            # a tool Adjutant does not serve is a protocol error (invalid params)
            with pytest.raises(MCPError, match=r"Adjutant has no tool 'no\.such'") as unknown:
                await client.call_tool("no.such", {})
            assert unknown.value.code == -32602
        assert (h.workspace / "a.txt").read_text() == "alpha\n"
        records = await copilot.log.records()
        assert [r["tool"] for r in records if r["kind"] == "direct_call"] == [
            "fs.read", "fs.write", "fs.read"]
        assert not [r for r in records if r["kind"] == "tool_call" and r["tool"] != "fs.read"]
        shadow_run = [r for r in records if r.get("run_id") == meta(shadow)["adjutant/run_id"]]
        decisions = [r["decision"] for r in shadow_run if r["kind"] == "decision"]
        assert decisions and set(decisions) == {"deny"}
        assert not [r for r in shadow_run if r["kind"] in ("tool_call", "result")]


async def test_a_mode_refusal_and_a_denied_approval_are_tool_results_that_say_why() -> None:
    provider = ScriptedProvider()
    async with Harness(adjutant_guard, adjutant_files, provider=provider,
                       approver=ScriptedApprover(steps=["deny"])) as h:
        (h.workspace / "a.txt").write_text("alpha\n")
        copilot = h.copilot
        async with Client(build_server(h.kernel, copilot)) as client:
            proposed = await client.call_tool("fs.read", {"path": "a.txt"})
            text = refusal(proposed)
            assert "propose-only" in text and "execute-with-confirmation" in text
            assert meta(proposed)["adjutant/mode"] == "propose-only"
            await h.set_mode("execute-with-confirmation")
            denied = await client.call_tool("fs.write", {"path": "a.txt", "content": "x"})
            assert "fs.write was not run" in refusal(denied)
            assert "denied by the user" in refusal(denied)
            bad = await client.call_tool("fs.read", {"path": 7})
            assert "invalid arguments for fs.read" in refusal(bad)  # input validation
        assert (h.workspace / "a.txt").read_text() == "alpha\n"
        records = await copilot.log.records()
        assert not [r for r in records if r["kind"] in ("tool_call", "result")]
        assert [r["action"] for r in records if r["kind"] == "approval"] == ["deny"]
