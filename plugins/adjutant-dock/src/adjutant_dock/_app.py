"""The dock's ASGI app (Starlette): the page, the AG-UI run endpoint, the side APIs.

- ``POST /api/copilot/run``: a ``RunAgentInput`` (``resume`` answers an interrupt;
  ``forwardedProps.replay`` = ``{runId, step, dryRun}`` runs or dry-runs a logged
  step again, through the whole pipeline; ``forwardedProps.role`` adds that role's
  skill file to the system prompt, or blocks with 422); the reply is the run's
  ``text/event-stream``.
- ``GET /api/copilot/runs/{runId}/events``: reconnect; ``Last-Event-ID`` or
  ``?after=<seq>`` replays what was missed, then live. When the replay window is
  gone: one ``restart_required`` envelope with a snapshot to load.
- ``POST /api/copilot/runs/{runId}/stop``; ``GET /api/state`` (with ``grantsExpire``:
  each live grant's expiry, epoch ms, and ``serverNow``); ``POST /api/mode``;
  ``POST /api/grants/revoke`` ``{grant}`` (the operator's ``revoke``, the user channel);
  ``GET /api/log``; ``GET /api/log/verify``; ``GET /api/settings``;
  ``POST /api/settings/check``; ``POST /api/preset``; ``GET /api/roles``;
  ``GET /api/mcp`` (the MCP servers configured, read-only: state, tools, where
  defined, as ``adjutant mcp list`` shows them);
  ``POST /api/bundle`` (a bug
  bundle, then ``GET /api/bundles/{name}``); ``GET /api/sessions``,
  ``GET /api/sessions/{threadId}`` (a stored session, to rehydrate),
  ``POST /api/sessions/{runId}/pin``.
- Voice (`_voice`): ``POST /api/voice/hear`` (a push-to-talk recording),
  ``GET /api/voice/events`` (speech and listening, which belong to no run),
  ``POST /api/speech/pause|resume|stop``.
"""

from __future__ import annotations

import re
import sys
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, Literal

import msgspec
from sse_starlette import EventSourceResponse, ServerSentEvent
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from ._roles import RoleError, list_roles, resolve
from ._runs import Hub, Refused, Segment, now_ms
from ._voice import voice_routes, voice_state
from ._wire import envelope, frame

__all__ = ["build_app"]

STATIC = Path(__file__).parent / "static"
ID = re.compile(r"^[A-Za-z0-9_.:-]{1,128}$")
BUNDLE = re.compile(r"^bundle-[0-9]{8}-[0-9]{6}-[0-9a-f]{6}\.tar\.gz$")
#: What the page calls the modes (and their colours, in the page's CSS).
MODE_NAMES = {"off": "off", "listen": "listen-only", "propose": "propose-only",
              "confirm": "execute-with-confirmation", "auto": "execute-auto"}


class ResumeIn(msgspec.Struct, rename="camel", kw_only=True):
    interrupt_id: str
    status: Literal["resolved", "cancelled"] = "resolved"
    payload: Any = None


class RunIn(msgspec.Struct, rename="camel", kw_only=True):
    """AG-UI's ``RunAgentInput``, as much as the dock reads of it."""

    thread_id: str
    run_id: str
    messages: list[dict[str, Any]]
    parent_run_id: str | None = None
    state: Any = None
    tools: list[Any] = []
    context: list[Any] = []
    forwarded_props: Any = None
    resume: list[ResumeIn] | None = None


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


