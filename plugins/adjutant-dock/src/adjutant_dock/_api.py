"""The page and the side APIs around the runs.

- ``GET /``: the page (no-store, a strict Content-Security-Policy: scripts are the
  page's own ES modules, nothing inline).
- ``GET /api/state`` (with ``grantsExpire``: each live grant's expiry, epoch ms, and
  ``serverNow``); ``POST /api/mode``; ``POST /api/grants/revoke`` ``{grant}`` (the
  operator's ``revoke``, the user channel).
- ``GET /api/log``; ``GET /api/log/verify``.
- ``GET /api/settings``; ``POST /api/settings/check``; ``POST /api/preset``;
  ``GET /api/roles``; ``GET /api/mcp`` (the MCP servers configured, read-only: state,
  tools, where defined, as ``adjutant mcp list`` shows them).
- ``POST /api/bundle`` (a bug bundle, then ``GET /api/bundles/{name}``).
- ``GET /api/sessions`` (``requests``: the runs folded into one row per request),
  ``GET /api/sessions/{threadId}`` (a stored session, to
  rehydrate), ``POST /api/sessions/{runId}/pin``; ``GET /api/threads/{threadId}`` (a
  tab's thread after a reload: its stored runs, none for a new one).
"""

from __future__ import annotations

import re
import time
import uuid
from pathlib import Path

import msgspec
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Route

from adjutant import ProfileError, load_profile, parse_profile
from adjutant_hookspecs import mode_named

from . import _peers
from ._requests import fold
from ._roles import list_roles, prompt_files
from ._state import ID, MODE_NAMES, dock_of, error, read_json, snapshot

__all__ = ["STATIC", "routes"]

STATIC = Path(__file__).parent / "static"
BUNDLE = re.compile(r"^bundle-[0-9]{8}-[0-9]{6}-[0-9a-f]{6}\.tar\.gz$")
#: The page's own files only: no inline script or style, no other origin, no framing.
CSP = ("default-src 'self'; style-src 'self'; script-src 'self'; connect-src 'self'; "
       "img-src 'self' data:; frame-ancestors 'none'")


async def index(request: Request) -> Response:
    return FileResponse(STATIC / "index.html", headers={
        "Cache-Control": "no-store", "Content-Security-Policy": CSP,
        "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer"})


async def state(request: Request) -> Response:
    return JSONResponse(await snapshot(dock_of(request)))


async def set_mode(request: Request) -> Response:
    dock = dock_of(request)
    body = await read_json(request)
    mode = body.get("mode") if isinstance(body, dict) else None
    if not isinstance(mode, str):
        return error(400, "send {\"mode\": one of " + ", ".join(MODE_NAMES) + "}")
    try:
        await dock.copilot.set_mode(mode_named(mode), channel="user")
    except ValueError as exc:
        return error(400, str(exc))
    return JSONResponse(await snapshot(dock))


async def revoke(request: Request) -> Response:
    dock = dock_of(request)
    body = await read_json(request)
    grant = body.get("grant") if isinstance(body, dict) else None
    if not isinstance(grant, str):
        return error(400, "send {\"grant\": one of the live grants}")
    if grant not in dock.copilot.grants:
        return error(404, f"no live grant {grant!r} (it may have expired)")
    await dock.copilot.revoke(grant)
    return JSONResponse(await snapshot(dock))


#: The most records one `/api/log` answer carries.
MAX_LOG_LIMIT = 100_000
_KIND = re.compile(r"^[a-z][a-z0-9_.-]{0,63}$")


async def log(request: Request) -> Response:
    """The action log's records: ``run_id``, ``kind`` (comma-separated) and ``limit``
    (the latest N, 1 to `MAX_LOG_LIMIT`); a bad parameter gets 400 with the reason."""
    copilot = dock_of(request).copilot
    params = request.query_params
    if unknown := set(params) - {"run_id", "kind", "limit"}:
        return error(400, f"unknown parameter(s): {', '.join(sorted(unknown))} "
                     "(run_id, kind, limit)")
    run_id = params.get("run_id") or None
    if run_id is not None and not ID.match(run_id):
        return error(400, f"run_id must be a run id (letters, digits, _.:-), not {run_id!r}")
    kinds = set(filter(None, params.get("kind", "").split(",")))
    if bad := sorted(k for k in kinds if not _KIND.match(k)):
        return error(400, f"kind must name record kinds (e.g. decision,result), not {bad[0]!r}")
    raw = params.get("limit", "500")
    if not raw.isdigit() or not 1 <= int(raw) <= MAX_LOG_LIMIT:
        return error(400, f"limit must be a whole number from 1 to {MAX_LOG_LIMIT:,}, "
                     f"not {raw!r}")
    records = await copilot.log.records(run_id=run_id)
    if kinds:
        records = [r for r in records if r.get("kind") in kinds]
    return JSONResponse({"records": records[-int(raw):], "total": len(records)})


async def verify(request: Request) -> Response:
    store = dock_of(request).copilot.log.store
    check = getattr(store, "verify", None)  # only a hash-chained store has it
    if check is None:
        return JSONResponse({"ok": None, "verdict": f"the log store {store.name!r} "
                             "cannot be verified (it keeps no hash chain)"})
    report = await check()
    problems = [str(p) for p in report.problems]
    verdict = (f"ok: {report.count} records, hash chain intact" if report.ok
               else f"{len(problems)} problem(s): " + "; ".join(problems[:5]))
    return JSONResponse({"ok": report.ok, "verdict": verdict, "count": report.count,
                         "problems": problems})


