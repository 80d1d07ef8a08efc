"""Session history: each run's snapshot and ordered events are stored, listed in an
index that is rebuilt from the records when it is lost, and an unreadable record is
set aside with a diagnostic instead of breaking the view."""

from __future__ import annotations

from typing import Any

import anyio
import msgspec
import pytest
from dockkit import Dock, plan, read, resume_input, run_input, say

pytestmark = pytest.mark.anyio

WRITE = ("notes.write", {"path": "b.txt", "text": "hello\n"})


async def stream(dock: Dock, body: dict[str, Any]) -> Any:
    request = dock.client.build_request("POST", "/api/copilot/run", json=body)
    return await read(await dock.client.send(request, stream=True))


async def settled(dock: Dock) -> None:
    """Wait for the history writer to catch up (it runs behind the stream)."""
    with anyio.fail_after(5):
        await dock.server.hub.drained()
        await dock.server.hub.written()


async def drop_index(kv: Any) -> None:
    for key in [k async for k, _ in kv.scan("dock/index/")]:
        await kv.delete(key)


async def test_a_run_is_stored_and_loads_back_event_for_event(dock: Dock) -> None:
    dock.provider.queue(say("stored words"))
    body = run_input("remember this", thread="th-a")
    live = await stream(dock, body)
    await settled(dock)
    listed = (await dock.client.get("/api/sessions")).json()
    [entry] = listed["sessions"]
    assert entry["threadId"] == "th-a" and entry["runId"] == body["runId"]
    assert entry["prompt"] == "remember this" and entry["status"] == "answered"
    loaded = (await dock.client.get("/api/sessions/th-a")).json()
    assert loaded["historical"] is True
    [run] = loaded["runs"]
    assert run["events"] == live.envelopes
    assert run["snapshot"]["mode"] == "execute-with-confirmation"


async def test_an_interrupted_run_is_stored_as_two_runs(dock: Dock) -> None:
    dock.provider.queue(plan(WRITE))
    first = await stream(dock, run_input("write", thread="th-b"))
    interrupt = first.envelopes[-1]["data"]["outcome"]["interrupts"][0]
    await stream(dock, resume_input(interrupt, "grant", thread="th-b"))
    await settled(dock)
    runs = (await dock.client.get("/api/sessions/th-b")).json()["runs"]
    assert [r["meta"]["status"] for r in runs] == ["interrupted", "executed"]
    assert runs[1]["meta"]["parentRunId"] == runs[0]["meta"]["runId"]
    assert runs[1]["meta"]["answer"] == "granted"


async def test_a_request_is_one_row_with_the_status_it_ended_with(dock: Dock) -> None:
    """Granted after an edit, denied, and a plain answer: three rows, not five; each
    with its last run's status and the answers given on the way."""
    dock.provider.queue(plan(WRITE), plan(WRITE), say("plain"))
    first = await stream(dock, run_input("write then edit", thread="th-g"))
    asked = first.envelopes[-1]["data"]["outcome"]["interrupts"][0]
    again = await stream(dock, resume_input(asked, "edit", thread="th-g",
                                            args={"path": "c.txt", "text": "x\n"}))
    asked = again.envelopes[-1]["data"]["outcome"]["interrupts"][0]
    await stream(dock, resume_input(asked, "grant", thread="th-g"))
    second = await stream(dock, run_input("write, no", thread="th-d"))
    asked = second.envelopes[-1]["data"]["outcome"]["interrupts"][0]
    await stream(dock, resume_input(asked, "deny", thread="th-d"))
    await stream(dock, run_input("just say", thread="th-p"))
    await settled(dock)
    listed = (await dock.client.get("/api/sessions")).json()
    assert len(listed["sessions"]) == 6  # the runs as stored
    rows = {r["prompt"]: r for r in listed["requests"]}
    assert len(listed["requests"]) == 3
    granted, denied, plain = rows["write then edit"], rows["write, no"], rows["just say"]
    assert (granted["status"], granted["answers"], granted["questions"]) == (
        "executed", ["edited", "granted"], 2)
    assert (denied["status"], denied["answers"]) == ("denied", ["denied"])
    assert (plain["status"], plain["answers"], plain["questions"]) == ("answered", [], 0)
    assert len(granted["runs"]) == 3 and granted["runId"] == first.envelopes[0]["runId"]


async def test_a_lost_or_corrupt_index_is_rebuilt_from_the_records(dock: Dock) -> None:
    dock.provider.queue(say("a"), say("b"))
    one, two = run_input("one", thread="th-1"), run_input("two", thread="th-2")
    await stream(dock, one)
    await stream(dock, two)
    await settled(dock)
    assert (await dock.client.post(f"/api/sessions/{one['runId']}/pin",
                                   json={"pinned": True})).status_code == 200
    kv = dock.server.hub.history.kv
    await drop_index(kv)
    listed = (await dock.client.get("/api/sessions")).json()["sessions"]
    assert [(e["prompt"], e["pinned"]) for e in listed] == [("two", False), ("one", False)]
    await dock.client.post(f"/api/sessions/{one['runId']}/pin", json={"pinned": True})
    [key] = [k async for k, v in kv.scan("dock/index/") if b'"two"' in v]
    await kv.put(key, b"{not json")
    listed = (await dock.client.get("/api/sessions")).json()
    assert [(e["prompt"], e["pinned"]) for e in listed["sessions"]] == [
        ("two", False), ("one", True)]  # rebuilt, and the readable pin kept
    assert any("index" in q["error"] for q in listed["quarantined"])


async def test_corrupt_and_future_records_are_set_aside_with_a_diagnostic(dock: Dock) -> None:
    dock.provider.queue(say("fine"))
    await stream(dock, run_input("fine", thread="th-ok"))
    await settled(dock)
    kv = dock.server.hub.history.kv
    await kv.put("dock/run/th-bad/r1/meta", b"\xff garbage")
    future = {"schemaVersion": 99, "threadId": "th-new", "runId": "r2", "startedAt": "z",
              "status": "running"}
    await kv.put("dock/run/th-new/r2/meta", msgspec.json.encode(future))
    await drop_index(kv)
    data = (await dock.client.get("/api/sessions")).json()
    assert [e["threadId"] for e in data["sessions"]] == ["th-ok"]
    errors = " ".join(q["error"] for q in data["quarantined"])
    assert "unreadable run record" in errors and "schema version 99" in errors
    assert await kv.get("dock/run/th-bad/r1/meta") is None
    note = msgspec.json.decode(await kv.get("dock/quarantine/dock/run/th-bad/r1/meta"))
    assert note["key"] == "dock/run/th-bad/r1/meta" and note["raw"]
    missing = await dock.client.get("/api/sessions/th-none")
    assert missing.status_code == 404
