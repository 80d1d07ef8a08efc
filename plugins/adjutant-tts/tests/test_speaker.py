"""The speech service in a kernel: events, modes, interrupt or queue, stop, errors,
auto-speech of answers and plan summaries (audio to files: CI has no sound card)."""

from __future__ import annotations

import json
import socket
import wave
from pathlib import Path
from typing import Any

import attrs
import pytest

import adjutant_tts
from adjutant import ModelPreset, Profile
from adjutant.testing import Harness
from adjutant_hookspecs import SpeechProgress, SpeechStarted, SpeechStopped
from adjutant_tts import speaker_for

pytestmark = pytest.mark.anyio
LONG = " ".join(f"This is sentence number {i} of a long answer." for i in range(30))
FILES = {"ADJUTANT_SPEECH_OUTPUT": "file"}


def profile(**speech: Any) -> Profile:
    base = Profile(model=ModelPreset(provider="scripted"))
    return attrs.evolve(base, plugins={"tts": speech})


def speech_events(h: Harness) -> list[Any]:
    return [e for e in h.events.events if isinstance(e, SpeechStarted | SpeechProgress |
                                                        SpeechStopped)]


async def test_saying_writes_audio_and_tells_the_bus() -> None:
    async with Harness(adjutant_tts, env=FILES) as h:
        u = await speaker_for(h.kernel).say("Hello from the speech service.")
        assert u is not None
        await u.wait()
        events = speech_events(h)
        assert u.path is not None and u.path.parent == h.kernel.home / "speech"
        with wave.open(str(u.path)) as w:
            assert w.getframerate() == 24000 and w.getnframes() / 24000 > 1.0
    assert (u.reason, u.output, u.engine) == ("finished", "file", "hibari")
    assert isinstance(events[0], SpeechStarted) and isinstance(events[-1], SpeechStopped)
    assert {e.speech_id for e in events} == {u.id}
    assert events[0].text == "Hello from the speech service."  # the transcript, for copying
    assert events[-1].reason == "finished" and events[-1].played_ms > 1000


@pytest.mark.parametrize("mode", ["off", "listen-only"])
async def test_nothing_speaks_in_off_or_listen_only(mode: str, tmp_path: Path) -> None:
    async with Harness(adjutant_tts, env=FILES, mode=mode) as h:
        speaker = speaker_for(h.kernel)
        assert await speaker.say("Should stay silent.") is None
        assert speech_events(h) == []
        u = await speaker.say("A file plays nothing.", path=tmp_path / "f.wav")
        assert u is not None and (await u.wait()).reason == "finished"
    assert (tmp_path / "f.wav").stat().st_size > 1000


async def test_switching_off_stops_what_is_being_said() -> None:
    async with Harness(adjutant_tts, env=FILES) as h:
        speaker = speaker_for(h.kernel)
        u = await speaker.say(LONG)
        assert u is not None
        await _speaking(u)
        await h.set_mode("off")
        await u.wait()
    assert u.reason == "mode"
    assert u.synthesized_ms < 30_000  # stopped long before the 30 sentences were said


async def test_a_second_answer_interrupts_by_default() -> None:
    async with Harness(adjutant_tts, env=FILES) as h:
        speaker = speaker_for(h.kernel)
        first = await speaker.say(LONG)
        second = await speaker.say("The newer answer.")
        assert first is not None and second is not None
        await first.wait()
        await second.wait()
    assert (first.reason, second.reason) == ("interrupted", "finished")


async def test_a_second_answer_queues_when_the_profile_says_so() -> None:
    async with Harness(adjutant_tts, env=FILES, profile=profile(overlap="queue")) as h:
        speaker = speaker_for(h.kernel)
        first = await speaker.say("The first answer.")
        second = await speaker.say("The second answer.")
        assert first is not None and second is not None
        await second.wait()
        stops = [e for e in speech_events(h) if isinstance(e, SpeechStopped)]
    assert (first.reason, second.reason) == ("finished", "finished")
    assert [e.speech_id for e in stops] == [first.id, second.id]


async def test_stop_mid_sentence_frees_the_engine_for_the_next_answer() -> None:
    async with Harness(adjutant_tts, env=FILES) as h:
        speaker = speaker_for(h.kernel)
        u = await speaker.say(LONG)
        assert u is not None
        await _speaking(u)
        speaker.stop()
        await u.wait()
        assert u.reason == "stopped" and not speaker.speaking
        engine = h.kernel.speech_engines["hibari"]
        assert not engine._lock.locked()
        assert u.path is not None and u.path.exists()  # what was said up to the stop is kept
        again = await speaker.say("Right away.")
        assert again is not None and (await again.wait()).reason == "finished"