async def settings(request: Request) -> Response:
    kernel = dock_of(request).kernel
    home = Path(kernel.home)
    profiles = []
    for name in sorted(p.stem for p in (home / "profiles").glob("*.json")):
        try:
            load_profile(home, name)
            profiles.append({"name": name, "ok": True})
        except ProfileError as exc:
            profiles.append({"name": name, "ok": False, "problems": exc.problems})
    return JSONResponse({"current": kernel.profile.as_dict(), "profiles": profiles})


async def check_settings(request: Request) -> Response:
    """A pasted profile checked by the loader; text that is not JSON gets the line
    and column of the first error."""
    raw = await request.body()
    try:
        given = msgspec.json.decode(raw)
    except msgspec.DecodeError as exc:
        return JSONResponse({"ok": False, "problems": [_where(raw, str(exc))]})
    try:
        parse_profile(given, source="the settings form")
    except ProfileError as exc:  # the check worked: its answer is "not valid" (200)
        return JSONResponse({"ok": False, "problems": exc.problems})
    return JSONResponse({"ok": True, "problems": []})


def _where(raw: bytes, message: str) -> str:
    """msgspec's "(byte N)" as a line and column (1-based, in characters)."""
    found = re.search(r"\(byte (\d+)\)", message)
    if found is None:
        return f"not JSON: {message}"
    before = raw[:int(found.group(1))].decode("utf-8", errors="replace")
    line = before.count("\n") + 1
    column = len(before) - (before.rfind("\n") + 1) + 1
    return f"not JSON: {message[:found.start()].strip()} at line {line}, column {column}"


async def preset(request: Request) -> Response:
    dock = dock_of(request)
    body = await read_json(request)
    name = body.get("name") if isinstance(body, dict) else None
    try:
        profile = load_profile(Path(dock.kernel.home), str(name))
    except ProfileError as exc:
        return JSONResponse({"ok": False, "problems": exc.problems}, status_code=422)
    await dock.copilot.use_preset(profile)
    return JSONResponse(await snapshot(dock))


async def roles(request: Request) -> Response:
    dock = dock_of(request)
    cwd = dock.copilot.cwd
    roles, refused = list_roles(Path(cwd), prompt_files(dock.kernel, cwd))
    return JSONResponse({"workspace": cwd, "roles": roles, "refused": refused})


async def mcp(request: Request) -> Response:
    return JSONResponse(_peers.mcp_rows(dock_of(request).kernel))


async def bundle(request: Request) -> Response:
    dock = dock_of(request)
    body = await read_json(request)
    run_id = body.get("runId") if isinstance(body, dict) else None
    if run_id is not None and not (isinstance(run_id, str) and ID.match(run_id)):
        return error(400, "runId: a run id from the action log")
    folder = Path(dock.kernel.home) / "bundles"
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    name = f"bundle-{time.strftime('%Y%m%d-%H%M%S')}-{uuid.uuid4().hex[:6]}.tar.gz"
    path = await dock.copilot.export_bundle(folder / name, run_id=run_id)
    return JSONResponse({"path": str(path), "download": f"/api/bundles/{name}"})


async def bundle_file(request: Request) -> Response:
    name = request.path_params["name"]
    if not BUNDLE.match(name):
        return error(404, "no such bundle")
    path = Path(dock_of(request).kernel.home) / "bundles" / name
    if not path.is_file():
        return error(404, "no such bundle")
    return FileResponse(path, media_type="application/gzip", filename=name)


async def sessions(request: Request) -> Response:
    history = dock_of(request).hub.history
    runs = await history.index()
    return JSONResponse({"available": history.available, "sessions": runs,
                         "requests": fold(runs), "quarantined": history.quarantined})


async def session(request: Request) -> Response:
    thread_id = request.path_params["thread_id"]
    if not ID.match(thread_id):
        return error(400, "not a thread id")
    runs = await dock_of(request).hub.history.load(thread_id)
    if not runs:
        return error(404, f"no stored session {thread_id!r}")
    return JSONResponse({"threadId": thread_id, "historical": True, "runs": runs})


async def thread(request: Request) -> Response:
    """A tab's own thread as stored, to restore after a reload: its runs, none yet for
    a new thread (200 either way: a fresh page is not an error)."""
    thread_id = request.path_params["thread_id"]
    if not ID.match(thread_id):
        return error(400, "not a thread id")
    runs = await dock_of(request).hub.history.load(thread_id)
    return JSONResponse({"threadId": thread_id, "runs": runs})


async def pin(request: Request) -> Response:
    body = await read_json(request)
    pinned = bool(body.get("pinned", True)) if isinstance(body, dict) else True
    if not await dock_of(request).hub.history.pin(request.path_params["run_id"], pinned):
        return error(404, "no such run in the history")
    return JSONResponse({"pinned": pinned})


routes = [
    Route("/", index),
    Route("/api/state", state),
    Route("/api/mode", set_mode, methods=["POST"]),
    Route("/api/grants/revoke", revoke, methods=["POST"]),
    Route("/api/log", log),
    Route("/api/log/verify", verify),
    Route("/api/settings", settings),
    Route("/api/settings/check", check_settings, methods=["POST"]),
    Route("/api/preset", preset, methods=["POST"]),
    Route("/api/roles", roles),
    Route("/api/mcp", mcp),
    Route("/api/bundle", bundle, methods=["POST"]),
    Route("/api/bundles/{name}", bundle_file),
    Route("/api/sessions", sessions),
    Route("/api/sessions/{thread_id}", session),
    Route("/api/sessions/{run_id}/pin", pin, methods=["POST"]),
    Route("/api/threads/{thread_id}", thread),
]
