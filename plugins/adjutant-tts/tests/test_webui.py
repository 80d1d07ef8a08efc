"""The TTS-WebUI engine against a faithful fake of its OpenAI TTS API extension
(`fake_ttswebui`): formats, streaming, 401/422/500, a server that is down."""

from __future__ import annotations

import socket
import time
from contextlib import aclosing
from typing import Any

import pytest

from adjutant_hookspecs import AudioChunk, SpeechError, SpeechRequest
from adjutant_tts import TtsWebUI
from adjutant_tts._webui import split_text

from .fake_ttswebui import SECONDS_PER_CHAR, FakeTtsWebUI

pytestmark = pytest.mark.anyio


async def say(engine: TtsWebUI, text: str, **kw: Any) -> list[AudioChunk]:
    async with aclosing(engine.synthesize(SpeechRequest(text=text, **kw))) as chunks:
        return [chunk async for chunk in chunks]


def seconds(chunks: list[AudioChunk]) -> float:
    return sum(c.seconds for c in chunks)


def speech_requests(server: FakeTtsWebUI) -> list[dict[str, Any]]:
    return [r.json() for r in server.requests if r.path == "/v1/audio/speech"]


async def test_kokoro_float_wav_is_read_and_the_request_is_what_the_server_takes() -> None:
    with FakeTtsWebUI() as server:
        engine = TtsWebUI(server.url)
        chunks = await say(engine, "Hello there.", voice="af_bella", speed=1.0)
        await engine.aclose()
    assert {(c.sample_rate, c.channels) for c in chunks} == {(24000, 1)}
    assert seconds(chunks) == pytest.approx(len("Hello there.") * SECONDS_PER_CHAR, abs=0.01)
    pcm = b"".join(c.pcm for c in chunks)
    assert max(abs(int.from_bytes(pcm[i:i + 2], "little", signed=True))
               for i in range(0, len(pcm), 2)) > 10000  # the float samples, scaled
    [body] = speech_requests(server)
    assert body == {"model": "hexgrad/Kokoro-82M", "input": "Hello there.",
                    "voice": "af_bella", "response_format": "wav", "speed": 1.0,
                    "stream": True}
    assert "instructions" not in body  # a non-null one crashes the server


async def test_instructions_would_crash_the_server_as_documented() -> None:
    """The fake's fidelity: this is why the engine never sends the key."""
    import httpx

    with FakeTtsWebUI() as server:
        async with httpx.AsyncClient(base_url=server.url) as client:
            answer = await client.post("/v1/audio/speech", json={
                "model": "hexgrad/Kokoro-82M", "input": "hi", "instructions": "cheerful"})
    assert (answer.status_code, answer.text) == (500, "Internal Server Error")


@pytest.mark.parametrize("fmt", ["mp3", "opus", "aac", "flac", "wav", "pcm"])
async def test_every_format_is_labelled_but_the_body_stays_wav(fmt: str) -> None:
    import httpx

    from adjutant_tts._wav import WavReader

    with FakeTtsWebUI() as server:
        async with httpx.AsyncClient(base_url=server.url) as client:
            answer = await client.post("/v1/audio/speech", json={
                "model": "chatterbox", "input": "hi", "voice": "random",
                "response_format": fmt, "stream": False})
    reader = WavReader()
    assert reader.feed(answer.content) and reader.sample_rate == 24000
    assert answer.headers["content-type"].startswith("audio/")
    assert answer.headers["content-disposition"].startswith("attachment")


async def test_chatterbox_streams_its_audio_as_it_is_made() -> None:
    with FakeTtsWebUI(pieces=4, delay=0.3) as server:
        engine = TtsWebUI(server.url)
        started = time.monotonic()
        arrivals = []
        async with aclosing(engine.synthesize(SpeechRequest(
                text="A sentence long enough to stream.", model="chatterbox",
                voice="random"))) as chunks:
            async for chunk in chunks:
                arrivals.append((time.monotonic() - started, chunk.seconds))
        await engine.aclose()
    assert len(arrivals) >= 4
    # the first audio came before the rest was made (the server waits 0.3 s between
    # pieces): streamed, the last arrives at least two waits after the first; buffered,
    # all would arrive together. Relative, so a loaded machine's late start is no miss.
    assert arrivals[-1][0] - arrivals[0][0] >= 0.6
    assert sum(s for _, s in arrivals) == pytest.approx(33 * SECONDS_PER_CHAR, abs=0.01)


async def test_closing_the_stream_stops_the_server_side_too() -> None:
    with FakeTtsWebUI(pieces=20, delay=0.1) as server:
        engine = TtsWebUI(server.url)
        async with aclosing(engine.synthesize(SpeechRequest(
                text="Stop me after the first piece.", model="chatterbox"))) as chunks:
            async for _ in chunks:
                break
        await engine.aclose()
        assert server.wait_for_disconnect()
        assert server.completed_streams == 0


