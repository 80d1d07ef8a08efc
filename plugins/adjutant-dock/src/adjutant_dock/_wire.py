"""The dock's wire: the canonical envelope around each AG-UI event, and SSE frames.

The envelope (the dock's server-to-browser SSE contract) is ``{id, seq, runId,
threadId, clientSessionId, timestamp, event, data}``; ``data`` is the AG-UI event
itself (camelCase, the shape ``ag-ui-protocol`` validates). ``seq`` counts from 1
within one AG-UI run and is the SSE ``id:``, so a browser that reconnects with
``Last-Event-ID`` (or ``?after=<seq>``) gets exactly what it missed.
"""

from __future__ import annotations

import datetime
from typing import Any

import msgspec

__all__ = ["EVENT_NAMES", "envelope", "event_name", "frame"]

#: AG-UI type → the envelope's ``event`` (the contract's names; others lower-cased).
EVENT_NAMES = {
    "RUN_STARTED": "run_started", "RUN_FINISHED": "run_finished", "RUN_ERROR": "run_error",
    "TEXT_MESSAGE_START": "text_start", "TEXT_MESSAGE_CONTENT": "text_delta",
    "TEXT_MESSAGE_END": "text_end", "TOOL_CALL_START": "tool_call_start",
    "TOOL_CALL_ARGS": "tool_call_args", "TOOL_CALL_END": "tool_call_end",
    "TOOL_CALL_RESULT": "tool_call_result", "STATE_DELTA": "state_delta",
    "STATE_SNAPSHOT": "state_snapshot",
}  # fmt: skip


def event_name(data: dict[str, Any]) -> str:
    kind = str(data["type"])
    return EVENT_NAMES.get(kind, kind.lower())


def iso(ms: int) -> str:
    """Unix milliseconds as the envelope's ISO 8601 UTC timestamp."""
    moment = datetime.datetime.fromtimestamp(ms / 1000, tz=datetime.UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def envelope(seq: int, run_id: str, thread_id: str, client_session: str, ms: int,
             data: dict[str, Any], event: str | None = None) -> dict[str, Any]:
    return {"id": f"{run_id}:{seq}", "seq": seq, "runId": run_id, "threadId": thread_id,
            "clientSessionId": client_session, "timestamp": iso(ms),
            "event": event or event_name(data), "data": data}


def frame(env: dict[str, Any]) -> dict[str, Any]:
    """The keyword arguments of sse-starlette's ``ServerSentEvent`` for an envelope:
    ``id: <seq>`` and one ``data:`` line of JSON, no ``event:`` field (AG-UI's
    framing; the envelope names the event)."""
    return {"id": str(env["seq"]), "data": msgspec.json.encode(env).decode()}