async def test_a_server_that_is_down_is_reported_and_the_service_carries_on() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    from adjutant import hookimpl

    class Down(adjutant_tts.TtsWebUI):
        name = "tts-webui-down"

    class Plugin:
        @staticmethod
        @hookimpl
        def register_speech_engines(register: Any) -> None:
            register(Down(url))

    async with Harness(adjutant_tts, Plugin(), env=FILES,
                       profile=profile(engine="tts-webui-down")) as h:
        speaker = speaker_for(h.kernel)
        failed = await speaker.say("Hello?")
        assert failed is not None and (await failed.wait()).reason == "error"
        assert "not reachable" in (failed.error or "")
        stopped = [e for e in speech_events(h) if isinstance(e, SpeechStopped)][-1]
        assert stopped.reason == "error" and "not reachable" in (stopped.error or "")
        ok = await speaker.say("Still here.", engine="hibari")
        assert ok is not None and (await ok.wait()).reason == "finished"


async def _speaking(u: Any) -> None:
    import anyio

    for _ in range(2000):  # the first sentence is out within 20 s
        if u.synthesized_ms:
            return
        await anyio.sleep(0.01)
    raise AssertionError("no audio came")


def answer(text: str) -> str:
    return json.dumps({"type": "response", "text": text})


async def _quiet(speaker: Any) -> None:
    import anyio

    with anyio.fail_after(20):
        while True:
            await anyio.sleep(0.1)  # the follower picks RUN_FINISHED up
            if not speaker.speaking:
                return


async def test_auto_speech_says_short_answers_only() -> None:
    async with Harness(adjutant_tts, env=FILES, profile=profile(max_auto_chars=60),
                       script=[answer("It is sunny."), answer("x " * 100)]) as h:
        speaker = speaker_for(h.kernel)
        await h.run("weather?")
        await _quiet(speaker)
        await h.run("a long one")
        await _quiet(speaker)
        started = [e for e in speech_events(h) if isinstance(e, SpeechStarted)]
    assert [(e.text, e.source) for e in started] == [("It is sunny.", "answer")]


async def test_auto_speech_off_in_the_profile_says_nothing() -> None:
    quiet = profile(auto_speech=False)
    async with Harness(adjutant_tts, env=FILES, profile=quiet,
                       script=[answer("It is sunny.")]) as h:
        await h.run("weather?")
        await _quiet(speaker_for(h.kernel))
        assert speech_events(h) == []


async def test_a_finished_plan_is_summarised_aloud() -> None:
    from adjutant import hookimpl
    from adjutant.testing import FakeRead, ScriptedApprover

    class Tools:
        @staticmethod
        @hookimpl
        def register_tools(register: Any) -> None:
            register(FakeRead())

    plan = json.dumps({"type": "plan", "steps": [{"tool": FakeRead().declaration.name,
                                                   "args": {"path": "a.txt"}}]})
    async with Harness(adjutant_tts, Tools(), env=FILES, mode="execute-with-confirmation",
                       approver=ScriptedApprover(steps=["grant"]), script=[plan]) as h:
        (h.workspace / "a.txt").write_text("hello\n")
        run = await h.run("read a.txt")
        await _quiet(speaker_for(h.kernel))
        started = [e for e in speech_events(h) if isinstance(e, SpeechStarted)]
    assert run.status == "executed"
    name = FakeRead().declaration.name.replace(".", " ").replace("_", " ")
    assert [(e.text, e.source) for e in started] == [(f"Done: ran {name}.", "plan-summary")]


def test_spoken_text_rules() -> None:
    from adjutant_tts._auto import spoken_text

    preset = profile(max_auto_chars=20).speech
    assert spoken_text({"status": "answered", "text": "short"}, [], preset) == "short"
    assert spoken_text({"status": "answered", "text": "x" * 21}, [], preset) == ""
    assert spoken_text({"status": "proposed", "text": ""}, ["fs.read"], preset) == ""
    assert spoken_text({"status": "ignored", "text": "the operator is off"}, [], preset) == ""
    assert spoken_text({"status": "executed", "text": ""}, ["git.status", "fs.read"],
                       profile().speech) == "Done: ran git status and fs read."
    assert spoken_text({"status": "executed", "text": ""}, ["fs.read"],
                       profile(plan_summary=False).speech) == ""


async def test_the_last_answer_is_said_before_the_kernel_stops() -> None:
    """`adjutant run` stops the kernel right after its answer: the answer is still said."""
    h = Harness(adjutant_tts, env=FILES, script=[answer("Here is the answer.")])
    async with h:
        await h.run("question")
    started = [e.text for e in speech_events(h) if isinstance(e, SpeechStarted)]
    stopped = [e.reason for e in speech_events(h) if isinstance(e, SpeechStopped)]
    assert (started, stopped) == (["Here is the answer."], ["finished"])
