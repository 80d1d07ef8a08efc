"""The Co-Pilot panel's endpoints: the live-recording agent's state (adjutant-copilot-agent)
of the recording in progress, or the latest one, and what the user does with it.

The agent runs in the process that records (``adjutant record --agent``), so its bus
events do not reach this one; the page polls the state the agent saves after every
cycle (the key-value store, readable from any process).

- ``GET /api/copilot-agent/state`` (``?session=<id>``: that recording): ``{session,
  recording, agentRunning, state, sessions}``; each item of ``state`` carries its
  ``evidence`` span and ``heard``, the transcript's words in that span. No recording
  yet: ``session`` null. Without adjutant-copilot-agent: 503 naming what to install.
- ``POST /api/copilot-agent/dismiss`` ``{session, index}`` (``index`` 0-based): the
  suggested question dismissed as ``adjutant copilot-agent dismiss`` does it (by the
  running agent, else in the saved state), and logged (``dock_copilot_dismiss``).
- ``POST /api/copilot-agent/act`` ``{session, index, threadId, runId,
  clientSessionId}``: action item ``index`` becomes an ordinary request on that thread
  (logged first, ``copilot_agent_act``), answered with the run's event stream exactly
  as ``/api/copilot/run``: planned, previewed and asked under the current mode. The
  request's text is the item's, taken from the stored state, never from the page.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import anyio
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from . import _peers
from ._records import DockCopilotDismissRecord
from ._runs import Refused
from ._state import ID, dock_of, error, read_json
from ._stream import stream_segment

if TYPE_CHECKING:
    from adjutant_hookspecs import Kernel

__all__ = ["COPILOT_MISSING", "routes"]

COPILOT_MISSING = ("the Co-Pilot panel needs the adjutant-copilot-agent plugin: pip install "
                   "adjutant-copilot-agent (then restart the dock; record with `adjutant "
                   "record --agent`)")
#: Item lists of the state, as the page names them.
ITEMS = ("key_points", "decisions", "action_items", "open_questions")


def _installed(kernel: Kernel) -> bool:
    return _peers.declares(kernel, "copilot_agent.updated")


def _session_id(value: Any) -> str | None:
    return value if isinstance(value, str) and ID.match(value) else None


def _index(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 \
        else None


async def state(request: Request) -> Response:
    kernel = dock_of(request).kernel
    if not _installed(kernel):
        return error(503, COPILOT_MISSING, missing=COPILOT_MISSING)
    from adjutant_copilot_agent import agent_running, find_session, list_sessions, load_state

    if unknown := set(request.query_params) - {"session"}:
        return error(400, f"unknown parameter(s): {', '.join(sorted(unknown))} (session)")
    wanted = request.query_params.get("session") or None
    if wanted is not None and _session_id(wanted) is None:
        return error(400, f"session must be a recording's id (letters, digits, _.:-), not "
                     f"{wanted!r}")
    sessions = list_sessions(kernel.home)
    listed = [{"id": s.id, "status": s.status, "startedAt": s.started_at} for s in sessions]
    recording = any(s.status == "recording" for s in sessions)
    if not sessions and wanted is None:
        return JSONResponse({"session": None, "recording": False, "agentRunning": False,
                             "state": None, "sessions": []})
    try:
        session = find_session(kernel, wanted)
    except LookupError as exc:
        return error(404, str(exc))
    try:
        found = await load_state(kernel, session.id)
    except LookupError as exc:  # no key-value store: what to install
        return error(503, str(exc))
    except ValueError as exc:  # a state the store holds but cannot read
        return error(400, f"the state of {wanted!r} cannot be read: {exc}")
    import msgspec

    shown: dict[str, Any] = msgspec.to_builtins(found)
    for key in ITEMS:
        for item, given in zip(shown[key], getattr(found, key), strict=True):
            item["heard"] = found.words(given.evidence)
    shown.pop("transcript", None)  # each item carries its words; the rest stays stored
    return JSONResponse({
        "session": {"id": session.id, "status": session.status, "source": session.source,
                    "startedAt": session.started_at, "stoppedAt": session.stopped_at,
                    "seconds": session.seconds},
        "recording": recording, "agentRunning": agent_running(kernel, session.id),
        "state": shown, "sessions": listed})


async def _in_session(kernel: Any, session_id: str,
                      fetch: Callable[[], Awaitable[Any]]) -> tuple[Any, Response | None]:
    """``fetch()``'s value from a recording that exists, or the refusal to answer: 404
    for an unknown recording, 400 for an item it lacks, 503 without a key-value store."""
    from adjutant_copilot_agent import find_session

    try:
        find_session(kernel, session_id)
    except LookupError as exc:
        return None, error(404, str(exc))
    try:
        return await fetch(), None
    except IndexError as exc:  # (a LookupError too: first)
        return None, error(400, str(exc))
    except LookupError as exc:  # no key-value store: what to install
        return None, error(503, str(exc))


async def dismiss(request: Request) -> Response:
    dock = dock_of(request)
    kernel = dock.kernel
    if not _installed(kernel):
        return error(503, COPILOT_MISSING, missing=COPILOT_MISSING)
    body = await read_json(request)
    given = body if isinstance(body, dict) else {}
    session_id, index = _session_id(given.get("session")), _index(given.get("index"))
    if session_id is None or index is None:
        return error(400, "send {\"session\": the recording's id, \"index\": the suggested "
                     "question's number, from 0}")
    from adjutant_copilot_agent import agent_running, dismiss_question, load_state

    asked, refused = await _in_session(kernel, session_id,
                                       lambda: dismiss_question(kernel, session_id, index))
    if refused is not None:
        return refused
    await dock.copilot.log.record(DockCopilotDismissRecord(
        session=session_id, index=index + 1, question=asked.question))
    # a running agent applies it within a tick: the answer shows it done
    with anyio.move_on_after(3.0):
        while agent_running(kernel, session_id):
            now = (await load_state(kernel, session_id)).suggested_questions
            if index < len(now) and now[index].dismissed:
                break
            await anyio.sleep(0.1)
    return JSONResponse({"dismissed": asked.question, "index": index})


async def act(request: Request) -> Response:
    dock = dock_of(request)
    kernel = dock.kernel
    if not _installed(kernel):
        return error(503, COPILOT_MISSING, missing=COPILOT_MISSING)
    body = await read_json(request)
    given = body if isinstance(body, dict) else {}
    session_id, index = _session_id(given.get("session")), _index(given.get("index"))
    thread, run = _session_id(given.get("threadId")), _session_id(given.get("runId"))
    client = given.get("clientSessionId")
    if session_id is None or index is None or thread is None or run is None \
            or not (isinstance(client, str) and ID.match(client)):
        return error(400, "send {\"session\": the recording's id, \"index\": the action "
                     "item's number, from 0, \"threadId\", \"runId\", \"clientSessionId\"}")
    from adjutant_copilot_agent import act_record, action_item

    item, refused = await _in_session(kernel, session_id,
                                      lambda: action_item(kernel, session_id, index))
    if refused is not None:
        return refused
    record = act_record(session_id, index, item)
    if not record.text:
        return error(400, f"action item {index + 1} is empty: nothing to ask")
    raw = {"threadId": thread, "runId": run,
           "messages": [{"id": f"act-{run}", "role": "user", "content": record.text}],
           "forwardedProps": {"clientSessionId": client,
                              "copilotAgentAct": {"session": session_id, "index": index}}}
    if run in dock.hub.segments:
        return error(409, f"run {run!r} exists already: a runId is used once")
    await dock.copilot.log.record(record)
    try:
        segment = dock.hub.submit(raw, record.text, client)
    except Refused as exc:
        return error(exc.status, str(exc))
    return stream_segment(dock, segment, 0)


routes = [
    Route("/api/copilot-agent/state", state),
    Route("/api/copilot-agent/dismiss", dismiss, methods=["POST"]),
    Route("/api/copilot-agent/act", act, methods=["POST"]),
]
