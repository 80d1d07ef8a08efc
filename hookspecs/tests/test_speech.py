"""The speech contracts: requests are checked, chunks measure themselves, and the
speaking events travel as AG-UI CUSTOM events with camelCase values."""

from __future__ import annotations

import msgspec
import pytest

from adjutant_hookspecs import (
    SPEECH_EVENTS,
    AudioChunk,
    SpeechError,
    SpeechRequest,
    SpeechStarted,
    SpeechStopped,
    event_name,
    is_custom,
)


def test_a_request_refuses_a_speed_no_engine_takes() -> None:
    assert SpeechRequest(text="hi").speed == 1.0
    for speed in (0.1, 5.0):
        with pytest.raises(ValueError, match=r"0.25..4.0"):
            SpeechRequest(text="hi", speed=speed)
    with pytest.raises(msgspec.ValidationError, match="unknown field `instructions`"):
        msgspec.convert({"text": "hi", "instructions": "cheerful"}, SpeechRequest)


def test_a_chunk_knows_its_length() -> None:
    chunk = AudioChunk(pcm=bytes(4 * 24000), sample_rate=24000, channels=2)
    assert (chunk.frames, chunk.seconds) == (24000, 1.0)


def test_speech_events_are_custom_and_camel_case_on_the_wire() -> None:
    assert [event_name(e) for e in SPEECH_EVENTS] == [
        "speech.started", "speech.progress", "speech.stopped"]
    assert all(is_custom(e) for e in SPEECH_EVENTS)
    wire = msgspec.to_builtins(SpeechStopped(speech_id="a1", reason="error", played_ms=120,
                                             error="TTS-WebUI is not reachable"))
    assert wire == {"type": "speech.stopped", "speechId": "a1", "reason": "error",
                    "playedMs": 120, "error": "TTS-WebUI is not reachable"}
    started = msgspec.to_builtins(SpeechStarted(speech_id="a1", text="hi", engine="hibari",
                                                output="device"))
    assert "path" not in started and "source" not in started  # defaults are left out


def test_a_speech_error_carries_what_to_do() -> None:
    error = SpeechError("TTS-WebUI is down", hint="start it", status=None)
    assert str(error) == "TTS-WebUI is down; start it" and error.hint == "start it"