def build_app(hub: Hub, *, ping_s: float = 15.0) -> Starlette:
    copilot = hub.copilot

    def stream(segment: Segment, after: int) -> EventSourceResponse:
        async def events() -> AsyncIterator[ServerSentEvent]:
            hub.listening(segment, +1)
            try:
                seq = after
                while True:
                    missed = segment.after(seq)
                    if missed is None:
                        yield ServerSentEvent(**frame(await restart_required(segment)))
                        return
                    for env in missed:
                        yield ServerSentEvent(**frame(env))
                        seq = env["seq"]
                    if segment.done and seq >= segment.next_seq - 1:
                        return
                    await segment.changed()
            finally:
                hub.listening(segment, -1)

        return EventSourceResponse(events(), ping=ping_s, sep="\n", headers={
            "Cache-Control": "no-store", "X-Accel-Buffering": "no"})

    async def restart_required(segment: Segment | None, run_id: str = "",
                               thread_id: str = "", session: str = "") -> dict[str, Any]:
        """The envelope telling a client its replay is gone, with what to load instead."""
        value = {"reason": "the events after your last one are no longer kept",
                 "snapshot": await state_of()}
        stamp = now_ms()
        data = {"type": "CUSTOM", "name": "adjutant.dock.restart_required", "value": value,
                "timestamp": stamp}
        if segment is not None:
            run_id, thread_id = segment.run_id, segment.thread_id
            session = segment.client_session
        return envelope(0, run_id, thread_id, session, stamp, data,
                        "restart_required")

    async def state_of() -> dict[str, Any]:
        state = dict(copilot.state())
        state["mode"] = await copilot.mode()
        state["modes"] = MODE_NAMES
        state["model"] = {"provider": hub.kernel.profile.model.provider,
                          "name": hub.kernel.profile.model.model,
                          "contextSize": hub.kernel.profile.model.context_size}
        state["openInterrupts"] = hub.open_interrupts()
        state["queue"] = len(hub.queue) + (hub.active is not None)
        state["policies"] = sorted(hub.kernel.policies)
        state["sandbox"] = _has_bwrap()
        state["memoryMb"] = _rss_mb()
        state["voice"] = voice_state(hub.kernel)
        state["grantsExpire"], state["serverNow"] = _grant_expiries(
            copilot, state.get("grants") or [])
        return state

    async def run(request: Request) -> Response:
        try:
            given = msgspec.json.decode(await request.body(), type=RunIn)
        except msgspec.ValidationError as exc:
            return _error(400, f"not a RunAgentInput: {exc}")
        except msgspec.DecodeError as exc:
            return _error(400, f"not JSON: {exc}")
        if not ID.match(given.thread_id) or not ID.match(given.run_id):
            return _error(400, "threadId and runId: 1-128 letters, digits, _ . : -")
        props = given.forwarded_props if isinstance(given.forwarded_props, dict) else {}
        session = str(props.get("clientSessionId") or f"session-{uuid.uuid4().hex[:12]}")
        raw = msgspec.to_builtins(given)
        raw = {k: v for k, v in raw.items() if v is not None}
        try:
            if given.resume is not None:
                segment = await hub.resume(raw, session)
            elif "replay" in props:
                replay = _replay(props["replay"])
                if replay is None:
                    return _error(400, "replay: {runId, step (a number), dryRun (true or "
                                  "false)}")
                what = "dry-run" if replay["dryRun"] else "replay"
                segment = hub.submit(raw, f"{what} of run {replay['runId'][:8]} step "
                                     f"{replay['step'] + 1}", session, replay=replay)
            else:
                prompt = _prompt(given.messages)
                if prompt is None:
                    return _error(400, "the last message must be the user's, with text")
                skill = None
                if props.get("role"):
                    try:
                        skill = resolve(Path(copilot.cwd), props["role"])
                    except RoleError as exc:  # blocked, never a silent substitute
                        return _error(422, str(exc))
                segment = hub.submit(raw, prompt, session, skill=skill)
        except Refused as exc:
            return _error(exc.status, str(exc))
        return stream(segment, 0)

    async def events(request: Request) -> Response:
        run_id = request.path_params["run_id"]
        raw = request.query_params.get("after") or request.headers.get("last-event-id") or "0"
        try:
            after = int(raw)
        except ValueError:
            return _error(400, f"after/Last-Event-ID must be a seq number, not {raw!r}")
        segment = hub.segments.get(run_id)
        if segment is None:  # forgotten (or from before a restart): start from a snapshot
            env = await restart_required(None, run_id, "", "")

            async def gone() -> AsyncIterator[ServerSentEvent]:
                yield ServerSentEvent(**frame(env))

            return EventSourceResponse(gone(), sep="\n")
        return stream(segment, after)

    async def stop(request: Request) -> Response:
        try:
            hub.stop(request.path_params["run_id"])
        except Refused as exc:
            return _error(exc.status, str(exc))
        return JSONResponse({"stopping": request.path_params["run_id"]})

    async def get_state(request: Request) -> Response:
        return JSONResponse(await state_of())

    async def set_mode(request: Request) -> Response:
        body = await _json(request)
        mode = body.get("mode") if isinstance(body, dict) else None
        if not isinstance(mode, str):
            return _error(400, "send {\"mode\": one of " + ", ".join(MODE_NAMES) + "}")
        mode = MODE_NAMES.get(mode, mode)
        try:
            await copilot.set_mode(mode, channel="user")
        except ValueError as exc:
            return _error(400, str(exc))
        return JSONResponse(await state_of())

    async def revoke(request: Request) -> Response:
        body = await _json(request)
        grant = body.get("grant") if isinstance(body, dict) else None
        if not isinstance(grant, str):
            return _error(400, "send {\"grant\": one of the live grants}")
        if grant not in copilot.grants:
            return _error(404, f"no live grant {grant!r} (it may have expired)")
        await copilot.revoke(grant)
        return JSONResponse(await state_of())

    async def log(request: Request) -> Response:
        run_id = request.query_params.get("run_id") or None
        kinds = set(filter(None, request.query_params.get("kind", "").split(",")))
        records = await copilot.log.records(run_id=run_id)
        if kinds:
            records = [r for r in records if r.get("kind") in kinds]
        limit = int(request.query_params.get("limit", "500"))
        return JSONResponse({"records": records[-limit:], "total": len(records)})

    async def verify(request: Request) -> Response:
        store = copilot.log.store
        check = getattr(store, "verify", None)
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
        from adjutant import ProfileError, load_profile

        profiles = []
        saved = sorted(p.stem for p in (Path(hub.kernel.home) / "profiles").glob("*.json"))
        for name in saved:
            try:
                load_profile(Path(hub.kernel.home), name)
                profiles.append({"name": name, "ok": True})
            except ProfileError as exc:
                profiles.append({"name": name, "ok": False, "problems": exc.problems})
        import attrs

        return JSONResponse({"current": attrs.asdict(hub.kernel.profile),
                             "profiles": profiles})

    async def check_settings(request: Request) -> Response:
        from adjutant import ProfileError, parse_profile

        body = await _json(request)
        try:
            parse_profile(body, source="the settings form")
        except ProfileError as exc:
            return JSONResponse({"ok": False, "problems": exc.problems}, status_code=422)
        return JSONResponse({"ok": True, "problems": []})

    async def preset(request: Request) -> Response:
        from adjutant import ProfileError, load_profile

        body = await _json(request)
        name = body.get("name") if isinstance(body, dict) else None
        try:
            profile = load_profile(Path(hub.kernel.home), str(name))
        except ProfileError as exc:
            return JSONResponse({"ok": False, "problems": exc.problems}, status_code=422)
        await copilot.use_preset(profile)
        return JSONResponse(await state_of())

    async def sessions(request: Request) -> Response:
        history = hub.history
        return JSONResponse({"available": history.available, "sessions":
                             await history.index(), "quarantined": history.quarantined})

    async def session(request: Request) -> Response:
        thread_id = request.path_params["thread_id"]
        if not ID.match(thread_id):
            return _error(400, "not a thread id")
        runs = await hub.history.load(thread_id)
        if not runs:
            return _error(404, f"no stored session {thread_id!r}")
        return JSONResponse({"threadId": thread_id, "historical": True, "runs": runs})

    async def pin(request: Request) -> Response:
        body = await _json(request)
        pinned = bool(body.get("pinned", True)) if isinstance(body, dict) else True
        if not await hub.history.pin(request.path_params["run_id"], pinned):
            return _error(404, "no such run in the history")
        return JSONResponse({"pinned": pinned})

    async def mcp(request: Request) -> Response:
        return JSONResponse(_mcp_servers(hub.kernel))

    async def roles(request: Request) -> Response:
        return JSONResponse({"workspace": copilot.cwd,
                             "roles": list_roles(Path(copilot.cwd))})

    async def bundle(request: Request) -> Response:
        body = await _json(request)
        run_id = body.get("runId") if isinstance(body, dict) else None
        if run_id is not None and not (isinstance(run_id, str) and ID.match(run_id)):
            return _error(400, "runId: a run id from the action log")
        folder = Path(hub.kernel.home) / "bundles"
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        name = f"bundle-{time.strftime('%Y%m%d-%H%M%S')}-{uuid.uuid4().hex[:6]}.tar.gz"
        path = await copilot.export_bundle(folder / name, run_id=run_id)
        return JSONResponse({"path": str(path), "download": f"/api/bundles/{name}"})

    async def bundle_file(request: Request) -> Response:
        name = request.path_params["name"]
        if not BUNDLE.match(name):
            return _error(404, "no such bundle")
        path = Path(hub.kernel.home) / "bundles" / name
        if not path.is_file():
            return _error(404, "no such bundle")
        return FileResponse(path, media_type="application/gzip", filename=name)

    async def index(request: Request) -> Response:
        return FileResponse(STATIC / "index.html", headers={
            "Cache-Control": "no-store", "Content-Security-Policy":
            "default-src 'self'; style-src 'self'; script-src 'self'; "
            "connect-src 'self'; img-src 'self' data:; frame-ancestors 'none'",
            "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer"})

    routes = [
        Route("/", index),
        Route("/api/copilot/run", run, methods=["POST"]),
        Route("/api/copilot/runs/{run_id}/events", events),
        Route("/api/copilot/runs/{run_id}/stop", stop, methods=["POST"]),
        Route("/api/state", get_state),
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
        *voice_routes(hub, ping_s=ping_s, now_ms=now_ms),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    return Starlette(routes=routes)


def _replay(given: Any) -> dict[str, Any] | None:
    if not isinstance(given, dict):
        return None
    run_id, step, dry = given.get("runId"), given.get("step"), given.get("dryRun", True)
    if not (isinstance(run_id, str) and ID.match(run_id) and isinstance(step, int)
            and not isinstance(step, bool) and step >= 0 and isinstance(dry, bool)):
        return None
    return {"runId": run_id, "step": step, "dryRun": dry}


def _prompt(messages: list[dict[str, Any]]) -> str | None:
    if not messages or messages[-1].get("role") != "user":
        return None
    content = messages[-1].get("content")
    if isinstance(content, list):  # parts: the text ones
        content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return content if isinstance(content, str) and content.strip() else None


async def _json(request: Request) -> Any:
    try:
        return msgspec.json.decode(await request.body())
    except msgspec.DecodeError:
        return None


def _mcp_servers(kernel: Any) -> dict[str, Any]:
    """The MCP servers the profile's configuration names, as ``adjutant mcp list``
    shows them (read from adjutant-mcp's running bridge; nothing is started here)."""
    module = sys.modules.get("adjutant_mcp")  # loaded as a plugin: imported already
    if module is None or not kernel.pm.is_registered(module):
        return {"available": False, "servers": [], "problems": [],
                "missing": "MCP servers need the adjutant-mcp plugin: pip install "
                           "adjutant-mcp (then restart the dock)"}
    try:
        bridge = module.bridge_of(kernel)
    except RuntimeError as exc:
        return {"available": False, "servers": [], "problems": [], "missing": str(exc)}
    rows = bridge.server_rows()
    return {"available": True, "servers": rows, "problems": list(bridge.problems),
            "missing": None}


def _grant_expiries(copilot: Any, grants: list[str]) -> tuple[dict[str, int], int]:
    """Each live grant's expiry and the time now, in ms (the page counts down the
    difference), from the operator's ``grants_left``."""
    now = int(time.time() * 1000)
    left = copilot.operator_state.grants_left()
    return {g: now + int(s * 1000) for g, s in left.items() if g in grants}, now


def _rss_mb() -> float | None:
    """This process's resident memory (the kernel and the dock), where /proc has it."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        pass
    return None


def _has_bwrap() -> bool:
    import shutil

    return shutil.which("bwrap") is not None
