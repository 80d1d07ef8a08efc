"""MCP bridge overhead: a call through Adjutant against the same call made directly.

The peer is ``mcp-server-time`` over stdio (real process, real protocol). Three ways
to make ``get_current_time``, each N times on one warm connection:

1. baseline: the SDK's ``Client.call_tool`` directly;
2. bridge: the mounted tool's dry-run (a fresh ``tools/list``, the definition hash
   checked against the pin) plus its execute;
3. pipeline: ``Copilot.call``, the whole seven-step pipeline with the action log
   (the tool configured read-only and local, its definition pinned: no prompt).

Also: start-up of a kernel whose server was never listed (process start, handshake,
list) and of one whose listing is cached (no contact). Figures, not pass/fail.

Run: ``.venv/bin/python bench/mcp_bridge.py [--quick]``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio

import adjutant_guard
import adjutant_mcp
from adjutant import Copilot
from adjutant.testing import Harness, ScriptedApprover
from adjutant_hookspecs import ToolCall
from adjutant_mcp import bridge_of

TOOL = "mcp.time.get_current_time"
ARGS = {"timezone": "UTC"}


def ms(samples: list[float]) -> str:
    samples = sorted(samples)
    p50 = statistics.median(samples) * 1000
    p95 = samples[int(len(samples) * 0.95) - 1] * 1000
    return f"p50 {p50:7.2f} ms   p95 {p95:7.2f} ms"


async def timed(n: int, fn: Any) -> list[float]:
    out = []
    for _ in range(n):
        t = time.perf_counter()
        await fn()
        out.append(time.perf_counter() - t)
    return out


async def main(n: int) -> None:
    from mcp import Client, StdioServerParameters

    home = Path(tempfile.mkdtemp(prefix="adjutant-bench-mcp-"))
    (home / "mcp.json").write_text(json.dumps({"mcpServers": {"time": {
        "command": sys.executable, "args": ["-m", "mcp_server_time"],
        "adjutant": {"readOnlyTools": ["get_current_time"],
                     "localTools": ["get_current_time"]}}}}))
    params = StdioServerParameters(command=sys.executable, args=["-m", "mcp_server_time"])
    async with Client(params) as client:
        await client.call_tool("get_current_time", ARGS)
        direct = await timed(n, lambda: client.call_tool("get_current_time", ARGS))

    t = time.perf_counter()
    async with Harness(adjutant_guard, adjutant_mcp.McpPlugin, home=home) as h:
        first_start = time.perf_counter() - t
        copilot = Copilot(h.kernel, approver=ScriptedApprover(default="grant"))
        await copilot.set_mode("execute-with-confirmation", channel="user")
        t = time.perf_counter()
        first = await copilot.call(ToolCall(tool=TOOL, args=ARGS), caller="bench")
        first_call = time.perf_counter() - t
        assert first.results[0].status == "ok", first.results[0].stderr
        tool = h.kernel.tools[TOOL]
        call = ToolCall(tool=TOOL, args=ARGS)

        async def bridged() -> None:
            await tool.dry_run(call, h.context())
            await tool.execute(call, h.context())

        async def piped() -> None:
            outcome = await copilot.call(call, caller="bench")
            assert outcome.results[0].status == "ok"

        bridge = await timed(n, bridged)
        pipeline = await timed(n, piped)
        assert bridge_of(h.kernel).connections["time"].state == "running"

    t = time.perf_counter()
    async with Harness(adjutant_guard, adjutant_mcp.McpPlugin, home=home) as h:
        cached_start = time.perf_counter() - t
        assert TOOL in h.kernel.tools

    print(f"calls: {n} each, mcp-server-time over stdio, one warm connection")
    print(f"  direct SDK call_tool        {ms(direct)}")
    print(f"  bridge dry-run + execute    {ms(bridge)}   "
          f"({statistics.median(bridge) / statistics.median(direct):.1f}x direct)")
    print(f"  whole pipeline (Copilot)    {ms(pipeline)}   "
          f"({statistics.median(pipeline) / statistics.median(direct):.1f}x direct)")
    print(f"kernel start, server never listed (spawn + handshake + list): "
          f"{first_start * 1000:.0f} ms")
    print(f"first call after that (connection already up):                "
          f"{first_call * 1000:.0f} ms")
    print(f"kernel start, listing cached (no contact):                    "
          f"{cached_start * 1000:.0f} ms")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true")
    opts = parser.parse_args()
    anyio.run(main, 20 if opts.quick else 200)
