"""The client side for one kernel: configured servers, their connections, the mount.

At start: orphaned servers of a dead Adjutant are ended, the configuration is read,
each enabled server's tools are mounted from the listing cached at its last contact
(servers never listed are listed now, within `STARTUP_LIST_S`), and the config files
are watched (`WATCH_S`), so an edit or an ``adjutant mcp`` command takes effect in a
running Adjutant. Servers start on first use; a tool-list-changed notification
re-lists and remounts.
"""

from __future__ import annotations

import json
import os
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from ._children import reap_orphans
from ._config import ServerSpec, load_servers, sources
from ._connection import Connection, describe_error
from ._tools import McpTool, Pins, definition, mount_name

if TYPE_CHECKING:
    from adjutant_hookspecs import Kernel

__all__ = ["Bridge"]

STARTUP_LIST_S = 20.0
WATCH_S = 1.0


class Bridge:
    """Every configured MCP server of one kernel, mounted as ``mcp.<server>.<tool>``."""

    def __init__(self, kernel: Kernel, plugin: str) -> None:
        self.kernel = kernel
        self.plugin = plugin
        self.home = Path(kernel.home)
        self.workspace = kernel.env.get("ADJUTANT_WORKSPACE") or os.getcwd()
        self.pins = Pins(self.home)
        self.servers: dict[str, ServerSpec] = {}
        self.problems: list[str] = []
        self.connections: dict[str, Connection] = {}
        #: server -> tool -> why it is not mounted
        self.skipped: dict[str, dict[str, str]] = {}
        self.reaped: list[int] = []
        #: who answers a server's form (elicitation); None: forms are declined, as
        #: nothing here can ask the user mid-call (see `Connection._elicit`)
        self.on_form: Any = None
        self._tg: Any = None
        self._stamps: tuple[Any, ...] = ()

    # -- lifecycle -----------------------------------------------------------------------

    async def start(self, *, watch: bool = True) -> None:
        from adjutant import get_logger

        self.reaped = reap_orphans()
        if self.reaped:
            get_logger(plugin="mcp").warning("ended MCP servers left by an Adjutant that "
                                             "died", pids=self.reaped)
        self._tg = anyio.create_task_group()
        await self._tg.__aenter__()
        self.reload()
        never_listed = [s.name for s in self.servers.values()
                        if s.enabled and self._cached(s) is None]
        if never_listed:
            with anyio.move_on_after(STARTUP_LIST_S):
                async with anyio.create_task_group() as tg:
                    for name in never_listed:
                        tg.start_soon(self._refresh_quietly, name)
        if watch:
            self._tg.start_soon(self._watch)

    async def stop(self) -> None:
        if self._tg is None:
            return
        with anyio.CancelScope(shield=True):
            async with anyio.create_task_group() as tg:
                for connection in self.connections.values():
                    tg.start_soon(connection.stop)
        self._tg.cancel_scope.cancel()
        await self._tg.__aexit__(None, None, None)
        self._tg = None

    # -- configuration -------------------------------------------------------------------

    def _stamp(self) -> tuple[Any, ...]:
        stamps: list[tuple[int, int, int] | None] = []
        files = [p for p, _ in sources(self.home, self.workspace)]
        for path in (*files, self.home / "mcp" / "overlay.json"):
            try:
                st = os.stat(path)
                stamps.append((st.st_mtime_ns, st.st_size, st.st_ino))
            except OSError:
                stamps.append(None)
        return tuple(stamps)

    def reload(self) -> None:
        """Read the configuration again and bring connections and mounts in line."""
        self._stamps = self._stamp()
        servers, self.problems = load_servers(self.home, self.workspace, self.kernel.env)
        for name, connection in list(self.connections.items()):
            if servers.get(name) != connection.spec:
                del self.connections[name]
                self._tg.start_soon(connection.stop)
                self._mount(connection.spec, [], connection)
        self.servers = servers
        for name, spec in servers.items():
            if name in self.connections:
                continue
            connection = Connection(spec, spawn=self._tg.start_soon,
                                    logdir=self.home / "mcp" / "logs",
                                    on_tools_changed=partial(self._refresh_quietly, name),
                                    home=self.home, on_form=self._form)
            self.connections[name] = connection
            self._mount(spec, (self._cached(spec) or []) if spec.enabled else [], connection)

    async def _form(self, server: str, message: str, schema: dict[str, Any],
                    prefilled: dict[str, Any]) -> dict[str, Any] | None:
        if self.on_form is None:
            return None
        answer: dict[str, Any] | None = await self.on_form(server, message, schema, prefilled)
        return answer

    async def _watch(self) -> None:
        from adjutant import get_logger

        while True:
            await anyio.sleep(WATCH_S)
            if self._stamp() != self._stamps:
                self.reload()
                get_logger(plugin="mcp").info("MCP configuration reloaded",
                                              servers=sorted(self.servers))

    # -- listing and mounting ------------------------------------------------------------

    def _cache_path(self, spec: ServerSpec) -> Path:
        return self.home / "mcp" / "tools" / f"{spec.key}.json"

    def _cached(self, spec: ServerSpec) -> list[dict[str, Any]] | None:
        """The listing saved at the last contact, if it was with this same definition."""
        try:
            data = json.loads(self._cache_path(spec).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(data, dict) or data.get("server") != spec.digest:
            return None
        tools = data.get("tools")
        return tools if isinstance(tools, list) else None

    async def refresh(self, name: str) -> list[McpTool]:
        """List the server's tools now, remember the listing, and remount them."""
        connection = self.connections[name]
        tools = [definition(t) for t in await connection.list_tools()]
        path = self._cache_path(connection.spec)
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps({"server": connection.spec.digest, "tools": tools}),
                       encoding="utf-8")
        os.replace(tmp, path)
        return self._mount(connection.spec, tools, connection)

    async def _refresh_quietly(self, name: str) -> None:
        from adjutant import get_logger

        try:
            await self.refresh(name)
        except Exception as exc:  # the state and reason stay on the connection
            get_logger(plugin="mcp").warning("could not list MCP tools", server=name,
                                             error=describe_error(exc))

    def _mount(self, spec: ServerSpec, tools: list[dict[str, Any]],
               connection: Connection) -> list[McpTool]:
        mounted: list[McpTool] = []
        skipped: dict[str, str] = {}
        taken: set[str] = set()
        for defn in tools:
            try:
                if not isinstance(defn.get("name"), str):
                    raise ValueError("it has no name")
                tool = McpTool(spec, defn, mount_name(spec, defn["name"], taken), connection,
                               self.pins)
            except (ValueError, TypeError, KeyError) as exc:
                skipped[str(defn.get("name"))] = str(exc)
                continue
            taken.add(tool.declaration.name)
            mounted.append(tool)
        refused = self.kernel.mount_tools(self.plugin, f"mcp.{spec.key}.", mounted)
        for tool in mounted:
            if tool.declaration.name in refused:
                skipped[tool.remote] = refused[tool.declaration.name]
        self.skipped[spec.name] = skipped
        return [t for t in mounted if t.declaration.name not in refused]

    def server_rows(self) -> list[dict[str, Any]]:
        """Each configured server as ``adjutant mcp list`` and the dock show it: name,
        state (``off`` when disabled), transport, target, tools mounted, source, a note
        (its error or why it is down) and the tools skipped with why."""
        rows = []
        for name, spec in sorted(self.servers.items()):
            connection = self.connections.get(name)
            rows.append({"name": name,
                         "state": connection.state if connection and spec.enabled else "off",
                         "transport": spec.transport, "target": spec.target,
                         "tools": len(self.tools_of(name)), "source": spec.source,
                         "note": spec.error or spec.note or (
                             connection.reason if connection else ""),
                         "skipped": self.skipped.get(name, {})})
        return rows

    def tools_of(self, name: str) -> list[McpTool]:
        spec = self.servers[name]
        prefix = f"mcp.{spec.key}."
        return [t for n, t in self.kernel.tools.items()
                if n.startswith(prefix) and isinstance(t, McpTool)]
