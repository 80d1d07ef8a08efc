"""``adjutant mcp serve``: the kernel's tools for any MCP client, under the same pipeline.

Every ``tools/call`` is a one-step run of the operator (`Copilot.call`): schema,
mode, policies, write gate, dry-run, approval, execution, action log. Reads follow
the mode; a step that needs approval is asked on the terminal Adjutant was started
from (``/dev/tty``, since stdio carries the protocol) and, with nobody there to
answer, is refused.

Errors the MCP way: a call Adjutant refuses (denied by a policy or the schema, refused
by the mode, not approved) is a tool execution error, as the MCP specification puts
input validation and business logic errors: a ``tools/call`` result with ``isError:
true`` whose text says why and what to do, so the calling model sees it and can adapt.
Its ``_meta`` carries ``adjutant/refused: true`` and the run's id (``adjutant/run_id``;
``adjutant/mode`` when the mode refused it), which tell a refusal from a tool that ran
and failed (also ``isError``, with the tool's stderr). Protocol errors stay JSON-RPC
errors: a tool name Adjutant does not serve is ``-32602`` (invalid params), and an
action log that cannot be written (a full disk) is `LOG_UNWRITABLE`.

Served: the tools the profile offers (its ``tools`` globs), minus the MCP tools Adjutant
itself mounts (``mcp.*``): no proxy loops. A call of a tool the allow-list leaves out
is refused by the pipeline, with the reason in the log.

Questions are asked one at a time, each naming the packet it is for. Each client
session is a `Requester`: at most `QUESTIONS` questions per `WINDOW_S` seconds (beyond
that its calls are refused at once, not queued), and at a question the user may answer
``D``: everything from that client is refused for the rest of its session (logged as
``deny_all``; its later calls as ``refused_call``). A client's name (its
``clientInfo``) is shown printable: it cannot drive the terminal.

A client may set a log level (``logging/setLevel``, protocol 2025-11-25 and before):
each refusal is then also sent to it as a ``warning`` log message.

Over HTTP, a call still running after ``close_streams_after`` seconds (one waiting
for its approval, say) closes its SSE stream, and a 2025-11-25 client resumes it
with ``Last-Event-ID`` (SEP-1699; see `adjutant_mcp._http`): no connection is held
open for as long as its user takes to decide.

Over HTTP, loopback is not a boundary (every local user and process can connect), so
each request must carry ``Authorization: Bearer <token>``, the token in
``$ADJUTANT_HOME/mcp/serve-token`` (made once, readable by its owner only).
"""

from __future__ import annotations

import contextlib
import hmac
from pathlib import Path
from typing import TYPE_CHECKING, Any

from adjutant_hookspecs.records import DenyAllRecord, RefusedCallRecord

if TYPE_CHECKING:
    from adjutant import Copilot
    from adjutant_hookspecs import Kernel

__all__ = ["CLOSE_STREAMS_AFTER_S", "LOG_UNWRITABLE", "QUESTIONS", "WINDOW_S",
           "build_server", "serve", "serve_token"]

#: JSON-RPC error code of a call refused because the action log cannot be written (a
#: full disk): nothing ran, or (``data.ran``) it ran and its result may be unlogged.
LOG_UNWRITABLE = -32051
#: At most this many approval questions from one client session per `WINDOW_S` seconds.
QUESTIONS = 10
WINDOW_S = 60.0
#: Over HTTP, a call still running after this many seconds closes its SSE stream
#: (the client resumes it): see `build_server`.
CLOSE_STREAMS_AFTER_S = 10.0
#: ``logging/setLevel`` levels, least severe first (RFC 5424's, as MCP names them).
LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert",
              "emergency")


def exposed(copilot: Copilot) -> dict[str, Any]:
    """What is served: the tools the profile offers, minus mounted MCP ones."""
    return {name: tool for name, tool in copilot.offered_tools().items()
            if not name.startswith("mcp.")}


