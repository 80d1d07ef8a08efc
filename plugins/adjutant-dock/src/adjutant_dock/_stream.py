"""The run endpoints: AG-UI in, the run's event stream out.

- ``POST /api/copilot/run``: a ``RunAgentInput`` (``resume`` answers an interrupt;
  ``forwardedProps.replay`` = ``{runId, step, dryRun}`` runs or dry-runs a logged
  step again, through the whole pipeline; ``forwardedProps.role`` adds that role's
  skill file to the system prompt, or blocks with 422); the reply is the run's
  ``text/event-stream``.
- ``GET /api/copilot/runs/{runId}/events``: reconnect; ``Last-Event-ID`` or
  ``?after=<seq>`` replays what was missed, then live. When the replay window is
  gone: one ``restart_required`` envelope with a snapshot to load.
- ``POST /api/copilot/runs/{runId}/stop``.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, Literal

import msgspec
from sse_starlette import EventSourceResponse, ServerSentEvent
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ._roles import RoleError, prompt_files, resolve
from ._runs import Refused, Segment, now_ms
from ._state import ID, DockState, dock_of, error, snapshot
from ._wire import envelope, frame

__all__ = ["RunIn", "routes", "stream_segment"]


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


async def run(request: Request) -> Response:
    dock = dock_of(request)
    hub = dock.hub
    try:
        given = msgspec.json.decode(await request.body(), type=RunIn)
    except msgspec.ValidationError as exc:
        return error(400, f"not a RunAgentInput: {exc}")
    except msgspec.DecodeError as exc:
        return error(400, f"not JSON: {exc}")
    if not ID.match(given.thread_id) or not ID.match(given.run_id):
        return error(400, "threadId and runId: 1-128 letters, digits, _ . : -")
    props = given.forwarded_props if isinstance(given.forwarded_props, dict) else {}
    session = str(props.get("clientSessionId") or f"session-{uuid.uuid4().hex[:12]}")
    raw = {k: v for k, v in msgspec.to_builtins(given).items() if v is not None}
    try:
        if given.resume is not None:
            segment = await hub.resume(raw, session)
        elif "replay" in props:
            replay = _replay(props["replay"])
            if replay is None:
                return error(400, "replay: {runId, step (a number), dryRun (true or false)}")
            what = "dry-run" if replay["dryRun"] else "replay"
            segment = hub.submit(raw, f"{what} of run {replay['runId'][:8]} step "
                                 f"{replay['step'] + 1}", session, replay=replay)
        else:
            prompt = _prompt(given.messages)
            if prompt is None:
                return error(400, "the last message must be the user's, with text")
            skill = None
            if props.get("role"):
                try:
                    cwd = dock.copilot.cwd
                    skill = resolve(Path(cwd), props["role"], prompt_files(dock.kernel, cwd))
                except RoleError as exc:  # blocked, never a silent substitute
                    return error(422, str(exc))
            segment = hub.submit(raw, prompt, session, skill=skill)
    except Refused as exc:
        return error(exc.status, str(exc))
    return stream_segment(dock, segment, 0)


async def events(request: Request) -> Response:
    dock = dock_of(request)
    run_id = request.path_params["run_id"]
    raw = request.query_params.get("after") or request.headers.get("last-event-id") or "0"
    try:
        after = int(raw)
    except ValueError:
        return error(400, f"after/Last-Event-ID must be a seq number, not {raw!r}")
    segment = dock.hub.segments.get(run_id)
    if segment is None:  # forgotten (or from before a restart): start from a snapshot
        env = await _restart_required(dock, None, run_id)

        async def gone() -> AsyncIterator[ServerSentEvent]:
            yield ServerSentEvent(**frame(env))

        return EventSourceResponse(gone(), sep="\n")
    return stream_segment(dock, segment, after)


async def stop(request: Request) -> Response:
    try:
        dock_of(request).hub.stop(request.path_params["run_id"])
    except Refused as exc:
        return error(exc.status, str(exc))
    return JSONResponse({"stopping": request.path_params["run_id"]})


routes = [
    Route("/api/copilot/run", run, methods=["POST"]),
    Route("/api/copilot/runs/{run_id}/events", events),
    Route("/api/copilot/runs/{run_id}/stop", stop, methods=["POST"]),
]


def stream_segment(dock: DockState, segment: Segment, after: int) -> EventSourceResponse:
    """The segment's envelopes after ``after``, then live until its terminal event."""
    hub = dock.hub

    async def envelopes() -> AsyncIterator[ServerSentEvent]:
        hub.listening(segment, +1)
        try:
            seq = after
            while True:
                missed = segment.after(seq)
                if missed is None:
                    yield ServerSentEvent(**frame(await _restart_required(dock, segment)))
                    return
                for env in missed:
                    yield ServerSentEvent(**frame(env))
                    seq = env["seq"]
                if segment.done and seq >= segment.next_seq - 1:
                    return
                await segment.changed()
        finally:
            hub.listening(segment, -1)

    return EventSourceResponse(envelopes(), ping=dock.ping_s, sep="\n", headers={
        "Cache-Control": "no-store", "X-Accel-Buffering": "no"})


async def _restart_required(dock: DockState, segment: Segment | None,
                            run_id: str = "") -> dict[str, Any]:
    """The envelope telling a client its replay is gone, with what to load instead."""
    value = {"reason": "the events after your last one are no longer kept",
             "snapshot": await snapshot(dock)}
    stamp = now_ms()
    data = {"type": "CUSTOM", "name": "adjutant.dock.restart_required", "value": value,
            "timestamp": stamp}
    thread_id = session = ""
    if segment is not None:
        run_id, thread_id = segment.run_id, segment.thread_id
        session = segment.client_session
    return envelope(0, run_id, thread_id, session, stamp, data, "restart_required")


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
