"""Every event type maps one-to-one onto AG-UI, checked with AG-UI's own models."""

from __future__ import annotations

import msgspec
import pytest
from ag_ui.core import Event as AgUiEvent
from ag_ui.core import EventType
from pydantic import TypeAdapter

from adjutant import EventBus, encode_sse, to_ag_ui
from adjutant_hookspecs import AG_UI_EVENTS, BusGap, PatchOp, event_name
from adjutant_hookspecs import _events as ev

AGUI = TypeAdapter(AgUiEvent)
patch = (PatchOp(op="replace", path="/mode", value="propose-only"),
         PatchOp(op="move", path="/b", from_="/a"))

SAMPLES = [
    ev.RunStarted(), ev.RunFinished(result={"ok": 1}, outcome={"type": "success"}),
    ev.RunError(message="model died", code="provider"), ev.StepStarted(step_name="s"),
    ev.StepFinished(step_name="s"), ev.TextMessageStart(message_id="m"),
    ev.TextMessageContent(message_id="m", delta="hi"), ev.TextMessageEnd(message_id="m"),
    ev.TextMessageChunk(message_id="m", delta="x"),
    ev.ToolCallStart(tool_call_id="c", tool_call_name="files.read", parent_message_id="m"),
    ev.ToolCallArgs(tool_call_id="c", delta='{"path":'), ev.ToolCallEnd(tool_call_id="c"),
    ev.ToolCallChunk(tool_call_id="c", delta="}"),
    ev.ToolCallResult(message_id="m2", tool_call_id="c", content="3 lines", role="tool"),
    ev.StateSnapshot(snapshot={"mode": "off"}), ev.StateDelta(delta=patch),
    ev.MessagesSnapshot(messages=({"id": "1", "role": "user", "content": "hi"},)),
    ev.ActivitySnapshot(message_id="a", activity_type="plan", content={"steps": []}),
    ev.ActivityDelta(message_id="a", activity_type="plan", patch=patch),
    ev.Raw(event={"x": 1}, source="ollama"), ev.Custom(name="x.y", value=[1]),
    ev.ReasoningStart(message_id="r"), ev.ReasoningMessageStart(message_id="r"),
    ev.ReasoningMessageContent(message_id="r", delta="hmm"),
    ev.ReasoningMessageEnd(message_id="r"), ev.ReasoningMessageChunk(delta="d"),
    ev.ReasoningEnd(message_id="r"),
    ev.ReasoningEncryptedValue(subtype="message", entity_id="e", encrypted_value="zz"),
    ev.SubagentStarted(subagent_run_id="s", name="helper"),
    ev.SubagentFinished(subagent_run_id="s"), ev.SubagentError(subagent_run_id="s", message="x"),
    BusGap(first_missed=3, last_missed=9),
]


def test_one_class_per_ag_ui_event_type() -> None:
    names = [event_name(cls) for cls in AG_UI_EVENTS]
    assert sorted(names) == sorted(t.value for t in EventType)
    assert len(set(names)) == len(names)
    assert {type(s) for s in SAMPLES} >= set(AG_UI_EVENTS)


@pytest.mark.parametrize("event", SAMPLES, ids=lambda e: event_name(type(e)))
def test_ag_ui_accepts_every_event_unchanged(event: ev.Event) -> None:
    bus = EventBus()
    envelope = bus.publish(event, run_id="run-1", thread_id="thread-1")
    wire = msgspec.json.decode(msgspec.json.encode(to_ag_ui(envelope)))  # as sent
    parsed = AGUI.validate_python(wire)
    # nothing we send is unknown to AG-UI, and nothing it knows is lost on the way
    known = {f.alias or name for name, f in type(parsed).model_fields.items()} | {"type"}
    assert set(wire) <= known, set(wire) - known
    assert parsed.model_dump(by_alias=True, exclude_none=True, mode="json") == wire
    assert wire["metadata"]["adjutant"] == {"seq": 1, "runSeq": 1}
    frame = encode_sse(envelope)
    assert frame.startswith(b"id: 1\ndata: {")
    assert frame.endswith(b"}\n\n")
    assert msgspec.json.decode(frame.split(b"data: ", 1)[1]) == wire


def test_run_lifecycle_carries_ids_and_custom_events_wrap() -> None:
    bus = EventBus()
    started = to_ag_ui(bus.publish(ev.RunStarted(), run_id="r", thread_id="t"))
    assert (started["threadId"], started["runId"]) == ("t", "r")
    gap = to_ag_ui(bus.publish(BusGap(first_missed=1, last_missed=2)))
    assert gap["type"] == "CUSTOM"
    assert gap["name"] == "adjutant.bus.gap"
    assert gap["value"] == {"firstMissed": 1, "lastMissed": 2}
