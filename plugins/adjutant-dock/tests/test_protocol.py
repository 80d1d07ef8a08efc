"""The dock's wire, proved with an HTTP client against the real server (uvicorn):
the canonical envelope, order, exactly one terminal, keepalive pings, replay after
Last-Event-ID, restart-required, and approvals as AG-UI interrupts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from dockkit import Dock, plan, read, resume_input, run_input, say, start_dock

pytestmark = pytest.mark.anyio

READ = ("notes.read", {"path": "a.txt"})
WRITE = ("notes.write", {"path": "b.txt", "text": "hello\n"})


async def start(dock: Dock, prompt: str = "go", **kw: Any) -> Any:
    return await dock.client.post("/api/copilot/run", json=run_input(prompt, **kw))


async def post_stream(dock: Dock, body: dict[str, Any]) -> Any:
    request = dock.client.build_request("POST", "/api/copilot/run", json=body)
    return await dock.client.send(request, stream=True)


def interrupt_of(stream: Any) -> dict[str, Any]:
    final = stream.envelopes[-1]["data"]
    assert final["type"] == "RUN_FINISHED"
    assert final["outcome"]["type"] == "interrupt"
    [interrupt] = final["outcome"]["interrupts"]
    return interrupt  # type: ignore[no-any-return]


async def test_a_read_streams_in_order_and_ends_exactly_once(dock: Dock) -> None:
    (dock.harness.workspace / "a.txt").write_text("alpha\n")
    dock.provider.queue(plan(READ))
    body = run_input("read a.txt")
    response = await post_stream(dock, body)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    stream = await read(response)
    envs = stream.envelopes
    assert [e["seq"] for e in envs] == list(range(1, len(envs) + 1))
    assert {e["runId"] for e in envs} == {body["runId"]}
    assert {e["threadId"] for e in envs} == {"t1"}
    assert {e["clientSessionId"] for e in envs} == {"tab-1"}
    assert stream.types[0] == "RUN_STARTED"
    terminals = [t for t in stream.types if t in ("RUN_FINISHED", "RUN_ERROR")]
    assert terminals == ["RUN_FINISHED"]
    assert stream.types[-1] == "RUN_FINISHED"
    assert envs[-1]["data"]["outcome"] == {"type": "success"}
    assert envs[-1]["data"]["result"]["status"] == "executed"
    names = [e["event"] for e in envs]
    assert "text_delta" in names and "tool_call_start" in names
    result = next(e["data"] for e in envs if e["event"] == "tool_call_result")
    assert result["content"] == "alpha\n"
    # the text streamed token by token is the model's reply
    text = "".join(e["data"]["delta"] for e in envs if e["event"] == "text_delta")
    assert '"notes.read"' in text
    await dock.server.hub.drained()
    assert list(dock.server.hub.segments) == [body["runId"]]  # no stray run after it


async def test_an_open_question_is_sent_again_on_reconnect(dock: Dock) -> None:
    dock.provider.queue(plan(WRITE))
    stream = await read(await post_stream(dock, run_input("write b")))
    interrupt = interrupt_of(stream)
    # reconnecting to the interrupted run replays the interrupt (the open question)
    again = await read(await dock.client.send(dock.client.build_request(
        "GET", f"/api/copilot/runs/{stream.envelopes[0]['runId']}/events",
        headers={"Last-Event-ID": str(stream.envelopes[-2]["seq"])}), stream=True))
    assert [e["seq"] for e in again.envelopes] == [stream.envelopes[-1]["seq"]]
    assert interrupt_of(again)["id"] == interrupt["id"]
    await read(await post_stream(dock, resume_input(interrupt, "deny")))


@pytest.mark.parametrize("dock", [{"ping_s": 0.1}], indirect=True)
async def test_keepalive_pings_on_a_quiet_stream(dock: Dock) -> None:
    dock.provider.queue(say("slow"))
    dock.provider.delay = 0.45
    stream = await read(await post_stream(dock, run_input("hello")))
    assert stream.pings >= 2
    assert stream.types.count("RUN_FINISHED") + stream.types.count("RUN_ERROR") == 1


async def test_a_write_waits_for_approval_and_runs_after_grant(dock: Dock) -> None:
    dock.provider.queue(plan(WRITE))
    first = await read(await post_stream(dock, run_input("write b")))
    interrupt = interrupt_of(first)
    assert interrupt["reason"] == "tool_approval"
    packet = interrupt["metadata"]["packet"]
    assert packet["tool"] == "notes.write"
    assert packet["preview"].startswith("create b.txt")
    assert not (dock.harness.workspace / "b.txt").exists()  # nothing ran yet
    assert "TOOL_CALL_START" not in first.types
    body = resume_input(interrupt, "grant")
    second = await read(await post_stream(dock, body))
    assert second.envelopes[0]["data"]["parentRunId"] == first.envelopes[0]["runId"]
    assert second.types[0] == "RUN_STARTED" and second.types[-1] == "RUN_FINISHED"
    assert second.envelopes[-1]["data"]["outcome"] == {"type": "success"}
    assert (dock.harness.workspace / "b.txt").read_text() == "hello\n"
    # the answer is in the action log before the step's intent record
    kinds = [(r["kind"], r.get("tool")) for r in await dock.copilot.log.records()]
    answered = kinds.index(("dock_answer", None))
    assert answered < kinds.index(("tool_call", "notes.write"))


async def test_deny_runs_nothing(dock: Dock) -> None:
    dock.provider.queue(plan(WRITE))
    interrupt = interrupt_of(await read(await post_stream(dock, run_input("write b"))))
    second = await read(await post_stream(dock, resume_input(interrupt, "deny")))
    assert second.envelopes[-1]["data"]["result"]["status"] == "denied"
    assert not (dock.harness.workspace / "b.txt").exists()


async def test_edited_arguments_are_previewed_again(dock: Dock) -> None:
    dock.provider.queue(plan(WRITE))
    interrupt = interrupt_of(await read(await post_stream(dock, run_input("write b"))))
    edited = await read(await post_stream(dock, resume_input(
        interrupt, "edit", args={"path": "c.txt", "text": "edited\n"})))
    again = interrupt_of(edited)  # asked again, on the new preview
    assert again["id"] != interrupt["id"]
    assert again["metadata"]["packet"]["args"] == {"path": "c.txt", "text": "edited\n"}
    assert "+edited" in again["metadata"]["packet"]["preview"]
    assert not (dock.harness.workspace / "c.txt").exists()
    # an answer to the old preview is refused, never executed
    stale = await dock.client.post("/api/copilot/run", json=resume_input(interrupt, "grant"))
    assert stale.status_code == 409
    wrong = await dock.client.post("/api/copilot/run", json=resume_input(
        again, "grant", packet=interrupt["metadata"]["packetId"]))
    assert wrong.status_code == 409
    assert "preview" in wrong.json()["error"]
    assert not (dock.harness.workspace / "c.txt").exists()
    done = await read(await post_stream(dock, resume_input(again, "grant")))
    assert done.envelopes[-1]["data"]["result"]["status"] == "executed"
    assert (dock.harness.workspace / "c.txt").read_text() == "edited\n"
    assert not (dock.harness.workspace / "b.txt").exists()


async def test_replay_after_last_event_id_has_no_loss_and_no_duplicates(dock: Dock) -> None:
    dock.provider.queue(say("one two three four five six seven eight nine ten"))
    dock.provider.delay = 0.02
    body = run_input("count")
    cut = await read(await post_stream(dock, body), stop_after=4)  # the tab drops
    last = cut.frames[-1]["id"]
    resumed = await read(await dock.client.send(dock.client.build_request(
        "GET", f"/api/copilot/runs/{body['runId']}/events",
        headers={"Last-Event-ID": last}), stream=True))
    seqs = [e["seq"] for e in cut.envelopes + resumed.envelopes]
    assert seqs == list(range(1, len(seqs) + 1))
    assert resumed.types[-1] == "RUN_FINISHED"
    assert resumed.envelopes[-1]["data"]["result"]["status"] == "answered"
    full = await read(await dock.client.send(dock.client.build_request(
        "GET", f"/api/copilot/runs/{body['runId']}/events?after=0"), stream=True))
    assert full.envelopes == cut.envelopes + resumed.envelopes


@pytest.mark.parametrize("dock", [{"window": 5}], indirect=True)
async def test_restart_required_when_the_replay_window_is_gone(dock: Dock) -> None:
    dock.provider.queue(say("one two three four five six seven eight nine ten"))
    body = run_input("count")
    whole = await read(await post_stream(dock, body))
    assert whole.types[-1] == "RUN_FINISHED"
    late = await read(await dock.client.send(dock.client.build_request(
        "GET", f"/api/copilot/runs/{body['runId']}/events",
        headers={"Last-Event-ID": "1"}), stream=True))
    [env] = late.envelopes
    assert env["event"] == "restart_required"
    assert env["data"]["name"] == "adjutant.dock.restart_required"
    assert env["data"]["value"]["snapshot"]["mode"] == "execute-with-confirmation"
    unknown = await read(await dock.client.send(dock.client.build_request(
        "GET", "/api/copilot/runs/nope/events"), stream=True))
    assert [e["event"] for e in unknown.envelopes] == ["restart_required"]


async def test_runs_on_one_thread_are_fifo_and_each_tab_gets_only_its_own(dock: Dock) -> None:
    dock.provider.queue(say("first reply words"), say("second reply words"))
    dock.provider.delay = 0.05
    a, b = run_input("one", session="tab-a"), run_input("two", session="tab-b")
    first = await post_stream(dock, a)
    second = await post_stream(dock, b)
    got_b = await read(second)
    got_a = await read(first)
    assert {e["clientSessionId"] for e in got_a.envelopes} == {"tab-a"}
    assert {e["clientSessionId"] for e in got_b.envelopes} == {"tab-b"}
    queued = [e["data"] for e in got_b.envelopes if e["data"].get("name") ==
              "adjutant.dock.queued"]
    assert queued and queued[0]["value"]["position"] == 1
    text_a = "".join(e["data"]["delta"] for e in got_a.envelopes if e["event"] == "text_delta")
    text_b = "".join(e["data"]["delta"] for e in got_b.envelopes if e["event"] == "text_delta")
    assert "first reply words" in text_a and "second reply words" in text_b
    assert got_a.envelopes[-1]["timestamp"] <= got_b.envelopes[2]["timestamp"]


async def test_stop_cancels_a_running_run_with_one_terminal(dock: Dock) -> None:
    dock.provider.queue(say(" ".join(["word"] * 200)))
    dock.provider.delay = 0.02
    body = run_input("long")
    response = await post_stream(dock, body)
    head = await read(response, stop_after=6)
    assert (await dock.client.post(f"/api/copilot/runs/{body['runId']}/stop")).status_code == 200
    rest = await read(await dock.client.send(dock.client.build_request(
        "GET", f"/api/copilot/runs/{body['runId']}/events",
        headers={"Last-Event-ID": head.frames[-1]["id"]}), stream=True))
    types = head.types + rest.types
    assert types[-1] == "RUN_ERROR"
    assert types.count("RUN_ERROR") + types.count("RUN_FINISHED") == 1
    assert rest.envelopes[-1]["data"]["code"] == "cancelled"


@pytest.mark.parametrize("dock", [{"grace_s": 0.2}], indirect=True)
async def test_a_run_nobody_listens_to_is_cancelled_after_the_grace_period(dock: Dock) -> None:
    dock.provider.queue(say(" ".join(["word"] * 400)))
    dock.provider.delay = 0.02
    body = run_input("long")
    response = await post_stream(dock, body)
    await read(response, stop_after=3)
    await response.aclose()
    import anyio

    with anyio.fail_after(5):
        await dock.server.hub.drained()
    segment = dock.server.hub.segments[body["runId"]]
    assert segment.events[-1]["data"]["type"] == "RUN_ERROR"


async def test_bad_requests_get_clear_errors(dock: Dock) -> None:
    bad = await dock.client.post("/api/copilot/run", json={"threadId": "t"})
    assert bad.status_code == 400 and "runId" in bad.json()["error"]
    empty = await dock.client.post("/api/copilot/run", json=run_input(" "))
    assert empty.status_code == 400
    dock.provider.queue(say("hi"))
    body = run_input("hi")
    await read(await post_stream(dock, body))
    again = await dock.client.post("/api/copilot/run", json=body)
    assert again.status_code == 409  # a runId is used once
    stray = await dock.client.post("/api/copilot/run", json=resume_input(
        {"id": "x", "metadata": {"packetId": "y"}}, "grant"))
    assert stray.status_code == 409


async def test_mode_is_set_through_the_user_channel_and_read_back(dock: Dock) -> None:
    answer = await dock.client.post("/api/mode", json={"mode": "propose"})
    assert answer.status_code == 200 and answer.json()["mode"] == "propose-only"
    assert (await dock.client.get("/api/state")).json()["mode"] == "propose-only"
    bad = await dock.client.post("/api/mode", json={"mode": "turbo"})
    assert bad.status_code == 400 and "unknown mode" in bad.json()["error"]
    assert "confirm (execute-with-confirmation)" in bad.json()["error"]  # the names to use
    long = await dock.client.post("/api/mode", json={"mode": "execute-auto"})
    assert long.json()["mode"] == "execute-auto"
    labels = long.json()["modeLabels"]  # one vocabulary: the short name and its meaning
    assert labels["execute-with-confirmation"] == {
        "short": "confirm", "meaning": "reads run; every change waits for your yes"}
    assert [v["short"] for v in labels.values()] == [
        "off", "listen", "propose", "confirm", "auto"]


async def test_a_logged_step_is_dry_run_or_replayed_through_the_pipeline(dock: Dock) -> None:
    dock.provider.queue(plan(WRITE))
    first = await read(await post_stream(dock, run_input("write b")))
    await read(await post_stream(dock, resume_input(interrupt_of(first), "grant")))
    target = dock.harness.workspace / "b.txt"
    target.unlink()
    op_run = next(r["run_id"] for r in await dock.copilot.log.records()
                  if r["kind"] == "tool_call")
    dry = await read(await post_stream(dock, run_input(
        "", forwardedProps={"clientSessionId": "tab-1",
                            "replay": {"runId": op_run, "step": 0, "dryRun": True}})))
    result = dry.envelopes[-1]["data"]["result"]
    assert result["status"] == "proposed" and "create b.txt" in result["text"]
    assert not target.exists()
    again = await read(await post_stream(dock, run_input(
        "", forwardedProps={"clientSessionId": "tab-1",
                            "replay": {"runId": op_run, "step": 0, "dryRun": False}})))
    asked = interrupt_of(again)  # a replayed write asks again, like any write
    await read(await post_stream(dock, resume_input(asked, "deny")))
    assert not target.exists()
    bad = await dock.client.post("/api/copilot/run", json=run_input(
        "", forwardedProps={"replay": {"runId": op_run, "step": "0"}}))
    assert bad.status_code == 400
    missing = await read(await post_stream(dock, run_input(
        "", forwardedProps={"replay": {"runId": "nope", "step": 3, "dryRun": True}})))
    assert missing.envelopes[-1]["data"]["type"] == "RUN_ERROR"
    assert "no step 3" in missing.envelopes[-1]["data"]["message"]


async def test_a_bug_bundle_is_written_and_downloadable(dock: Dock) -> None:
    dock.provider.queue(say("hi"))
    await read(await post_stream(dock, run_input("hi")))
    made = await dock.client.post("/api/bundle", json={})
    assert made.status_code == 200
    download = await dock.client.get(made.json()["download"])
    assert download.status_code == 200 and download.content[:2] == b"\x1f\x8b"
    assert (await dock.client.get("/api/bundles/..%2Fdock%2Ftoken")).status_code == 404


async def test_a_plan_with_a_write_asks_for_the_plan_then_the_step(dock: Dock) -> None:
    (dock.harness.workspace / "a.txt").write_text("alpha\n")
    dock.provider.queue(plan(READ, WRITE))
    first = await read(await post_stream(dock, run_input("read then write")))
    asked = interrupt_of(first)
    assert asked["reason"] == "plan_approval"
    assert [s["tool"] for s in asked["metadata"]["steps"]] == ["notes.read", "notes.write"]
    wrong = await dock.client.post("/api/copilot/run", json=resume_input(asked, "grant"))
    assert wrong.status_code == 400  # a plan is answered execute, step or deny
    second = await read(await post_stream(dock, resume_input(asked, "step")))
    step = interrupt_of(second)  # step by step: the read ran, the write asks
    assert step["reason"] == "tool_approval"
    assert step["metadata"]["packet"]["tool"] == "notes.write"
    assert any(e["event"] == "tool_call_result" and e["data"]["content"] == "alpha\n"
               for e in second.envelopes)
    third = await read(await post_stream(dock, resume_input(step, "grant")))
    assert third.envelopes[-1]["data"]["result"]["status"] == "executed"
    assert (dock.harness.workspace / "b.txt").read_text() == "hello\n"


async def test_settings_list_profiles_with_the_loaders_errors(dock: Dock) -> None:
    folder = dock.harness.kernel.home / "profiles"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "broken.json").write_text('{"name": "broken", "token_budget": "lots"}')
    (folder / "fast.json").write_text('{"name": "fast", "model": {"provider": "scripted", '
                                      '"temperature": 0.0}}')
    data = (await dock.client.get("/api/settings")).json()
    listed = {p["name"]: p for p in data["profiles"]}
    assert listed["fast"]["ok"] is True
    assert listed["broken"]["ok"] is False
    assert any("$.token_budget" in p for p in listed["broken"]["problems"])
    refused = await dock.client.post("/api/preset", json={"name": "broken"})
    assert refused.status_code == 422
    used = await dock.client.post("/api/preset", json={"name": "fast"})
    assert used.status_code == 200 and used.json()["preset"] == "fast"
    checked = await dock.client.post("/api/settings/check", json={"verbosity": "loud"})
    # the check itself worked (200, no console error in the page): its answer is "no"
    assert checked.status_code == 200 and checked.json()["ok"] is False
    assert "$.verbosity" in checked.json()["problems"][0]
    bad = await dock.client.post("/api/settings/check", content=b'{\n  "model": [1,,2]\n}')
    assert bad.json()["problems"] == [
        "not JSON: JSON is malformed: invalid character at line 2, column 15"]


async def test_a_pump_that_falls_behind_the_bus_says_so_in_the_run(dock: Dock) -> None:
    """The dock reads the bus through a bounded view: if it ever falls behind, the
    run gets the bus's gap marker (a CUSTOM adjutant.bus.gap), never a silent hole."""
    from adjutant_hookspecs import BusGap, Envelope

    hub = dock.server.hub
    dock.provider.queue(say(" ".join(["word"] * 50)))
    dock.provider.delay = 0.02
    response = await post_stream(dock, run_input("long"))
    head = await read(response, stop_after=6)
    assert hub.active is not None and hub.active.op_run is not None
    # what the bus hands a subscriber that fell behind (never published itself)
    hub._dispatch(Envelope(seq=0, run_seq=0, run_id=None, thread_id=None,
                           timestamp=0, event=BusGap(first_missed=1, last_missed=2)))
    rest = await read(await dock.client.send(dock.client.build_request(
        "GET", f"/api/copilot/runs/{head.envelopes[0]['runId']}/events",
        headers={"Last-Event-ID": head.frames[-1]["id"]}), stream=True))
    gaps = [e["data"] for e in rest.envelopes if e["data"].get("name") == "adjutant.bus.gap"]
    assert len(gaps) == 1  # once, in order, and the run still ends
    assert rest.types[-1] == "RUN_FINISHED"


