"""The client the MCP conformance suite drives: ``python client.py <server URL>``.

Adjutant's own MCP client, end to end: the suite's test server is configured as a
remote (HTTP) server in a fresh data home, the bridge connects and lists it, and each
tool it offers is called through the operator's pipeline (mode, policies, definition
pin, approval, action log) in ``execute-with-confirmation``, the person at the
approvals being a scripted one who grants. A server that wants an OAuth sign-in
makes the first contact fail with the "reconnect" message; then the sign-in runs as
``adjutant mcp login`` does, the "browser" an HTTP client that follows the
authorization server's redirect to the loopback listener. A server's form
(elicitation) is accepted as Adjutant prefilled it (the server's defaults).

``MCP_CONFORMANCE_SCENARIO`` names the scenario; ``MCP_CONFORMANCE_CONTEXT`` (JSON) may
carry a pre-registered client's id and secret.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import anyio

#: Arguments for the tools the suite's servers offer (others take none).
ARGUMENTS = {"add_numbers": {"a": 5, "b": 3}}
SERVER = "conformance"


def configure(home: Path, url: str) -> None:
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    oauth = {key: context[name] for key, name in (("clientId", "client_id"),
                                                   ("clientSecret", "client_secret"))
             if isinstance(context.get(name), str)}
    entry: dict[str, Any] = {"type": "http", "url": url}
    if oauth:
        entry["adjutant"] = {"oauth": oauth}
    home.mkdir(parents=True, exist_ok=True)
    (home / "mcp.json").write_text(json.dumps({"mcpServers": {SERVER: entry}}))


async def main(url: str) -> int:
    with tempfile.TemporaryDirectory(prefix="adjutant-conformance-") as home:
        return await run(Path(home), url)


async def run(home: Path, url: str) -> int:
    import httpx2

    import adjutant_guard
    import adjutant_mcp
    from adjutant import Copilot
    from adjutant.testing import Harness, ScriptedApprover
    from adjutant_hookspecs import ToolCall
    from adjutant_mcp._cli import login
    from adjutant_mcp._connection import ServerUnavailable

    configure(home, url)
    async with Harness(adjutant_guard, adjutant_mcp.McpPlugin, home=home) as h, \
            anyio.create_task_group() as tg:
        bridge = adjutant_mcp.bridge_of(h.kernel)

        async def accept_prefilled(server: str, message: str, schema: dict[str, Any],
                                   prefilled: dict[str, Any]) -> dict[str, Any]:
            print(f"form from {server}: {message!r}, prefilled {prefilled}")
            return prefilled
        bridge.on_form = accept_prefilled

        async def browser(auth_url: str) -> None:
            async def visit() -> None:
                async with httpx2.AsyncClient(follow_redirects=True, timeout=30) as web:
                    await web.get(auth_url)
            tg.start_soon(visit)

        try:
            tools = await bridge.refresh(SERVER)
        except ServerUnavailable as exc:
            print(f"first contact: {exc}")
            if "adjutant mcp login" not in str(exc):
                return 1
            if await login(bridge, SERVER, browser) != 0:
                return 1
            tools = bridge.tools_of(SERVER)
        print(f"listed {[t.declaration.name for t in tools]}")

        copilot = Copilot(h.kernel, approver=ScriptedApprover(default="grant"))
        await copilot.set_mode("execute-with-confirmation", channel="user")
        for tool in tools:
            name = tool.declaration.name
            await copilot.grant(f"network:{name}", seconds=600, channel="user")
            outcome = await copilot.call(ToolCall(tool=name, args=ARGUMENTS.get(tool.remote, {})),
                                         caller="conformance")
            result = outcome.results[0] if outcome.results else None
            print(f"{name}: {result.status if result else outcome.error}: "
                  f"{(result.stdout or result.stderr)[:200] if result else ''}")
        tg.cancel_scope.cancel()
    return 0


if __name__ == "__main__":
    sys.exit(anyio.run(main, sys.argv[-1]))
