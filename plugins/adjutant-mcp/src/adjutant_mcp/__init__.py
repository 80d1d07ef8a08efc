"""MCP bridge for Adjutant, both ways, under one policy.

- Client: the servers in ``mcp.json`` files (``.vscode/mcp.json``, ``.mcp.json``, the
  user's ``<data home>/mcp.json``) and the overlay ``adjutant mcp add`` manages are
  mounted as ``mcp.<server>.<tool>``; every call goes through the safety pipeline,
  as a writing, open-world tool unless the user's configuration says otherwise, with
  its definition pinned by hash (see `adjutant_mcp._tools`).
- Server: ``adjutant mcp serve`` (stdio, or streamable HTTP on loopback) gives any MCP
  client the kernel's tools, each call a run of the operator (see `adjutant_mcp._serve`).

Cheap to import: the ``mcp`` SDK loads when a server is first contacted or served.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

from adjutant_hookspecs import Command, Kernel, ToolCall, ToolDeclaration, Verdict, hookimpl, lazy

__all__ = ["bridge_of", "pre_tool_use", "register_commands", "shutdown", "startup"]

_BRIDGES: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()


def bridge_of(kernel: Kernel) -> Any:
    """The running `Bridge` of a kernel (started with it)."""
    try:
        return _BRIDGES[kernel]
    except KeyError:
        raise RuntimeError("the MCP bridge starts with the kernel: use `async with kernel`"
                           ) from None


@hookimpl
def register_commands(register: Callable[[Command], None]) -> None:
    register(Command(name="mcp", help="MCP servers: list, add, test, login, enable, disable, "
                     "remove; serve Adjutant's tools over MCP", run=lazy("adjutant_mcp._cli:run"),
                     configure=lazy("adjutant_mcp._cli:configure")))


@hookimpl
async def startup(kernel: Kernel) -> None:
    import sys

    from ._bridge import Bridge

    bridge = Bridge(kernel, kernel.plugin_name(sys.modules[__name__]))
    await bridge.start()
    _BRIDGES[kernel] = bridge


@hookimpl
async def shutdown(kernel: Kernel) -> None:
    bridge = _BRIDGES.pop(kernel, None)
    if bridge is not None:
        await bridge.stop()


@hookimpl
def pre_tool_use(call: ToolCall, declaration: ToolDeclaration, mode: str) -> Verdict | None:
    """A definition the user has not approved in this exact form asks, in every mode."""
    from ._tools import mounted

    tool = mounted(declaration)
    if tool is None:
        return None
    state = tool.pin_state()
    if state == "pinned":
        return None
    what = ("is new: approve it once (its definition is in the preview)" if state == "new"
            else "changed its definition since you approved it (the change is in the preview)")
    return Verdict(decision="ask", policy="mcp-pins",
                   reason=f"{tool.spec.name}/{tool.remote} {what}")