async def test_grants_carry_their_expiry_and_can_be_revoked(dock: Dock) -> None:
    await dock.copilot.grant("write", seconds=600, channel="user")
    state = (await dock.client.get("/api/state")).json()
    assert state["grants"] == ["write"]
    left = state["grantsExpire"]["write"] - state["serverNow"]
    assert 0 < left <= 600_000, left
    missing = await dock.client.post("/api/grants/revoke", json={"grant": "cage:/tmp"})
    assert missing.status_code == 404 and "no live grant" in missing.json()["error"]
    assert (await dock.client.post("/api/grants/revoke", json={})).status_code == 400
    revoked = await dock.client.post("/api/grants/revoke", json={"grant": "write"})
    assert revoked.status_code == 200, revoked.text
    assert revoked.json()["grants"] == [] and revoked.json()["grantsExpire"] == {}
    assert dock.copilot.grants == []
    records = (await dock.client.get("/api/log?kind=revoke")).json()["records"]
    assert [r["grant"] for r in records] == ["write"]


async def test_the_mcp_servers_are_listed_with_their_state(tmp_path: Path) -> None:
    import json
    import sys

    mcp = pytest.importorskip("adjutant_mcp", reason="MCP servers are adjutant-mcp's")
    async with start_dock() as plain:  # without the plugin: what to install
        got = (await plain.client.get("/api/mcp")).json()
        assert got["available"] is False and "pip install adjutant-mcp" in got["missing"]
    home = tmp_path / "home"
    home.mkdir()
    (home / "mcp.json").write_text(json.dumps({"mcpServers": {
        "time": {"command": sys.executable, "args": ["-m", "mcp_server_time",
                                                     "--local-timezone", "UTC"]},
        "broken": {"command": str(tmp_path / "no-such-server")}}}))
    async with start_dock(plugins=(mcp.McpPlugin,), home=home) as dock:
        got = (await dock.client.get("/api/mcp")).json()
    assert got["available"] is True, got
    servers = {s["name"]: s for s in got["servers"]}
    assert set(servers) == {"time", "broken"}
    assert servers["time"]["tools"] >= 1 and servers["time"]["transport"] == "stdio"
    assert servers["time"]["state"] != "error", servers["time"]
    assert servers["broken"]["state"] == "error" and servers["broken"]["tools"] == 0
    assert servers["broken"]["note"], servers["broken"]
    assert servers["time"]["source"].endswith("mcp.json")


