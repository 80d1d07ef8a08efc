"""MCP bridge for Adjutant, both ways, under one policy.

- Client: the servers in ``mcp.json`` files (``.vscode/mcp.json``, ``.mcp.json``, the
  user's ``<data home>/mcp.json``) and the overlay ``adjutant mcp add`` manages are
  mounted as ``mcp.<server>.<tool>``; every call goes through the safety pipeline,
  as a writing, open-world tool unless the user's configuration says otherwise, with
  its definition pinned by hash (see `adjutant_mcp._tools`).
- Server: ``adjutant mcp serve`` (stdio, or streamable HTTP on loopback) gives any MCP
  client the kernel's tools, each call a run of the operator (see `adjutant_mcp._serve`).

Other plugins reach the running bridge through ``kernel.plugin("mcp")``, an
`McpServers`. Cheap to import: the ``mcp`` SDK loads when a server is first contacted
or served.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from adjutant_hookspecs import Command, hookimpl, lazy

if TYPE_CHECKING:
    from adjutant_hookspecs import Kernel, ToolCall, ToolDeclaration, Verdict

    from ._bridge import Bridge

__all__ = ["McpPlugin", "McpServers", "bridge_of"]

NOT_STARTED = "the MCP bridge starts with the kernel: use `async with kernel`"


@runtime_checkable
class McpServers(Protocol):
    """What another plugin (a dock's MCP panel) may ask of adjutant-mcp, reached with
    ``kernel.plugin("mcp")``: the configured servers as ``adjutant mcp list`` shows
    them. Both raise `RuntimeError` before the kernel has started."""

    def server_rows(self) -> list[dict[str, Any]]:
        """Each server: name, state, transport, target, tools, source, note, skipped."""
        ...

    def server_problems(self) -> list[str]:
        """What is wrong with the configuration files (a bad entry, an unreadable file)."""
        ...


class McpPlugin:
    """adjutant-mcp for one kernel (the entry point names this class): the `Bridge`
    to its configured servers lives here from ``startup`` to ``shutdown``. It is an
    `McpServers`."""

    name = "mcp"

    def __init__(self) -> None:
        self._bridge: Bridge | None = None

    @property
    def bridge(self) -> Bridge:
        """The running bridge; `RuntimeError` before start-up or after shut-down."""
        if self._bridge is None:
            raise RuntimeError(NOT_STARTED)
        return self._bridge

    def server_rows(self) -> list[dict[str, Any]]:
        return self.bridge.server_rows()

    def server_problems(self) -> list[str]:
        return list(self.bridge.problems)

    @hookimpl
    def register_commands(self, register: Callable[[Command], None]) -> None:
        register(Command(name="mcp", help="MCP servers: list, add, test, login, enable, "
                         "disable, remove; serve Adjutant's tools over MCP",
                         run=lazy("adjutant_mcp._cli:run"),
                         configure=lazy("adjutant_mcp._cli:configure")))

    @hookimpl
    async def startup(self, kernel: Kernel) -> None:
        from ._bridge import Bridge

        bridge = Bridge(kernel, kernel.plugin_name(self))
        await bridge.start()
        self._bridge = bridge

    @hookimpl
    async def shutdown(self, kernel: Kernel) -> None:
        bridge, self._bridge = self._bridge, None
        if bridge is not None:
            await bridge.stop()

    @hookimpl
    def pre_tool_use(self, call: ToolCall, declaration: ToolDeclaration,
                     mode: str) -> Verdict | None:
        """A definition the user has not approved in this exact form asks, in every
        mode."""
        from adjutant_hookspecs import Verdict

        from ._tools import mounted

        tool = mounted(declaration)
        if tool is None:
            return None
        state = tool.pin_state()
        if state == "pinned":
            return None
        what = ("is new: approve it once (its definition is in the preview)" if state == "new"
                else "changed its definition since you approved it (the change is in the "
                     "preview)")
        return Verdict(decision="ask", policy="mcp-pins",
                       reason=f"{tool.spec.name}/{tool.remote} {what}")


def bridge_of(kernel: Kernel) -> Bridge:
    """The running `Bridge` of a kernel that loaded adjutant-mcp (started with it)."""
    plugin = kernel.plugin(McpPlugin.name)
    if not isinstance(plugin, McpPlugin):
        raise RuntimeError("adjutant-mcp is not loaded in this kernel")
    return plugin.bridge