def build_server(kernel: Kernel, copilot: Copilot, *, questions: int = QUESTIONS,
                 one_client: bool = False,
                 close_streams_after: float = CLOSE_STREAMS_AFTER_S) -> Any:
    """A low-level MCP server over the kernel's tools.

    :param questions: approval questions one client session may cause per `WINDOW_S`.
    :param one_client: every call comes from the same client (stdio: the process at
        the other end of the pipe, whatever names its requests give).
    :param close_streams_after: over resumable HTTP, a call still running after this
        many seconds closes its SSE stream; the client resumes it with
        ``Last-Event-ID`` and gets the result there."""
    import warnings

    import anyio
    from mcp import MCPDeprecationWarning, MCPError
    from mcp.server import Server
    from mcp.types import (
        CallToolResult,
        EmptyResult,
        ListToolsResult,
        TextContent,
        Tool,
        ToolAnnotations,
    )
    from mcp_types.jsonrpc import INVALID_PARAMS

    from adjutant import Requester
    from adjutant_hookspecs import ToolCall

    clients: dict[str, Requester] = {}
    #: the log level each client session asked for (``logging/setLevel``)
    log_levels: dict[str, str] = {}

    def session_key(ctx: Any) -> str:
        return "stdio" if one_client else (_session_id(ctx) or f"name:{_client_name(ctx)}")

    def requester_of(ctx: Any) -> Requester:
        """The client session's `Requester`, made on its first call. A session is the
        stdio pipe, else the HTTP session (``Mcp-Session-Id``), else (stateless HTTP,
        where each request stands alone) the client's name."""
        name = _client_name(ctx)
        key = session_key(ctx)
        if key in clients:
            return clients[key]

        async def denied_all(run_id: str) -> None:
            await copilot.log.record(DenyAllRecord(run_id=run_id, caller=f"mcp:{name}",
                                                   scope="this client's session"))
        who = Requester(f"the MCP client \"{name}\"", questions=questions, window_s=WINDOW_S,
                        on_deny_all=denied_all)
        clients[key] = who
        return who

    async def list_tools(ctx: Any, params: Any) -> Any:
        tools = []
        for name, tool in sorted(exposed(copilot).items()):
            d = tool.declaration
            tools.append(Tool(
                name=name, description=d.description, input_schema=d.args_schema,
                annotations=ToolAnnotations(read_only_hint=d.safety.level == "read",
                                            destructive_hint=d.safety.level == "destructive",
                                            open_world_hint=d.safety.network)))
        return ListToolsResult(tools=tools)

    async def set_level(ctx: Any, params: Any) -> Any:
        log_levels[session_key(ctx)] = params.level
        return EmptyResult()

    async def refusal(ctx: Any, text: str, **meta: Any) -> Any:
        wanted = log_levels.get(session_key(ctx))
        if wanted is not None and LOG_LEVELS.index(wanted) <= LOG_LEVELS.index("warning"):
            with warnings.catch_warnings():  # deprecated from protocol 2026-07-28 on
                warnings.simplefilter("ignore", MCPDeprecationWarning)
                await ctx.session.send_log_message("warning", text, logger="adjutant",
                                                   related_request_id=ctx.request_id)
        return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True,
                              _meta={"adjutant/refused": True, **{
                                  f"adjutant/{k}": v for k, v in meta.items() if v}})

    async def call_tool(ctx: Any, params: Any) -> Any:
        close = getattr(ctx, "close_sse_stream", None)  # set for resumable HTTP streams
        if close is None:
            return await run_call(ctx, params)
        async with anyio.create_task_group() as tg:
            async def close_later() -> None:
                await anyio.sleep(close_streams_after)
                await close()
            tg.start_soon(close_later)
            try:
                return await run_call(ctx, params)
            finally:
                tg.cancel_scope.cancel()

    async def run_call(ctx: Any, params: Any) -> Any:
        if params.name not in kernel.tools or params.name.startswith("mcp."):
            raise MCPError(INVALID_PARAMS, f"Adjutant has no tool {params.name!r}")
        # a tool outside the profile's allow-list is refused (and logged) by the pipeline
        client = _client_name(ctx)
        who = requester_of(ctx)
        if who.denied:
            why = f"the user denied everything from {who.name} for this session"
            await copilot.log.record(RefusedCallRecord(caller=f"mcp:{client}",
                                                       tool=params.name,
                                                       args=dict(params.arguments or {}),
                                                       why=why))
            return await refusal(ctx, f"{params.name} was not run: {why}")
        call = ToolCall(tool=params.name, args=dict(params.arguments or {}),
                        explain=f"asked for by the MCP client {client}")
        # another program asking is not the user being here (execute-auto still expires)
        from adjutant import ActionLogError

        try:
            with who.asking():
                outcome = await copilot.call(call, caller=f"mcp:{client}", by_user=False)
        except ActionLogError as exc:  # a full disk: refused (or its result unlogged), said
            raise MCPError(LOG_UNWRITABLE, str(exc), {"reason": exc.reason,
                                                      "ran": exc.ran}) from None
        result = outcome.results[0] if outcome.results else None
        if result is None:
            mode = await copilot.mode()
            why = outcome.error or (
                f"Adjutant is {mode}: steps are proposed, never run "
                "(`adjutant mode execute-with-confirmation` lets them run)")
            return await refusal(ctx, f"{params.name} was not run: {why}",
                                 run_id=outcome.run_id, mode=mode)
        if result.status == "denied":
            return await refusal(ctx, f"{params.name} was not run: {result.stderr}",
                                 run_id=outcome.run_id)
        if result.status != "ok":
            return CallToolResult(content=[TextContent(
                type="text", text=result.stderr or result.status)], is_error=True)
        return CallToolResult(content=[TextContent(type="text",
                                                   text=result.stdout or "(no output)")])

    from importlib.metadata import version

    with warnings.catch_warnings():  # logging: deprecated from protocol 2026-07-28 on,
        warnings.simplefilter("ignore", MCPDeprecationWarning)  # still in 2025-11-25
        return Server("adjutant", version=version("adjutant-mcp"),
                      instructions="Adjutant's tools. Every call goes through Adjutant's "
                      "safety pipeline: writes need its user's approval.",
                      on_list_tools=list_tools, on_call_tool=call_tool,
                      on_set_logging_level=set_level)


