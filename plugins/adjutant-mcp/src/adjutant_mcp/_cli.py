"""``adjutant mcp list|add|test|login|enable|disable|remove|serve``.

Changes go to the overlay (``<data home>/mcp/overlay.json``); the user's own files
are never rewritten. A running Adjutant picks the change up within a second.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from typing import Any

from adjutant_hookspecs import ARG_ROLE, Kernel

__all__ = ["configure", "run"]


def configure(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="mcp_command", metavar="ACTION", required=True)
    p = sub.add_parser("list", help="configured servers: state, tools, where defined")
    p.add_argument("--json", action="store_true", help="print JSON")
    p = sub.add_parser("add", help="add a server: NAME -- COMMAND ARGS... (stdio) or "
                       "NAME --url URL (streamable HTTP)")
    p.add_argument("name")
    _add_options(p)
    # the rest, options included: argparse cannot mix options with a `--` command line
    p.add_argument("rest", nargs=argparse.REMAINDER, help="[OPTIONS] -- COMMAND ARGS...")
    for action, text in (("test", "start the server, do the MCP handshake, list its tools"),
                         ("enable", "start using a server (trusts a workspace one)"),
                         ("disable", "stop using a server, keep its configuration"),
                         ("remove", "forget a server (one defined in a file is hidden)")):
        sub.add_parser(action, help=text).add_argument("name")
    sub.add_parser("login", help="sign in to a remote (HTTP) server with OAuth: your "
                   "browser opens; tokens are kept owner-only in the data home"
                   ).add_argument("name")
    p = sub.add_parser("serve", help="serve Adjutant's tools to MCP clients (stdio default)")
    p.add_argument("--http", action="store_true", help="streamable HTTP on loopback")
    p.add_argument("--host", default="127.0.0.1", help="loopback address (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8765, help="HTTP port (default 8765)")
    p.add_argument("--questions-per-minute", type=int, default=10, metavar="N",
                   help="approval questions one client may cause per minute (default 10); "
                   "beyond that its calls are refused at once")
    p.add_argument("--close-streams-after", type=float, default=10.0, metavar="SECONDS",
                   help="over HTTP, a call still running after SECONDS (waiting for "
                   "approval, say) closes its stream; the client resumes it (default 10)")


def _add_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--url", help="a streamable HTTP endpoint, e.g. http://127.0.0.1:8000/mcp")
    p.add_argument("--env", action="append", default=[], metavar="KEY=VALUE",
                   help="environment of a stdio server (repeatable)")
    p.add_argument("--header", action="append", default=[], metavar="KEY=VALUE",
                   help="HTTP header (repeatable)")
    p.add_argument("--read-only", action="append", default=[], metavar="TOOL",
                   help="a tool you know only reads (else every tool counts as writing)")
    p.add_argument("--local", action="append", default=[], metavar="TOOL",
                   help="a tool you know stays on this machine (else: open-world)")
    p.add_argument("--path-arg", action="append", default=[], metavar="ARG",
                   help="an argument name that is a file here: the guard cages it "
                   "(repeatable)")
    p.add_argument("--timeout", type=float, help="seconds a call may take (default 60)")
    p.add_argument("--no-test", action="store_true", help="do not contact the server now")


async def run(kernel: Kernel, args: argparse.Namespace) -> int:
    from . import bridge_of

    bridge = bridge_of(kernel)
    action = args.mcp_command
    if action == "serve":
        from ._serve import serve

        return await serve(kernel, http=args.http, host=args.host, port=args.port,
                           questions=args.questions_per_minute,
                           close_streams_after=args.close_streams_after)
    if action == "list":
        return _list(bridge, args.json)
    if action == "add":
        return await _add(bridge, args)
    if action == "test":
        return await _test(bridge, args.name)
    if action == "login":
        return await login(bridge, args.name, open_browser)
    return _change(bridge, action, args.name)


def _err(text: str) -> None:
    print(text, file=sys.stderr)


def _known(bridge: Any, name: str) -> bool:
    if name in bridge.servers:
        return True
    known = ", ".join(sorted(bridge.servers)) or "none"
    _err(f"no MCP server named {name!r} (configured: {known}); `adjutant mcp add` adds one")
    return False


def _list(bridge: Any, as_json: bool) -> int:
    rows = bridge.server_rows()
    if as_json:
        print(json.dumps({"servers": rows, "problems": bridge.problems}, indent=1))
        return 0
    if not rows:
        print("no MCP servers configured; `adjutant mcp add NAME -- COMMAND ARGS...` adds one")
    for row in rows:
        print(f"{row['name']}: {row['state']}, {row['transport']} {row['target']}, "
              f"{row['tools']} tools  [{row['source']}]")
        if row["note"]:
            print(f"  {row['note']}")
        for tool, why in row["skipped"].items():
            print(f"  tool {tool!r} not mounted: {why}")
    for problem in bridge.problems:
        _err(f"problem: {problem}")
    return 0


def _pairs(items: list[str], what: str) -> dict[str, str]:
    out = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ValueError(f"{what} {item!r} must be KEY=VALUE")
        out[key] = value
    return out


async def _add(bridge: Any, args: argparse.Namespace) -> int:
    from ._config import ConfigError, Overlay, parse_server

    rest = list(args.rest)
    if "--" in rest:
        cut = rest.index("--")
    elif rest and not rest[0].startswith("-"):
        cut = -1  # argparse drops a `--` that comes right after NAME
    else:
        cut = len(rest)
    options = argparse.ArgumentParser(prog=f"adjutant mcp add {args.name}")
    _add_options(options)
    options.parse_args(rest[:max(cut, 0)], namespace=args)
    argv = rest[cut + 1:]
    if bool(args.url) == bool(argv):
        _err("give either --url URL or -- COMMAND ARGS... (one of them)")
        return 2
    entry: dict[str, Any] = ({"type": "http", "url": args.url} if args.url else
                             {"type": "stdio", "command": argv[0], "args": argv[1:]})
    try:
        if args.env:
            entry["env"] = _pairs(args.env, "--env")
        if args.header:
            entry["headers"] = _pairs(args.header, "--header")
        ours: dict[str, Any] = {}
        if args.read_only:
            ours["readOnlyTools"] = args.read_only
        if args.local:
            ours["localTools"] = args.local
        if args.path_arg:
            ours["pathArguments"] = args.path_arg
        if args.timeout is not None:
            ours["timeout"] = args.timeout
        if ours:
            entry["adjutant"] = ours
        overlay = Overlay.load(bridge.home)
        parse_server(args.name, entry, source=str(overlay.path), workspace=bridge.workspace,
                     env=bridge.kernel.env)
    except (ValueError, ConfigError) as exc:
        _err(str(exc))
        return 2
    overlay.servers[args.name] = entry
    overlay.disabled = [n for n in overlay.disabled if n != args.name]
    overlay.removed = [n for n in overlay.removed if n != args.name]
    overlay.save()
    bridge.reload()
    print(f"added MCP server {args.name!r} ({bridge.servers[args.name].target})")
    return 0 if args.no_test else await _test(bridge, args.name)


async def _test(bridge: Any, name: str) -> int:
    from ._connection import ServerUnavailable

    if not _known(bridge, name):
        return 2
    spec = bridge.servers[name]
    if not spec.enabled:
        _err(f"{name}: off: {spec.error or spec.note}")
        return 1
    try:
        tools = await bridge.refresh(name)
    except ServerUnavailable as exc:
        _err(str(exc))
        return 1
    client = bridge.connections[name].client
    info = client.server_info if client is not None else None
    who = f"{info.name} {info.version}" if info else "an anonymous server"
    print(f"{name}: MCP handshake ok with {who}, protocol "
          f"{client.protocol_version if client else '?'}; {len(tools)} tools")
    for tool in tools:
        d = tool.declaration
        kind = d.safety.level + (", open-world" if d.safety.network else ", local")
        caged = [a for a, prop in d.args_schema["properties"].items() if ARG_ROLE in prop]
        kind += f", paths caged: {' '.join(caged)}" if caged else ""
        print(f"  {d.name}  ({kind}; definition {tool.pin_state()})")
        print(f"      {tool.definition['description'][:100] or '(no description)'}")
    for tool, why in bridge.skipped.get(name, {}).items():
        print(f"  tool {tool!r} not mounted: {why}")
    return 0


async def open_browser(url: str) -> None:
    """Show the sign-in page: the system browser, and the address for any other."""
    import webbrowser

    import anyio

    print(f"sign in here (opening your browser): {url}", file=sys.stderr)
    await anyio.to_thread.run_sync(webbrowser.open, url)


async def login(bridge: Any, name: str, browser: Any) -> int:
    """Sign in to ``name`` (OAuth 2.1, PKCE): ``browser`` shows the authorization page,
    whose redirect comes back to a loopback port; then the handshake and the listing,
    as ``adjutant mcp test``."""
    from ._oauth import login_flow

    if not _known(bridge, name):
        return 2
    spec = bridge.servers[name]
    if spec.transport != "http":
        _err(f"{name} is a stdio server: there is nothing to sign in to")
        return 2
    connection = bridge.connections[name]
    await connection.stop()  # the next start signs in
    try:
        connection.login_auth = await login_flow(spec, bridge.home, browser)
        return await _test(bridge, name)
    except Exception as exc:
        # (discovery, registration, the token exchange) and a refused token folder: one
        # line saying what happened and what to try; the trace only with -vv
        logging.getLogger(__name__).debug("sign-in to %s failed", name, exc_info=True)
        what = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        _err(f"{name}: sign-in failed: {what} ({type(exc).__name__}). Check the server's "
             f"URL ({spec.target}) and that it offers OAuth; `adjutant -vv mcp login {name}` "
             "shows the details")
        return 1
    finally:
        connection.login_auth = None


def _change(bridge: Any, action: str, name: str) -> int:
    from ._config import Overlay

    if not _known(bridge, name):
        return 2
    spec = bridge.servers[name]
    overlay = Overlay.load(bridge.home)
    if action == "enable":
        if spec.error:
            _err(f"{name} cannot be enabled: {spec.error}")
            return 1
        overlay.disabled = [n for n in overlay.disabled if n != name]
        if spec.workspace:
            print(f"trusting {name} from {spec.source}: it runs {spec.target!r}"
                  + (f" with env {sorted(spec.env)}" if spec.env else ""))
            overlay.trusted[name] = spec.digest
    elif action == "disable":
        overlay.disabled.append(name)
    elif action == "remove":
        if name in overlay.servers:
            del overlay.servers[name]
        else:
            overlay.removed.append(name)
            print(f"{name} is defined in {spec.source}; Adjutant will ignore it (edit that "
                  "file to delete it)")
        overlay.disabled = [n for n in overlay.disabled if n != name]
        overlay.trusted.pop(name, None)
    overlay.save()
    bridge.reload()
    state = "removed" if name not in bridge.servers else (
        "on" if bridge.servers[name].enabled else f"off: {bridge.servers[name].note}")
    print(f"{name}: {state}")
    return 0
