"""Voice on the wire: the push-to-talk upload (``POST /api/voice/hear``), the speech
controls and the ambient stream of speech and listening events.

The refusals run with the dock alone; hearing needs adjutant-stt (the real Whisper)
and speaking adjutant-tts (a real voice): those tests are skipped where the plugin is
not installed (``tox -e dock``) and run with everything installed (``./dev test``)."""

from __future__ import annotations

import io
import re
import wave
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from dockkit import Dock, read, start_dock
from voicekit import espeak

pytestmark = pytest.mark.anyio


def wav(seconds: float, rate: int = 16_000) -> bytes:
    out = io.BytesIO()
    with wave.open(out, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(bytes(int(seconds * rate) * 2))
    return out.getvalue()


def letters(text: str) -> str:
    return re.sub(r"[^a-z]", "", text.lower())


async def hear(dock: Dock, body: bytes, **headers: str) -> httpx.Response:
    return await dock.client.post("/api/voice/hear", content=body, headers={
        "Content-Type": "audio/wav", **headers}, timeout=120)


@pytest.fixture
async def stt_dock() -> AsyncIterator[Dock]:
    stt = pytest.importorskip("adjutant_stt", reason="hearing needs adjutant-stt")
    async with start_dock(plugins=(stt.SttPlugin,)) as running:
        yield running


async def test_without_the_voice_plugins_the_page_is_told_and_the_calls_refused(
        dock: Dock) -> None:
    voice = (await dock.client.get("/api/state")).json()["voice"]
    assert voice["hear"] is False and "pip install adjutant-stt" in voice["hearMissing"]
    assert voice["speak"] is False and voice["editFirst"] is False
    refused = await hear(dock, wav(1.0))
    assert refused.status_code == 503 and "pip install adjutant-stt" in refused.json()["error"]
    for action in ("pause", "resume", "stop"):
        answer = await dock.client.post(f"/api/speech/{action}")
        assert answer.status_code == 503, action
        assert "pip install adjutant-tts" in answer.json()["error"]


async def test_the_profiles_edit_first_reaches_the_page() -> None:
    from adjutant import ModelPreset, Profile

    stt = pytest.importorskip("adjutant_stt", reason="hearing needs adjutant-stt")
    profile = Profile(model=ModelPreset(provider="scripted"),
                      plugins={"stt": {"edit_first": True}})
    async with start_dock(plugins=(stt.SttPlugin,), profile=profile) as dock:
        assert (await dock.client.get("/api/state")).json()["voice"]["editFirst"] is True


async def test_the_voice_endpoints_need_the_token_and_the_docks_origin(dock: Dock) -> None:
    base = dock.server.base
    async with httpx.AsyncClient(base_url=base, timeout=10) as stranger:
        assert (await stranger.post("/api/voice/hear", content=wav(1.0))).status_code == 401
        assert (await stranger.post("/api/speech/stop")).status_code == 401
        assert (await stranger.get("/api/voice/events")).status_code == 401
    foreign = {"Origin": "http://evil.example"}
    assert (await hear(dock, wav(1.0), **foreign)).status_code == 403
    assert (await dock.client.post("/api/speech/stop", headers=foreign)).status_code == 403
    assert (await hear(dock, wav(1.0), **{"Sec-Fetch-Site": "cross-site"})).status_code == 403


async def test_off_refuses_before_anything_is_read(dock: Dock) -> None:
    await dock.copilot.set_mode("off", channel="user")
    answer = await hear(dock, b"not even audio")
    assert answer.status_code == 409 and answer.json()["status"] == "off"
    assert "Off" in answer.json()["error"]
    assert not [e for e in dock.harness.events.envelopes
                if type(e.event).__name__ == "Listening"]


async def test_bad_uploads_are_refused_with_a_reason(dock: Dock) -> None:
    answer = await hear(dock, b"ID3\x04 an mp3, say")
    assert answer.status_code == 415 and "not a WAV" in answer.json()["error"]
    floats = bytearray(wav(1.0))
    floats[20:22] = (3).to_bytes(2, "little")  # WAVE_FORMAT_IEEE_FLOAT
    answer = await hear(dock, bytes(floats))
    assert answer.status_code == 415 and "16-bit PCM" in answer.json()["error"]
    for width in (1, 3, 4):  # 8-bit PCM was accepted, although the docs say 16-bit
        out = io.BytesIO()
        with wave.open(out, "wb") as w:
            w.setnchannels(1)
            w.setsampwidth(width)
            w.setframerate(16_000)
            w.writeframes(bytes(16_000 * width))
        answer = await hear(dock, out.getvalue())
        assert answer.status_code == 415, width
        assert f"{8 * width}-bit samples" in answer.json()["error"], answer.json()
    answer = await hear(dock, b"")
    assert answer.status_code == 400 and "empty" in answer.json()["error"]
    answer = await hear(dock, wav(0))
    assert answer.status_code == 400 and "no audio" in answer.json()["error"]
    answer = await hear(dock, wav(61))  # 1.95 MB: under the byte cap, over the time cap
    assert answer.status_code == 413 and "too long" in answer.json()["error"]
    answer = await hear(dock, wav(40, rate=48_000) + bytes(4_000_000))
    assert answer.status_code == 413 and "too large" in answer.json()["error"]

    async def chunks() -> AsyncIterator[bytes]:  # no Content-Length: counted as it comes
        for _ in range(100):
            yield bytes(64 * 1024)

    answer = await dock.client.post("/api/voice/hear", content=chunks())
    assert answer.status_code == 413


async def test_a_spoken_request_is_heard_in_the_dock_and_the_recording_deleted(
        stt_dock: Dock, tmp_path: Path) -> None:
    state = (await stt_dock.client.get("/api/state")).json()["voice"]
    assert state["hear"] is True and state["hearMissing"] is None
    body = espeak("List Python processes", tmp_path / "request.wav").read_bytes()
    answer = await hear(stt_dock, body)
    assert answer.status_code == 200, answer.text
    got = answer.json()
    assert got["status"] == "request" and got["editFirst"] is False
    assert "pythonprocess" in letters(got["text"]), got
    [listening] = [e.event for e in stt_dock.harness.events.envelopes
                   if type(e.event).__name__ == "Listening"]
    recording = Path(listening.source)
    assert recording.name == "recording.wav" and not recording.parent.exists()
    # the page sends the transcript as the request: the dock itself planned nothing
    assert not [e for e in stt_dock.harness.events.envelopes
                if type(e.event).__name__ == "RunStarted"]


async def test_listen_only_logs_the_transcript_as_context_and_plans_nothing(
        stt_dock: Dock, tmp_path: Path) -> None:
    await stt_dock.copilot.set_mode("listen-only", channel="user")
    body = espeak("List Python processes", tmp_path / "request.wav").read_bytes()
    answer = await hear(stt_dock, body)
    got = answer.json()
    assert answer.status_code == 200 and got["status"] == "context", got
    records = (await stt_dock.client.get("/api/log?kind=event")).json()["records"]
    assert [r for r in records if r.get("source") == "speech"
            and "pythonprocess" in letters(r["text"])], records
    assert not [e for e in stt_dock.harness.events.envelopes
                if type(e.event).__name__ == "RunStarted"]


async def test_silence_is_heard_as_nothing_with_the_reason(stt_dock: Dock) -> None:
    got = (await hear(stt_dock, wav(1.5))).json()
    assert got["status"] == "nothing" and got["text"], got


async def read_voice(dock: Dock, stop_after: int, **headers: str) -> list[dict[str, Any]]:
    async with dock.client.stream("GET", "/api/voice/events", headers=headers) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        return (await read(response, stop_after=stop_after)).envelopes


async def test_the_ambient_stream_carries_speech_and_replays_after_a_reconnect(
        tmp_path: Path) -> None:
    import anyio

    tts = pytest.importorskip("adjutant_tts", reason="speaking needs adjutant-tts")
    async with start_dock(plugins=(tts.TtsPlugin,)) as dock:
        assert (await dock.client.get("/api/state")).json()["voice"]["speak"] is True
        [snapshot] = await read_voice(dock, 1)
        assert snapshot["event"] == "voice_snapshot"
        assert snapshot["data"]["value"] == {"speaking": None, "hearing": None}
        seen: list[dict[str, Any]] = []
        live = anyio.Event()

        async def listen() -> None:
            async with dock.client.stream("GET", "/api/voice/events") as response:
                async for env in _envelopes(response):
                    seen.append(env)
                    live.set()  # the snapshot came: the stream is live
                    if env["data"].get("name") == "speech.stopped":
                        return

        async with anyio.create_task_group() as tg:
            tg.start_soon(listen)
            await live.wait()
            utterance = await tts.speaker_for(dock.harness.kernel).say(
                "Hello from the dock.", path=tmp_path / "hello.wav")
            assert utterance is not None
            await utterance.wait()
        names = [e["data"]["name"] for e in seen]
        assert names[0] == "adjutant.dock.voice_snapshot" and names[-1] == "speech.stopped"
        started = seen[names.index("speech.started")]
        assert started["data"]["value"]["text"] == "Hello from the dock."
        assert seen[-1]["data"]["value"]["reason"] == "finished"
        assert [e["seq"] for e in seen[1:]] == sorted({e["seq"] for e in seen[1:]})
        # a reconnect after speech.started gets exactly what followed it
        rest = await read_voice(dock, len(seen) - names.index("speech.started") - 1,
                                **{"Last-Event-ID": str(started["seq"])})
        assert rest == seen[names.index("speech.started") + 1:]
        # and the speech controls answer with the speaker's state
        for action, paused in (("pause", True), ("resume", False), ("stop", False)):
            got = (await dock.client.post(f"/api/speech/{action}")).json()
            assert got == {"speaking": False, "paused": paused}, action


async def _envelopes(response: httpx.Response) -> AsyncIterator[dict[str, Any]]:
    import msgspec
    from dockkit import check

    current: dict[str, str] = {}
    async for line in response.aiter_lines():
        if line.startswith(":"):
            continue
        if line == "":
            if "data" in current:
                env = msgspec.json.decode(current["data"])
                check(env, current.get("id"))
                yield env
            current = {}
            continue
        key, _, value = line.partition(":")
        current[key] = value[1:] if value.startswith(" ") else value
