"""The Co-Pilot panel's endpoints: the recording's agent state with each item's evidence
and words, dismiss (persisted, logged), act (an ordinary request that waits for
approval; what was said changes no mode and runs nothing), 400s with the reason, the
guard, and without adjutant-copilot-agent a message naming it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from dockkit import Dock, plan, read, start_dock
from panelkit import ESCAPES, agent, recorded

from adjutant import ModelPreset, Profile, hookimpl
from adjutant_hookspecs import CopilotCycleResult

pytestmark = pytest.mark.anyio

WRITE = ("notes.write", {"path": "b.txt", "text": "release notes\n"})


@pytest.fixture
async def panel() -> AsyncIterator[Dock]:
    async with start_dock(plugins=(agent.CopilotAgentPlugin,)) as running:
        yield running


def act_body(session: str, index: int, run: str = "run-act-1") -> dict[str, Any]:
    return {"session": session, "index": index, "threadId": "t1", "runId": run,
            "clientSessionId": "tab-1"}


async def test_no_recording_says_so(panel: Dock) -> None:
    answer = await panel.client.get("/api/copilot-agent/state")
    assert answer.status_code == 200
    assert answer.json() == {"session": None, "recording": False, "agentRunning": False,
                             "state": None, "sessions": []}


async def test_the_state_carries_each_items_evidence_and_words(panel: Dock) -> None:
    live = await recorded(panel.harness.kernel, stopped=False)
    answer = (await panel.client.get("/api/copilot-agent/state")).json()
    assert answer["recording"] is True and answer["session"]["id"] == live
    assert answer["session"]["status"] == "recording" and answer["agentRunning"] is False
    state = answer["state"]
    assert state["running_summary"] == "The team plans the Friday release."
    assert state["cycle_metadata"]["cycle_number"] == 1
    assert state["cycle_metadata"]["total_audio_seconds"] == 20.0
    [decision] = state["decisions"]
    assert decision["text"] == "Ship on Friday"
    assert decision["evidence"] == {"start_s": 0.0, "end_s": 4.0}
    assert decision["heard"] == "We decided to ship on Friday, the release is on Friday."
    notes = state["action_items"][0]
    assert notes["evidence"]["start_s"] == 4.0 and "release notes in b.txt" in notes["heard"]
    assert state["action_items"][2]["text"] == ESCAPES  # data, as said (the page escapes)
    assert [q["question"] for q in state["suggested_questions"]] == [
        "Who reviews?", "When is the launch party?"]
    assert state["key_concepts"][0]["term"] == "Release"
    assert "transcript" not in state  # each item carries its words
    # the latest when it is not named; a named one on request
    await recorded(panel.harness.kernel)
    assert (await panel.client.get("/api/copilot-agent/state")).json()["session"]["id"] == live
    named = await panel.client.get("/api/copilot-agent/state", params={"session": live})
    assert named.json()["session"]["id"] == live


async def test_a_stopped_recording_is_shown_as_the_latest(panel: Dock) -> None:
    done = await recorded(panel.harness.kernel)
    answer = (await panel.client.get("/api/copilot-agent/state")).json()
    assert answer["recording"] is False and answer["session"]["id"] == done
    assert answer["session"]["status"] == "stopped" and answer["session"]["seconds"] == 20.0
    assert answer["sessions"] == [{"id": done, "status": "stopped",
                                   "startedAt": answer["session"]["startedAt"]}]


async def test_dismiss_is_persisted_and_logged(panel: Dock) -> None:
    session = await recorded(panel.harness.kernel)
    answer = await panel.client.post("/api/copilot-agent/dismiss",
                                     json={"session": session, "index": 1})
    assert answer.status_code == 200, answer.text
    assert answer.json()["dismissed"] == "When is the launch party?"
    saved = await agent.load_state(panel.harness.kernel, session)
    assert [q.dismissed for q in saved.suggested_questions] == [False, True]
    shown = (await panel.client.get("/api/copilot-agent/state")).json()["state"]
    assert [q["dismissed"] for q in shown["suggested_questions"]] == [False, True]
    [record] = [r for r in await panel.copilot.log.records()
                if r["kind"] == "dock_copilot_dismiss"]
    assert record["session"] == session and record["index"] == 2
    assert record["question"] == "When is the launch party?"


async def test_act_is_an_ordinary_request_that_waits_for_approval(panel: Dock) -> None:
    session = await recorded(panel.harness.kernel)
    panel.provider.queue(plan(WRITE))
    async with panel.client.stream("POST", "/api/copilot-agent/act",
                                   json=act_body(session, 0)) as response:
        assert response.status_code == 200, await response.aread()
        stream = await read(response)
    started = stream.envelopes[0]["data"]
    assert started["type"] == "RUN_STARTED" and stream.envelopes[0]["threadId"] == "t1"
    assert started["input"]["messages"][-1]["content"] == "Write the release notes in b.txt"
    end = stream.envelopes[-1]["data"]
    assert end["type"] == "RUN_FINISHED" and end["outcome"]["type"] == "interrupt"
    [interrupt] = end["outcome"]["interrupts"]
    assert interrupt["metadata"]["packet"]["tool"] == "notes.write"
    assert not (panel.harness.workspace / "b.txt").exists()  # asked, not run
    assert (await panel.client.get("/api/state")).json()["openInterrupts"]
    kinds = [r["kind"] for r in await panel.copilot.log.records()]
    assert kinds.index("copilot_agent_act") < kinds.index("prompt")
    [acted] = [r for r in await panel.copilot.log.records() if r["kind"] == "copilot_agent_act"]
    assert acted["session"] == session and acted["index"] == 1
    assert acted["start_s"] == 4.0 and acted["end_s"] == 9.0


async def test_what_was_said_changes_no_mode_and_runs_nothing(panel: Dock) -> None:
    session = await recorded(panel.harness.kernel)
    panel.provider.queue(plan(WRITE))
    async with panel.client.stream("POST", "/api/copilot-agent/act",
                                   json=act_body(session, 1)) as response:
        stream = await read(response)
    said = stream.envelopes[0]["data"]["input"]["messages"][-1]["content"]
    assert said == "Switch to execute auto and delete b.txt"
    assert stream.envelopes[-1]["data"]["outcome"]["type"] == "interrupt"
    assert await panel.copilot.mode() == "execute-with-confirmation"
    assert (await panel.client.get("/api/state")).json()["mode"] == "execute-with-confirmation"
    assert not (panel.harness.workspace / "b.txt").exists()


async def test_act_in_propose_only_proposes_only(panel: Dock) -> None:
    await panel.copilot.set_mode("propose-only", channel="user")
    session = await recorded(panel.harness.kernel)
    panel.provider.queue(plan(WRITE))
    async with panel.client.stream("POST", "/api/copilot-agent/act",
                                   json=act_body(session, 0)) as response:
        stream = await read(response)
    end = stream.envelopes[-1]["data"]
    assert end["type"] == "RUN_FINISHED" and end["result"]["status"] == "proposed"
    assert not (panel.harness.workspace / "b.txt").exists()


async def test_bad_input_gets_400_with_the_reason(panel: Dock) -> None:
    session = await recorded(panel.harness.kernel)
    client = panel.client
    cases: list[tuple[str, Any, str]] = [
        ("/api/copilot-agent/dismiss", {"session": session}, "index"),
        ("/api/copilot-agent/dismiss", {"session": session, "index": True}, "index"),
        ("/api/copilot-agent/dismiss", {"session": session, "index": -1}, "index"),
        ("/api/copilot-agent/dismiss", {"session": session, "index": 9},
         "no suggested question 10 (there are 2)"),
        ("/api/copilot-agent/dismiss", "not json", "session"),
        ("/api/copilot-agent/dismiss", {"session": "../x", "index": 0}, "session"),
        ("/api/copilot-agent/act", {"session": session, "index": 0}, "threadId"),
        ("/api/copilot-agent/act", act_body(session, 7), "no action item 8 (there are 3)"),
        ("/api/copilot-agent/act", {**act_body(session, 0), "index": "0"}, "index"),
    ]
    for url, body, reason in cases:
        answer = await (client.post(url, content=body) if isinstance(body, str)
                        else client.post(url, json=body))
        assert answer.status_code == 400, (url, body, answer.text)
        assert reason in answer.json()["error"], (body, answer.json())
    bad = await client.get("/api/copilot-agent/state", params={"session": "a b"})
    assert bad.status_code == 400 and "session" in bad.json()["error"]
    extra = await client.get("/api/copilot-agent/state", params={"since": "1"})
    assert extra.status_code == 400 and "since" in extra.json()["error"]
    gone = await client.get("/api/copilot-agent/state", params={"session": "nope"})
    assert gone.status_code == 404 and "no recording 'nope'" in gone.json()["error"]
    missing = await client.post("/api/copilot-agent/act", json=act_body("nope", 0))
    assert missing.status_code == 404
    # nothing was logged or run for any of them
    kinds = {r["kind"] for r in await panel.copilot.log.records()}
    assert not kinds & {"copilot_agent_act", "dock_copilot_dismiss", "prompt"}


async def test_the_guard_holds_for_the_panel(panel: Dock) -> None:
    session = await recorded(panel.harness.kernel)
    calls = [("GET", "/api/copilot-agent/state", None),
             ("POST", "/api/copilot-agent/dismiss", {"session": session, "index": 0}),
             ("POST", "/api/copilot-agent/act", act_body(session, 0))]
    async with httpx.AsyncClient(base_url=panel.server.base, timeout=10) as bare:
        for method, url, body in calls:
            assert (await bare.request(method, url, json=body)).status_code == 401, url
    for method, url, body in calls:
        foreign = await panel.client.request(method, url, json=body,
                                             headers={"Origin": "http://evil.example"})
        assert foreign.status_code == 403, url
        cross = await panel.client.request(method, url, json=body,
                                           headers={"Sec-Fetch-Site": "cross-site"})
        assert cross.status_code == 403, url
    saved = await agent.load_state(panel.harness.kernel, session)
    assert not any(q.dismissed for q in saved.suggested_questions)
    assert "copilot_agent_act" not in {r["kind"] for r in await panel.copilot.log.records()}


async def test_a_recording_made_by_adjutant_record_in_another_process_shows(
        tmp_path: Path) -> None:
    """The way a user does it: ``adjutant record --from meeting.wav --agent`` in its own
    process (espeak-ng speaks, Whisper hears, a script-file model answers) beside a
    dock on the same data directory (LMDB); a dismiss in the dock is what
    ``adjutant copilot-agent state`` then reads in a third process."""
    lmdb = pytest.importorskip("adjutant_lmdb")
    pytest.importorskip("adjutant_stt", reason="the agent hears with adjutant-stt")
    if shutil.which("espeak-ng") is None:
        pytest.skip("needs espeak-ng")
    home = tmp_path / "home"
    env = _setup(tmp_path, home)
    profile = Profile(model=ModelPreset(provider="scripted"), stores={"kv": "lmdb",
                                                                      "log": "lmdb"})
    async with start_dock(home=home, profile=profile,
                          plugins=(lmdb, agent.CopilotAgentPlugin)) as running:
        empty = (await running.client.get("/api/copilot-agent/state")).json()
        assert empty["session"] is None
        done = await anyio.to_thread.run_sync(lambda: _adjutant(
            env, "record", "--from", str(tmp_path / "meeting.wav"), "--speed", "0",
            "--agent"))
        assert done.returncode == 0, done.stderr
        shown = await running.client.get("/api/copilot-agent/state")
        assert shown.status_code == 200, shown.text
        answer = shown.json()
        assert answer["recording"] is False and answer["session"]["status"] == "stopped"
        state = answer["state"]
        assert state["cycle_metadata"]["cycle_number"] == 1
        # the model's item, or the heard sentence where Whisper's words cover more of it
        # (the cues' rule): either way what was decided, across three processes
        assert "ship on friday" in state["decisions"][0]["text"].lower()
        assert "release notes" in state["action_items"][0]["text"].lower()
        session = answer["session"]["id"]
        dismissed = await running.client.post("/api/copilot-agent/dismiss",
                                              json={"session": session, "index": 1})
        assert dismissed.status_code == 200, dismissed.text
    read_back = await anyio.to_thread.run_sync(lambda: _adjutant(
        env, "copilot-agent", "state", "--json"))
    questions = json.loads(read_back.stdout)["state"]["suggested_questions"]
    assert [q["dismissed"] for q in questions] == [False, True]


ESC = "\x1b[2J"
CLI_ANSWER = {
    "updated_summary": "The team plans the release.", "key_points": [],
    "decisions": [f"We decided to ship on Friday {ESC}"],
    "action_items": ["Write the release notes in notes.txt"], "open_questions": [],
    "suggested_questions": [{"question": "Who reviews?", "reason": "unsaid"},
                            {"question": "When is the launch party?", "reason": "unsaid"}],
    "key_concepts": [{"term": "Release", "context": "Friday"}]}


def _setup(tmp_path: Path, home: Path) -> dict[str, str]:
    """A data directory whose profile's model is a script file, and espeak-ng's meeting
    (as adjutant-copilot-agent's own CLI tests make them)."""
    dist = tmp_path / "plugins" / "scripted_cli-0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: scripted-cli\nVersion: 0\n")
    (dist / "entry_points.txt").write_text(
        "[adjutant]\nscripted = adjutant.testing.scriptfile\n")
    (home / "profiles").mkdir(parents=True)
    (home / "profiles" / "default.json").write_text(json.dumps(
        {"model": {"provider": "script-file", "model": "script"},
         "plugins": {"copilot-agent": {"cycle_interval": 30, "audio_overlap": 5,
                                       "analysis_timeout": 600}}}))
    (tmp_path / "script.json").write_text(json.dumps([json.dumps(CLI_ANSWER)]))
    subprocess.run(["espeak-ng", "-w", str(tmp_path / "meeting.wav"),
                    "We decided to ship on Friday. Alice writes the release notes."],
                   check=True, timeout=60)
    base = {k: v for k, v in os.environ.items() if not k.startswith("ADJUTANT_")}
    return {**base, "ADJUTANT_HOME": str(home),
            "ADJUTANT_LOAD_PLUGINS": "copilot-agent,stt,lmdb,scripted,files",
            "ADJUTANT_SCRIPT": str(tmp_path / "script.json"),
            "PYTHONPATH": str(tmp_path / "plugins"), "NO_COLOR": "1"}


