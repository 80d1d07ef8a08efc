"""One connection per configured server: lifecycle, shared start, calls with deadlines.

A connection lives in a supervisor task (the SDK's ``Client`` must be entered and
left in one task) in the bridge's task group. States: ``stopped`` → ``starting`` →
``running``; any failure is ``error`` with a reason a person can act on, and the next
use reconnects (at most every `RETRY_S` seconds after a failure). Concurrent first
calls wait for the same start. Importing this module does not import ``mcp``.
"""

from __future__ import annotations

import os
import time
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any, Literal

import anyio

from ._children import OWNER, owner_mark, wrap
from ._config import ServerSpec

__all__ = ["Connection", "ConnectionLost", "FormHandler", "ServerUnavailable", "form_defaults"]

State = Literal["stopped", "starting", "running", "error"]
RETRY_S = 2.0
LIST_PAGES = 50


class ServerUnavailable(RuntimeError):
    """The server could not be reached; the message says why and what to do."""


class ConnectionLost(ServerUnavailable):
    """A running server's connection closed (it exited or crashed)."""


def describe_error(exc: BaseException) -> str:
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(describe_error(e) for e in exc.exceptions)
    text = str(exc) or type(exc).__name__
    return text if type(exc).__name__ in text else f"{type(exc).__name__}: {text}"


