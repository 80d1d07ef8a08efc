"""Embed the Adjutant kernel in an application: its own plugin, a live AG-UI stream.

Run ``python examples/embed_kernel.py`` (asyncio), or add ``--trio``.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any

import anyio

import adjutant_hookspecs as ah
from adjutant import Kernel, Subscription, to_ag_ui


class Ping:
    """A read-only tool of the host application."""

    declaration = ah.ToolDeclaration(
        name="host.ping",
        version="1.0",
        description="Answer 'pong'.",
        args_schema={"type": "object", "properties": {}, "additionalProperties": False},
        examples=({},),
    )

    async def dry_run(self, call: ah.ToolCall, ctx: ah.ToolContext) -> ah.ExecutionResult:
        preview = "reply 'pong'"  # what execute will do, exactly
        return ah.ExecutionResult(
            tool=call.tool, args=call.args, status="dry_run", dry_run_diff=preview
        )

    async def execute(self, call: ah.ToolCall, ctx: ah.ToolContext) -> ah.ExecutionResult:
        return ah.ExecutionResult(tool=call.tool, args=call.args, status="ok", stdout="pong\n")


class HostPlugin:
    """A plugin can be any object with hook implementations: no package, no entry point."""

    name = "host"

    @ah.hookimpl
    def register_tools(self, register: Callable[[Any], None]) -> None:
        register(Ping())


async def show(events: Subscription) -> None:
    """A UI-like consumer with its own cursor: a slow one never blocks the publisher."""
    async for envelope in events:
        print(json.dumps(to_ag_ui(envelope)))
        if isinstance(envelope.event, ah.RunFinished):
            return


async def main() -> None:
    # load_installed=False: exactly the plugins given here, whatever is installed.
    async with Kernel(plugins=[HostPlugin()], load_installed=False) as kernel:
        async with anyio.create_task_group() as tg:
            # Subscribe now, not inside the task: it starts after the events below.
            tg.start_soon(show, kernel.bus.subscribe())
            publish = kernel.bus.publish
            ids = {"run_id": "run-1", "thread_id": "thread-1"}
            publish(ah.RunStarted(), **ids)
            publish(ah.TextMessageStart(message_id="m1"), **ids)
            for delta in ("Hello from ", "an embedded kernel."):
                publish(ah.TextMessageContent(message_id="m1", delta=delta), **ids)
            publish(ah.TextMessageEnd(message_id="m1"), **ids)
            publish(ah.RunFinished(outcome={"type": "success"}), **ids)
        for name, tool in kernel.tools.items():
            print(
                f"tool {name} from plugin {kernel.tools.owner(name)!r}: "
                f"{tool.declaration.description}"
            )


if __name__ == "__main__":
    anyio.run(main, backend="trio" if "--trio" in sys.argv[1:] else "asyncio")