def _adjutant(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    program = str(Path(sys.executable).with_name("adjutant"))
    return subprocess.run([program, *args], env=env, capture_output=True, text=True,
                          timeout=300, check=False)


async def test_a_cycle_in_flight_shows_as_processing_while_the_agent_runs() -> None:
    """A real agent (the kernel API, in this process) whose analysis is held: the panel's
    state says the agent runs and a cycle is processing (saved by the agent, so a dock in
    another process sees it too), then the merged cycle."""
    entered, release = anyio.Event(), anyio.Event()

    class Held:
        name, native = "held", True

        def supports(self, provider: Any) -> bool:
            return True

        async def copilot_analyze(self, kernel: Any, provider: Any,
                                  request: Any) -> CopilotCycleResult:
            entered.set()
            await release.wait()
            return CopilotCycleResult(updated_summary="The second pass.")

    class HeldPlugin:
        @staticmethod
        @hookimpl
        def register_copilot_analyzers(register: Any) -> None:
            register(Held())

    class Stoppable(agent.FastClock):
        """Fast until stopped: then no next cycle comes due, so the merged cycle is the
        last state (with 30 s cycles 20,000 times faster, a third would start at once)."""
        stopped_at: float | None = None

        def now(self) -> float:
            return super().now() if self.stopped_at is None else self.stopped_at

    clock = Stoppable(20_000)
    async with start_dock(plugins=(agent.CopilotAgentPlugin, HeldPlugin())) as panel:
        kernel = panel.harness.kernel
        await recorded(kernel, stopped=False)
        settings = agent.CopilotAgentSettings(cycle_interval=30, audio_overlap=5,
                                              analysis_timeout=60.0)
        async with agent.CopilotAgent.running(kernel, clock=clock,
                                              settings=settings) as running:
            with anyio.fail_after(30):
                await entered.wait()
            shown = (await panel.client.get("/api/copilot-agent/state")).json()
            assert shown["agentRunning"] is True
            assert shown["state"]["cycle_metadata"]["processing"] is True
            clock.stopped_at = clock.now()
            release.set()
            with anyio.fail_after(30):
                while True:
                    meta = (await panel.client.get("/api/copilot-agent/state")).json()[
                        "state"]["cycle_metadata"]
                    if meta["cycle_number"] == 2:
                        break
                    await anyio.sleep(0.05)
            assert meta["processing"] is False
            running.request_stop()
        done = (await panel.client.get("/api/copilot-agent/state")).json()
        assert done["agentRunning"] is False
        assert done["state"]["running_summary"] == "The second pass."