class Connection:
    """The live side of one `ServerSpec`."""

    def __init__(self, spec: ServerSpec, *, spawn: Callable[..., Any], logdir: Path,
                 on_tools_changed: Callable[[], Awaitable[None]] | None = None,
                 home: Path | None = None, on_form: FormHandler | None = None) -> None:
        self.spec = spec
        #: the data home (OAuth tokens); the OAuth provider of an interactive sign-in,
        #: set by ``adjutant mcp login`` for its one connection
        self.home = home if home is not None else logdir.parent.parent
        self.login_auth: Any = None
        self._on_form = on_form
        self.state: State = "stopped"
        self.reason = ""
        self.client: Any = None
        self._spawn = spawn  # starts a supervisor task in the bridge's task group
        self._logdir = logdir
        self._on_tools_changed = on_tools_changed
        self._lock = anyio.Lock()
        self._ready = anyio.Event()
        self._stop = anyio.Event()
        self._done = anyio.Event()
        self._done.set()
        self._scope = anyio.CancelScope()
        self._failed_at = 0.0

    # -- lifecycle -----------------------------------------------------------------------

    @property
    def log_path(self) -> Path:
        """Where the server's stderr goes (its own words when it fails)."""
        return self._logdir / f"{self.spec.key}.log"

    async def ensure(self) -> Any:
        """The connected client, starting the server if needed. Concurrent callers
        share one start; raises `ServerUnavailable` with the reason."""
        if self.state == "running" and self.client is not None:
            return self.client
        async with self._lock:
            if self.state == "running" and self.client is not None:
                return self.client
            if not self.spec.enabled:
                raise ServerUnavailable(f"MCP server {self.spec.name!r} is off: "
                                        f"{self.spec.error or self.spec.note}")
            if self.state != "starting":  # else a start is in flight: wait for it
                wait = RETRY_S - (time.monotonic() - self._failed_at)
                if self.state == "error" and wait > 0:
                    await anyio.sleep(wait)
                await self._done.wait()  # a previous supervisor has fully let go
                self.state, self.reason = "starting", ""
                self._ready, self._stop, self._done = (anyio.Event(), anyio.Event(),
                                                       anyio.Event())
                self._scope = anyio.CancelScope()
                self._spawn(self._supervise, self._scope)
            with anyio.move_on_after(self.spec.timeout):
                await self._ready.wait()
            if not self._ready.is_set():
                self._fail(f"no answer to the MCP handshake within {self.spec.timeout:g} s")
                self._scope.cancel()  # a server stuck in the handshake is ended, not awaited
            if not self.running:  # the supervisor may have failed meanwhile
                raise ServerUnavailable(self.describe())
            return self.client

    @property
    def running(self) -> bool:
        return self.state == "running"

    async def stop(self) -> None:
        """Close the session; a stdio server is asked to exit, then its group killed."""
        self._stop.set()
        if self.state != "running":
            self._scope.cancel()
        with anyio.move_on_after(10):
            await self._done.wait()
        self._scope.cancel()
        if self.state != "error":
            self.state = "stopped"

    def describe(self) -> str:
        """State and reason, with the tail of the server's own stderr when it failed."""
        text = f"MCP server {self.spec.name!r} ({self.spec.target}): {self.state}"
        if self.reason:
            text += f": {self.reason}"
        if self.state == "error" and self.spec.transport == "stdio":
            tail = _tail(self.log_path)
            if tail:
                text += f"\n  its last words ({self.log_path}):\n    " + "\n    ".join(tail)
        return text

    def _fail(self, reason: str) -> None:
        self.state, self.reason, self._failed_at = "error", reason, time.monotonic()

    def lost(self, reason: str) -> None:
        """The connection died under a call: say so and let the supervisor clean up."""
        if self.state == "running":
            self._fail(reason)
        self.client = None
        self._stop.set()

    async def _target(self, errlog: Any, stack: AsyncExitStack) -> Any:
        if self.spec.transport == "http":
            import httpx2
            from mcp.client.streamable_http import streamable_http_client

            auth = self.login_auth
            if auth is None and not any(k.lower() == "authorization" for k in self.spec.headers):
                from ._oauth import provider  # used only if the server answers 401

                auth = provider(self.spec, self.home)
            # ours to close: the SDK leaves a client it was given open
            http = await stack.enter_async_context(httpx2.AsyncClient(
                headers=dict(self.spec.headers), timeout=httpx2.Timeout(30, read=300),
                auth=auth))
            return streamable_http_client(self.spec.url, http_client=http)
        import shutil

        from mcp import StdioServerParameters
        from mcp.client.stdio import stdio_client

        if shutil.which(self.spec.command, path=self.spec.env.get("PATH")) is None:
            raise FileNotFoundError(self.spec.command)
        command, args = wrap(self.spec.command, self.spec.args)
        env = {**self.spec.env, OWNER: owner_mark()}
        params = StdioServerParameters(command=command, args=args, env=env,
                                       cwd=self.spec.cwd or os.getcwd())
        return stdio_client(params, errlog=errlog)

    async def _supervise(self, scope: anyio.CancelScope) -> None:
        """Owns the client for its whole life; never raises (it runs in a shared group)."""
        from importlib.metadata import version

        from mcp import Client, Implementation

        me = Implementation(name="adjutant", version=version("adjutant-mcp"))
        with scope:  # cancelled by `stop` or a handshake that never ends
            try:
                await self._session(Client, me)
            except Exception as exc:
                if self.state in ("starting", "running"):
                    self._fail(_start_error(self.spec, exc))
        self.client = None
        if self.state in ("starting", "running"):
            self.state = "stopped"
        self._ready.set()
        self._done.set()

    async def _session(self, client_class: Any, me: Any) -> None:
        """Start the server, hold the session until asked to stop."""
        errlog = None
        try:
            self._logdir.mkdir(parents=True, exist_ok=True, mode=0o700)
            # a small blocking open, and the file lives as long as this task
            errlog = open(self.log_path, "a", encoding="utf-8")  # noqa: SIM115, ASYNC230
            errlog.write(f"--- {time.strftime('%Y-%m-%d %H:%M:%S')} starting "
                         f"{self.spec.target}\n")
            errlog.flush()
            async with AsyncExitStack() as stack:
                target = await self._target(errlog, stack)
                client = await stack.enter_async_context(client_class(
                    target, message_handler=self._on_message, client_info=me,
                    elicitation_callback=self._elicit))
                self.client, self.state = client, "running"
                self._ready.set()
                async with anyio.create_task_group() as tg:
                    if self._can_listen(client):
                        tg.start_soon(self._listen, client)
                    await self._stop.wait()
                    tg.cancel_scope.cancel()
        finally:
            if errlog is not None:
                errlog.close()

    # -- elicitation ---------------------------------------------------------------------

    async def _elicit(self, context: Any, params: Any) -> Any:
        """A server asks its user for a form: only the user answers, through the
        bridge's form handler, the form prefilled with the server's defaults
        (SEP-1034); with no handler (no one to ask) it is declined."""
        from mcp.types import ElicitResult

        schema = getattr(params, "requested_schema", None)
        if self._on_form is None or not isinstance(schema, dict):
            return ElicitResult(action="decline")
        answer = await self._on_form(self.spec.name, params.message, schema,
                                     form_defaults(schema))
        return ElicitResult(action="decline") if answer is None else ElicitResult(
            action="accept", content=answer)

    # -- tool list changes ---------------------------------------------------------------

    async def _on_message(self, message: Any) -> None:
        """Handshake-era servers notify list changes as plain notifications."""
        from mcp.types import ToolListChangedNotification

        if isinstance(message, ToolListChangedNotification) and self._on_tools_changed:
            await self._on_tools_changed()

    @staticmethod
    def _can_listen(client: Any) -> bool:
        from mcp_types.version import MODERN_PROTOCOL_VERSIONS

        tools = client.server_capabilities.tools
        return (client.protocol_version in MODERN_PROTOCOL_VERSIONS and tools is not None
                and bool(tools.list_changed))

    async def _listen(self, client: Any) -> None:
        """2026-era servers notify on a ``subscriptions/listen`` stream."""
        try:
            async with client.listen(tools_list_changed=True) as events:
                async for _ in events:
                    if self._on_tools_changed:
                        await self._on_tools_changed()
        except Exception as exc:  # the listing is also checked at every call
            from adjutant import get_logger

            get_logger(plugin="mcp").info("tool list subscription ended",
                                          server=self.spec.name, error=describe_error(exc))

    # -- requests ------------------------------------------------------------------------

    async def list_tools(self) -> list[Any]:
        """The server's tools now (every page, never from a cache). A server that died
        while idle is restarted once: listing is safe to repeat."""
        try:
            return await self._list_tools()
        except ConnectionLost:
            return await self._list_tools()

    async def _list_tools(self) -> list[Any]:
        client = await self.ensure()
        tools: list[Any] = []
        cursor = None
        try:
            with anyio.fail_after(self.spec.timeout):
                for _ in range(LIST_PAGES):
                    page = await client.list_tools(cursor=cursor, cache_mode="refresh")
                    tools += page.tools
                    cursor = page.next_cursor
                    if not cursor:
                        break
        except TimeoutError:
            self.lost(f"tools/list got no answer within {self.spec.timeout:g} s")
            raise ServerUnavailable(self.describe()) from None
        except Exception as exc:
            self._check_closed(exc)
            raise ServerUnavailable(f"MCP server {self.spec.name!r}: tools/list failed: "
                                    f"{describe_error(exc)}") from None
        return tools

    async def call(self, tool: str, arguments: dict[str, Any]) -> Any:
        """Call ``tool``; a call that outlives the server's timeout is cancelled (the
        SDK tells the server) and reported as such."""
        client = await self.ensure()
        try:
            with anyio.fail_after(self.spec.timeout):
                return await client.call_tool(tool, arguments)
        except TimeoutError:
            raise TimeoutError(f"{self.spec.name}/{tool} did not answer within "
                               f"{self.spec.timeout:g} s; the call was cancelled") from None
        except Exception as exc:
            self._check_closed(exc)
            raise

    def _check_closed(self, exc: BaseException) -> None:
        from mcp import MCPError
        from mcp_types.jsonrpc import CONNECTION_CLOSED

        if isinstance(exc, MCPError) and exc.code == CONNECTION_CLOSED:
            self.lost("the server closed the connection (it exited or crashed)")
            raise ConnectionLost(self.describe()) from None