async def test_a_stream_that_breaks_is_a_clear_error() -> None:
    with FakeTtsWebUI(pieces=6, delay=0.0, fail_after=2) as server:
        engine = TtsWebUI(server.url)
        with pytest.raises(SpeechError, match="dropped the connection in the middle"):
            await say(engine, "This one breaks halfway.", model="chatterbox")
        await engine.aclose()


async def test_422_names_the_field_and_the_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeTtsWebUI() as server:
        engine = TtsWebUI(server.url)
        real = engine.body
        monkeypatch.setattr(engine, "body", lambda request, text: {
            **real(request, text), "speed": 9.0, "response_format": "ogg"})
        with pytest.raises(SpeechError) as caught:
            await say(engine, "hi")
        await engine.aclose()
    assert caught.value.status == 422
    assert "response_format: Input should be 'mp3'" in str(caught.value)
    assert "speed: Input should be less than or equal to 4" in str(caught.value)


@pytest.mark.parametrize(("model", "detail"), [
    ("styletts2", "StyleTTS2 extension is not installed"),
    ("no-such-model", "Model no-such-model not found"),
])
async def test_500_detail_is_shown(model: str, detail: str) -> None:
    with FakeTtsWebUI() as server:
        engine = TtsWebUI(server.url)
        with pytest.raises(SpeechError, match=f"HTTP 500.*{detail}") as caught:
            await say(engine, "hi", model=model)
        await engine.aclose()
    assert caught.value.status == 500


async def test_api_key_is_sent_and_a_wrong_one_is_named() -> None:
    with FakeTtsWebUI(api_key="sekrit") as server:
        good = TtsWebUI(server.url, api_key="sekrit")
        assert seconds(await say(good, "hi")) > 0
        bad = TtsWebUI(server.url, env={"ADJUTANT_TTS_WEBUI_API_KEY": "wrong"})
        with pytest.raises(SpeechError, match="refused the API key") as caught:
            await say(bad, "hi")
        await good.aclose()
        await bad.aclose()
    assert "ADJUTANT_TTS_WEBUI_API_KEY" in caught.value.hint


async def test_a_server_that_is_down_is_named_with_what_to_do() -> None:
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    engine = TtsWebUI(env={"ADJUTANT_TTS_WEBUI_URL": f"http://127.0.0.1:{port}"})
    with pytest.raises(SpeechError, match=f"not reachable at http://127.0.0.1:{port}") as caught:
        await say(engine, "hello")
    await engine.aclose()
    assert "OpenAI TTS API extension" in caught.value.hint


async def test_long_text_goes_as_several_requests_under_the_limit() -> None:
    text = " ".join(f"Sentence number {i} is here." for i in range(300))  # ~8,400 chars
    with FakeTtsWebUI() as server:
        engine = TtsWebUI(server.url)
        chunks = await say(engine, text)
        await engine.aclose()
    bodies = speech_requests(server)
    assert len(bodies) == 3 and all(len(b["input"]) <= 4096 for b in bodies)
    assert " ".join(b["input"] for b in bodies) == text
    assert seconds(chunks) == pytest.approx(sum(len(b["input"]) for b in bodies)
                                            * SECONDS_PER_CHAR, abs=0.05)


def test_split_text_cuts_at_sentences_then_spaces_then_anywhere() -> None:
    assert list(split_text("One. Two. Three.", limit=10)) == ["One. Two.", "Three."]
    assert list(split_text("aaaa bbbb cccc", limit=10)) == ["aaaa bbbb", "cccc"]
    assert list(split_text("x" * 25, limit=10)) == ["x" * 10, "x" * 10, "x" * 5]
    assert list(split_text("   ")) == []


async def test_models_and_voices_in_both_listing_shapes() -> None:
    with FakeTtsWebUI() as server:
        engine = TtsWebUI(server.url)
        models = await engine.models()
        kokoro = await engine.voices()  # Kokoro's id has a slash: listed as "kokoro"
        chatterbox = await engine.voices("chatterbox")
        await engine.aclose()
    assert "hexgrad/Kokoro-82M" in models and "chatterbox" in models
    assert [(v.id, v.name) for v in kokoro][:2] == [("af_heart", "Heart"), ("af_bella", "Bella")]
    assert [v.id for v in chatterbox] == ["random", "voices/chatterbox/ada.wav"]
    paths = [r.path for r in server.requests]
    assert paths == ["/v1/audio/models", "/v1/audio/voices/kokoro", "/v1/audio/voices/chatterbox"]


async def test_a_body_that_is_not_wav_is_refused_clearly() -> None:
    from adjutant.testing.fakeserver import FakeResponse

    with FakeTtsWebUI() as server:
        server.routes[("POST", "/v1/audio/speech")] = lambda r: FakeResponse(
            200, b"ID3\x04\x00" + bytes(64), content_type="audio/mpeg")
        engine = TtsWebUI(server.url)
        with pytest.raises(SpeechError, match="cannot play: the audio is not WAV"):
            await say(engine, "hi")
        await engine.aclose()
