"""Envelopes as AG-UI events: the web dock and any AG-UI client need no translation.

Standard events already carry AG-UI's type and camelCase fields; this adds the
envelope's timestamp, the ``threadId``/``runId`` that run lifecycle events require
(and the ``RunAgentInput`` shape ``RUN_STARTED.input`` must have), and wraps plugin
events as ``CUSTOM`` (``name`` = dotted event name, ``value`` = its fields). Our
``seq`` values ride in ``metadata.adjutant`` so a consumer can resume from a seq after
reconnecting.
"""

from __future__ import annotations

from typing import Any

import msgspec

from adjutant_hookspecs import Envelope, RunFinished, RunStarted, event_name, is_custom

__all__ = ["encode_sse", "to_ag_ui"]

_RUN_IDS = (RunStarted, RunFinished)


def to_ag_ui(envelope: Envelope) -> dict[str, Any]:
    """The AG-UI event object (camelCase keys, None fields omitted) for an envelope."""
    event = envelope.event
    cls = type(event)
    fields = msgspec.to_builtins(event)
    meta = fields.pop("metadata", None) or {}
    if is_custom(cls):
        fields.pop("type", None)
        out: dict[str, Any] = {"type": "CUSTOM", "name": event_name(cls), "value": fields}
    else:
        out = fields
        if cls in _RUN_IDS:
            out["threadId"] = envelope.thread_id or ""
            out["runId"] = envelope.run_id or ""
        if cls is RunStarted and isinstance(out.get("input"), dict):
            out["input"] = _run_agent_input(out["input"], out["threadId"], out["runId"])
    out["timestamp"] = envelope.timestamp
    out["metadata"] = {**meta, "adjutant": {"seq": envelope.seq, "runSeq": envelope.run_seq}}
    return {k: v for k, v in out.items() if v is not None}


def _run_agent_input(given: dict[str, Any], thread_id: str, run_id: str) -> dict[str, Any]:
    """AG-UI wants ``RUN_STARTED.input`` to be a ``RunAgentInput``: the operator's own
    input (``{"prompt": ...}``, ``{"call": ..., "caller": ...}``) rides in
    ``forwardedProps``, a prompt also as the user message."""
    if "runId" in given and "messages" in given:
        return given  # already one
    messages = []
    if isinstance(given.get("prompt"), str) and given["prompt"]:
        messages.append({"id": f"{run_id}-prompt", "role": "user", "content": given["prompt"]})
    return {"threadId": thread_id, "runId": run_id, "messages": messages,
            "forwardedProps": given}


def encode_sse(envelope: Envelope) -> bytes:
    """One SSE frame as AG-UI's encoder writes it: ``data: <json>\\n\\n`` with an id."""
    body = msgspec.json.encode(to_ag_ui(envelope))
    return b"id: %d\ndata: %s\n\n" % (envelope.seq, body)