#: Answers a server's form (elicitation): (server, message, schema, the form prefilled
#: with the schema's defaults) -> the user's answers, or None to decline.
FormHandler = Callable[[str, str, dict[str, Any], dict[str, Any]], Awaitable[
    dict[str, Any] | None]]


def form_defaults(schema: dict[str, Any]) -> dict[str, Any]:
    """The form as first shown: each field's ``default`` where the schema gives one of
    the field's type (SEP-1034)."""
    kinds: dict[str, type | tuple[type, ...]] = {
        "string": str, "integer": int, "number": (int, float), "boolean": bool}
    out: dict[str, Any] = {}
    for name, field in (schema.get("properties") or {}).items():
        if not isinstance(field, dict) or "default" not in field:
            continue
        value, kind = field["default"], kinds.get(field.get("type", ""))
        if kind is None or not isinstance(value, kind):
            continue
        if isinstance(value, bool) and field.get("type") != "boolean":
            continue
        if "enum" in field and value not in field["enum"]:
            continue
        out[name] = value
    return out


def _sign_in(exc: BaseException) -> BaseException | None:
    from ._oauth import SignInRequired

    seen: set[int] = set()
    todo = [exc]
    while todo:
        e = todo.pop()
        if id(e) in seen:
            continue
        seen.add(id(e))
        if isinstance(e, SignInRequired):
            return e
        if isinstance(e, BaseExceptionGroup):
            todo += e.exceptions
        todo += [c for c in (e.__cause__, e.__context__) if c is not None]
    return None


def _start_error(spec: ServerSpec, exc: BaseException) -> str:
    from mcp import MCPError
    from mcp_types.jsonrpc import CONNECTION_CLOSED

    if (sign_in := _sign_in(exc)) is not None:
        return str(sign_in)

    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    text = describe_error(exc)
    if isinstance(exc, MCPError) and exc.code == CONNECTION_CLOSED:
        return "the server closed the connection during the MCP handshake (it exited)"
    if isinstance(exc, FileNotFoundError):
        return f"cannot start {spec.command!r}: not found on PATH (install it, or fix " \
               f"'command' in {spec.source})"
    if spec.transport == "http" and ("connect" in text.lower() or "refused" in text.lower()):
        return f"nothing answers at {spec.url} ({text}); is the server running?"
    return text


def _tail(path: Path, lines: int = 5) -> list[str]:
    try:
        with open(path, "rb") as f:
            f.seek(max(0, os.fstat(f.fileno()).st_size - 4096))
            text = f.read().decode(errors="replace")
    except OSError:
        return []
    body = text.rsplit("\n--- ", 1)[-1].splitlines()[1:]
    return [line[:200] for line in body if line.strip()][-lines:]