async def test_every_bad_query_parameter_gets_400_with_the_reason(dock: Dock) -> None:
    """``GET /api/log?limit=abc`` answered 500; each bad parameter says what it wants."""
    for query, says in (("limit=abc", "limit must be a whole number"),
                        ("limit=0", "limit must be"), ("limit=-5", "limit must be"),
                        ("limit=99999999", "limit must be"),
                        ("run_id=../x", "run_id must be"), ("kind=%3Cb%3E", "kind must"),
                        ("colour=red", "unknown parameter")):
        answer = await dock.client.get(f"/api/log?{query}")
        assert answer.status_code == 400, (query, answer.text)
        assert says in answer.json()["error"], (query, answer.json())
    answer = await dock.client.get("/api/copilot/runs/x/events?after=abc")
    assert answer.status_code == 400 and "seq number" in answer.json()["error"]
    good = await dock.client.get("/api/log?limit=3&kind=decision,result")
    assert good.status_code == 200 and len(good.json()["records"]) <= 3


async def test_a_named_pipe_in_a_plan_stalls_no_request(dock: Dock) -> None:
    """A planned write to a FIFO hung every dock request (``/api/state``, the log,
    Stop) until something opened the pipe: the write-gate opened it, blocking the event
    loop, to build its packet. The packet describes it now, and the dock answers."""
    import json
    import os
    import threading

    import anyio

    pipe = dock.harness.workspace / "pipe"
    os.mkfifo(pipe)
    rescued, done = threading.Event(), threading.Event()

    def rescue() -> None:  # a blocked reader blocks the event loop: only a writer frees it
        while not done.wait(2 if rescued.is_set() else 20):
            try:
                os.close(os.open(pipe, os.O_WRONLY | os.O_NONBLOCK))  # if a reader waits
                rescued.set()
            except OSError:
                pass

    timer = threading.Thread(target=rescue, daemon=True)
    timer.start()
    try:
        dock.provider.queue(plan(("notes.write", {"path": "pipe", "text": "x\n"})))
        with anyio.fail_after(30):
            request = dock.client.build_request("POST", "/api/copilot/run",
                                                json=run_input("write x to pipe"))
            stream = await read(await dock.client.send(request, stream=True))
            state = await dock.client.get("/api/state")
            log = await dock.client.get("/api/log?limit=5")
    finally:
        done.set()
    assert not rescued.is_set(), "the dock waited on the FIFO until a writer opened it"
    assert state.status_code == 200 and log.status_code == 200
    shown = json.dumps(stream.envelopes)
    assert "named pipe (FIFO)" in shown, shown[-2000:]


async def test_without_the_copilot_agent_plugin_the_panel_names_it(dock: Dock) -> None:
    for method, url in (("GET", "/api/copilot-agent/state"),
                        ("POST", "/api/copilot-agent/dismiss"),
                        ("POST", "/api/copilot-agent/act")):
        answer = await dock.client.request(method, url, json={"session": "x", "index": 0})
        assert answer.status_code == 503, url
        assert "pip install adjutant-copilot-agent" in answer.json()["error"]
