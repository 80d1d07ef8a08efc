"""The ``openrouter`` speech recognizer against the fake: the recording arrives as the
WAV that was sent, with an instruction to transcribe it, and every failure is one
`SpeechError` with something to do (adjutant-stt shows it, with the CLI's exit 1)."""

from __future__ import annotations

import anyio
import pytest

import adjutant_openrouter
from adjutant_hookspecs import RecognitionRequest, SpeechError, SpeechRecognizer
from adjutant_openrouter._recognizer import DEFAULT_AUDIO_MODEL, OpenRouterRecognizer

from .fake_openrouter import FakeOpenRouter
from .test_provider import KEY, a_wav

pytestmark = pytest.mark.anyio


def seconds(audio: bytes, fmt: str) -> str:
    """The fake's ear: what it was sent, measured (so a transcript proves the bytes)."""
    import io
    import wave

    with wave.open(io.BytesIO(audio)) as wav:
        return (f"{fmt} {wav.getframerate()} Hz {wav.getnchannels()} channel "
                f"{wav.getnframes() / wav.getframerate():.2f} s")


def recognizer(server: FakeOpenRouter, **options: object) -> OpenRouterRecognizer:
    return OpenRouterRecognizer(server.url, api_key=KEY, **options)  # type: ignore[arg-type]


def chats(server: FakeOpenRouter) -> list[object]:
    return [r for r in server.requests if r.path == "/chat/completions"]


def test_registered_through_the_hook_as_a_remote_recognizer() -> None:
    found: list[object] = []
    adjutant_openrouter.register_speech_recognizers(found.append)
    [engine] = found
    assert isinstance(engine, SpeechRecognizer)
    assert (engine.name, engine.remote, engine.destination) == (
        "openrouter", True, "openrouter.ai")
    assert engine.model == DEFAULT_AUDIO_MODEL  # type: ignore[attr-defined]


def test_destination_is_the_host_of_the_base_url() -> None:
    env = {"ADJUTANT_OPENROUTER_URL": "http://127.0.0.1:8123/api/v1",
           "OPENROUTER_API_KEY": "k"}
    engine = OpenRouterRecognizer.from_environment(env)
    assert (engine.destination, engine.api_key) == ("127.0.0.1:8123", "k")


async def test_the_recording_is_sent_as_input_audio_and_the_words_come_back() -> None:
    audio = a_wav(1.25)
    with FakeOpenRouter(hear=seconds) as server:
        text = await recognizer(server).recognize(RecognitionRequest(audio=audio,
                                                                     language="en"))
        body = chats(server)[-1].json()  # type: ignore[attr-defined]
    assert text == "wav 16000 Hz 1 channel 1.25 s"
    assert server.audio == [(audio, "wav")]
    assert body["model"] == DEFAULT_AUDIO_MODEL and body["temperature"] == 0.0
    system, user = body["messages"]
    assert "verbatim" in system["content"] and "Do not answer" in system["content"]
    assert user["content"][0] == {"type": "text", "text": "Transcribe this recording "
                                  "verbatim. The speech is in English."}
    assert user["content"][1]["type"] == "input_audio"


async def test_the_model_is_checked_before_any_audio_is_sent() -> None:
    with FakeOpenRouter(hear=seconds) as server:
        with pytest.raises(SpeechError, match="does not take audio input") as caught:
            await recognizer(server).recognize(
                RecognitionRequest(audio=a_wav(), model="openai/gpt-4o-mini"))
        assert "listen.remote_model" in caught.value.hint
        with pytest.raises(SpeechError, match="no model 'no/such'"):
            await recognizer(server, model="no/such").recognize(RecognitionRequest(
                audio=a_wav()))
        assert chats(server) == [] and server.audio == []
        other = await recognizer(server).recognize(RecognitionRequest(
            audio=a_wav(), model="openai/gpt-4o-audio-preview"))
    assert other.startswith("wav 16000 Hz")


async def test_no_key_fails_before_anything_is_sent() -> None:
    with FakeOpenRouter() as server:
        with pytest.raises(SpeechError, match="no OpenRouter API key") as caught:
            await OpenRouterRecognizer(server.url).recognize(RecognitionRequest(audio=a_wav()))
        assert server.requests == []
    assert "OPENROUTER_API_KEY" in caught.value.hint


@pytest.mark.parametrize(("options", "match", "hint", "status"), [
    ({"key": "sk-or-v1-other"}, "HTTP 401", "OPENROUTER_API_KEY", 401),
    ({"mode": "credits"}, "no credits", "add credits", 402),
    ({"mode": "rate", "retry_after": "120"}, "Rate limit exceeded", "wait 120 s", 429),
    ({"mode": "in-band"}, "Provider returned error", "try again", 502),
])
async def test_each_error_is_one_speech_error_with_a_fix(
        options: dict[str, str], match: str, hint: str, status: int) -> None:
    with FakeOpenRouter(**options) as server:  # type: ignore[arg-type]
        with pytest.raises(SpeechError, match=match) as caught:
            await recognizer(server).recognize(RecognitionRequest(audio=a_wav()))
        sent = len(chats(server))
    assert hint in caught.value.hint
    assert caught.value.status == status
    assert sent == 1  # a long Retry-After is reported, not slept through or retried


async def test_a_short_rate_limit_is_waited_out_once() -> None:
    with FakeOpenRouter(mode="rate-once", hear=seconds) as server:
        text = await recognizer(server).recognize(RecognitionRequest(audio=a_wav()))
        assert len(chats(server)) == 2
    assert text.startswith("wav")


async def test_a_dead_server_says_so() -> None:
    with FakeOpenRouter() as server:
        url = server.url
    engine = OpenRouterRecognizer(url, api_key=KEY)
    with pytest.raises(SpeechError, match="is not reachable") as caught:
        await engine.recognize(RecognitionRequest(audio=a_wav()))
    assert "status.openrouter.ai" in caught.value.hint


async def test_an_empty_answer_is_no_words() -> None:
    with FakeOpenRouter(mode="empty") as server:
        assert await recognizer(server).recognize(RecognitionRequest(audio=a_wav())) == ""


@pytest.mark.parametrize(("said", "kept"), [('"Hello there."', "Hello there."),
                                            ("Transcript: list files", "list files"),
                                            ("  plain  ", "plain")])
async def test_wrapping_around_the_words_is_removed(said: str, kept: str) -> None:
    with FakeOpenRouter(hear=lambda audio, fmt: said) as server:
        assert await recognizer(server).recognize(RecognitionRequest(audio=a_wav())) == kept


async def test_cancelling_closes_the_connection() -> None:
    with FakeOpenRouter(pieces=("word ",) * 200, delay=0.02) as server:
        with anyio.move_on_after(0.5):
            await recognizer(server).recognize(RecognitionRequest(audio=a_wav()))
        assert await anyio.to_thread.run_sync(server.wait_for_disconnect)
