"""What `adjutant mcp serve` offers, checked in memory with the SDK's own client."""

from __future__ import annotations

import pytest
from mcp import Client, MCPError

import adjutant_files
import adjutant_guard
from adjutant import Copilot, ModelPreset, Profile
from adjutant.testing import Harness, ScriptedApprover, ScriptedProvider
from adjutant_mcp._serve import DENIED, build_server

pytestmark = pytest.mark.anyio


async def test_only_the_tools_the_profile_allows_are_served_and_callable() -> None:
    provider = ScriptedProvider()
    profile = Profile(model=ModelPreset(provider=provider.name), tools=("fs.read", "fs.diff"))
    async with Harness(adjutant_guard, adjutant_files, provider=provider, profile=profile) as h:
        (h.workspace / "a.txt").write_text("alpha\n")
        copilot = Copilot(h.kernel, approver=ScriptedApprover())
        await copilot.set_mode("execute-with-confirmation", channel="user")
        async with Client(build_server(h.kernel, copilot)) as client:
            listed = {t.name: t for t in (await client.list_tools()).tools}
            assert set(listed) == {"fs.read", "fs.diff"}
            assert listed["fs.read"].annotations.read_only_hint is True
            read = await client.call_tool("fs.read", {"path": "a.txt"})
            assert not read.is_error and "alpha" in read.content[0].text
            with pytest.raises(MCPError, match=r"no tool 'fs\.write'"):
                await client.call_tool("fs.write", {"path": "a.txt", "content": "x"})
            with pytest.raises(MCPError) as refused:
                await client.call_tool("fs.read", {"path": "/etc/shadow"})
            assert refused.value.code == DENIED