def _session_id(ctx: Any) -> str | None:
    connection = getattr(getattr(ctx, "session", None), "_connection", None)
    session = getattr(connection, "session_id", None)
    return session if isinstance(session, str) and session else None


def _client_name(ctx: Any) -> str:
    """The client's name and version as it gave them (``clientInfo``), made printable on
    one line and cut to 80 characters: it is shown on the terminal and logged."""
    from adjutant.safety.terminal import printable

    with contextlib.suppress(Exception):
        info = ctx.session.client_params.client_info
        name = printable(f"{info.name} {info.version}".strip(), multiline=False)
        return name if len(name) <= 80 else name[:77] + "..."
    return "unknown"


def open_tty() -> Any:
    """The controlling terminal, for asking approvals; None when there is none."""
    import io

    try:
        raw = io.FileIO("/dev/tty", "r+")
    except OSError:
        return None
    # not open(..., "r+"): that buffers for random access, which a terminal refuses
    # ("not seekable"), so the terminal was never found
    return io.TextIOWrapper(io.BufferedRWPair(raw, raw), encoding="utf-8",
                            line_buffering=True)


def serve_token(home: Path) -> Path:
    """The file holding the HTTP bearer token, made on first use: core's
    `adjutant.owner_only_secret` (mode 0600 in a 0700 folder; a file others can read,
    or another user owns, is refused with a `PermissionError` that says so)."""
    from adjutant import owner_only_secret

    return owner_only_secret(home / "mcp" / "serve-token")


def require_token(app: Any, token: str) -> Any:
    """The ASGI app, answering 401 to any HTTP request without the bearer token."""
    expected = f"Bearer {token}".encode()

    async def guarded(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            given = [v for k, v in scope["headers"] if k.lower() == b"authorization"]
            if len(given) != 1 or not hmac.compare_digest(given[0], expected):
                await send({"type": "http.response.start", "status": 401, "headers": [
                    (b"content-type", b"text/plain; charset=utf-8"),
                    (b"www-authenticate", b'Bearer realm="adjutant"')]})
                await send({"type": "http.response.body", "body": (
                    b"adjutant mcp serve: send Authorization: Bearer <the token in "
                    b"$ADJUTANT_HOME/mcp/serve-token>\n")})
                return
        await app(scope, receive, send)

    return guarded


async def serve(kernel: Kernel, *, http: bool, host: str, port: int, path: str = "/mcp",
                questions: int = QUESTIONS,
                close_streams_after: float = CLOSE_STREAMS_AFTER_S) -> int:
    import sys

    from adjutant import Copilot, TerminalApprover

    if questions < 1:
        raise ValueError("--questions-per-minute must be at least 1")
    if not close_streams_after > 0:
        raise ValueError("--close-streams-after must be more than 0 seconds")
    tty = open_tty()
    approver = TerminalApprover(tty is not None, tty=tty, unanswered=(
        "this `adjutant mcp serve` has no terminal to ask on; start it from a terminal "
        "to approve there"))
    copilot = Copilot(kernel, approver=approver)
    server = build_server(kernel, copilot, questions=questions, one_client=not http,
                          close_streams_after=close_streams_after)
    mode = await copilot.mode()
    who = "on this terminal" if tty else "nowhere (no terminal): steps that need it are refused"
    print(f"adjutant mcp serve: {len(exposed(copilot))} tools, mode {mode}; approvals {who}",
          file=sys.stderr)
    try:
        if http:
            import asyncio

            import uvicorn

            if host not in ("127.0.0.1", "localhost", "::1"):
                raise ValueError(f"refusing to serve on {host}: loopback only")
            try:
                asyncio.get_running_loop()
            except RuntimeError:  # trio: uvicorn cannot run here
                raise RuntimeError("serving over HTTP needs the asyncio backend (uvicorn): "
                                   "unset ADJUTANT_ASYNC_BACKEND, or serve over stdio") from None
            token_file = serve_token(Path(kernel.home))
            from ._http import http_app

            app = require_token(http_app(server, path=path),
                                token_file.read_text(encoding="utf-8").strip())
            import socket

            # bound here, so the address printed is the one listening (--port 0 too)
            family = socket.AF_INET6 if ":" in host else socket.AF_INET
            listener = socket.socket(family, socket.SOCK_STREAM)
            listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                listener.bind((host, port))
            except OSError as exc:
                listener.close()
                raise OSError(f"cannot listen on {host}:{port}: {exc.strerror}") from None
            listener.listen(128)
            bound = listener.getsockname()[1]
            config = uvicorn.Config(app, log_level="warning")
            print(f"adjutant mcp serve: clients send 'Authorization: Bearer <token>', the "
                  f"token in {token_file}", file=sys.stderr)
            shown = f"[{host}]" if ":" in host else host
            print(f"adjutant mcp serve: http://{shown}:{bound}{path}", file=sys.stderr)
            try:
                await uvicorn.Server(config).serve(sockets=[listener])
            finally:
                listener.close()
        else:
            from mcp.server.stdio import stdio_server

            async with stdio_server() as (read, write):
                await server.run(read, write, server.create_initialization_options())
    finally:
        if tty is not None:
            tty.close()
    return 0
