"""Envelopes as AG-UI events: the web dock and any AG-UI client need no translation.

Standard events already carry AG-UI's type and camelCase fields; this adds the
envelope's timestamp, the ``threadId``/``runId`` that run lifecycle events require,
and wraps plugin events as ``CUSTOM`` (``name`` = dotted event name, ``value`` =
its fields). Our ``seq`` values ride in ``metadata.adjutant`` so a consumer can
resume from a seq after reconnecting.
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
    out["timestamp"] = envelope.timestamp
    out["metadata"] = {**meta, "adjutant": {"seq": envelope.seq, "runSeq": envelope.run_seq}}
    return {k: v for k, v in out.items() if v is not None}


def encode_sse(envelope: Envelope) -> bytes:
    """One SSE frame as AG-UI's encoder writes it: ``data: <json>\\n\\n`` with an id."""
    body = msgspec.json.encode(to_ag_ui(envelope))
    return b"id: %d\ndata: %s\n\n" % (envelope.seq, body)
