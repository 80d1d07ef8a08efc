"""Real synthesis: the embedded default voice (hibari) and espeak-ng, checked as audio
(duration, sample rate, not silence), streamed, cancellable and offline."""

from __future__ import annotations

import math
import shutil
import socket
import struct
import time
import wave
from contextlib import aclosing
from pathlib import Path
from typing import Any

import pytest

from adjutant_hookspecs import AudioChunk, SpeechError, SpeechRequest
from adjutant_tts import EspeakEngine, HibariEngine, render_wav

pytestmark = pytest.mark.anyio
needs_espeak = pytest.mark.skipif(shutil.which("espeak-ng") is None,
                                  reason="espeak-ng is not installed (./dev installs it)")
SENTENCE = "The quick brown fox jumps over the lazy dog."


def rms(pcm: bytes) -> float:
    samples = struct.unpack(f"<{len(pcm) // 2}h", pcm)
    return math.sqrt(sum(s * s for s in samples) / max(1, len(samples)))


async def collect(engine: Any, text: str, **kw: Any) -> list[AudioChunk]:
    async with aclosing(engine.synthesize(SpeechRequest(text=text, **kw))) as chunks:
        return [c async for c in chunks]


@pytest.fixture(scope="module")
def hibari() -> HibariEngine:
    return HibariEngine()  # shared: the model loads once for the module


async def test_the_default_voice_says_a_sentence(hibari: HibariEngine) -> None:
    chunks = await collect(hibari, SENTENCE)
    pcm = b"".join(c.pcm for c in chunks)
    seconds = sum(c.seconds for c in chunks)
    assert {(c.sample_rate, c.channels) for c in chunks} == {(24000, 1)}
    assert 1.5 < seconds < 5.0  # nine words at a speaking pace
    assert rms(pcm) > 500  # speech, not silence (full scale is 32767)
    quiet_start = rms(pcm[:2400])  # the first 50 ms: the voice starts softly
    assert quiet_start < rms(pcm)


async def test_each_sentence_is_its_own_chunk_so_audio_starts_early(
        hibari: HibariEngine) -> None:
    chunks = await collect(hibari, "First sentence here. Second one follows. And a third.")
    assert len(chunks) == 3


async def test_speed_changes_the_duration(hibari: HibariEngine) -> None:
    normal = sum(c.seconds for c in await collect(hibari, SENTENCE))
    fast = sum(c.seconds for c in await collect(hibari, SENTENCE, speed=1.5))
    assert fast < normal * 0.8
    with pytest.raises(SpeechError, match=r"0.5..2.0"):
        await collect(hibari, SENTENCE, speed=3.0)


async def test_it_needs_no_network(hibari: HibariEngine, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("the embedded voice tried the network")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    fresh = HibariEngine()  # loads the model from the wheel with sockets refused
    assert await collect(fresh, "Offline.")
    voices = await fresh.voices()
    assert "heart" in [v.id for v in voices]


async def test_a_voice_not_in_the_package_is_never_downloaded(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HIBARI_HOME", str(tmp_path))  # an empty voice cache

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("a download was attempted")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    with pytest.raises(SpeechError, match="never downloads voices") as caught:
        await collect(HibariEngine(), "Hello.", voice="emma")
    assert str(tmp_path) in caught.value.hint
    assert [v.id for v in await HibariEngine().voices()] == ["heart"]
    with pytest.raises(SpeechError, match="no voice 'nobody'"):
        await collect(HibariEngine(), "Hello.", voice="nobody")


async def test_closing_mid_utterance_frees_the_engine_at_once(hibari: HibariEngine) -> None:
    text = " ".join(f"This is sentence number {i}." for i in range(40))
    started = time.perf_counter()
    async with aclosing(hibari.synthesize(SpeechRequest(text=text))) as chunks:
        async for _ in chunks:
            break
    stopped = time.perf_counter() - started
    assert stopped < 3.0  # far less than synthesizing 40 sentences
    assert not hibari._lock.locked()
    assert await collect(hibari, "Again.")


def test_render_wav_is_the_round_trip_helper(tmp_path: Path) -> None:
    path = render_wav("list python processes", tmp_path / "request.wav")
    with wave.open(str(path)) as w:
        assert (w.getframerate(), w.getnchannels(), w.getsampwidth()) == (24000, 1, 2)
        assert 0.8 < w.getnframes() / w.getframerate() < 4.0
        assert rms(w.readframes(w.getnframes())) > 500
    with pytest.raises(ValueError, match="engine must be one of"):
        render_wav("x", tmp_path / "x.wav", engine="nope")


@needs_espeak
async def test_espeak_ng_speaks_and_streams() -> None:
    chunks = await collect(EspeakEngine(), SENTENCE)
    pcm = b"".join(c.pcm for c in chunks)
    assert {(c.sample_rate, c.channels) for c in chunks} == {(22050, 1)}
    assert 1.5 < sum(c.seconds for c in chunks) < 5.0
    assert rms(pcm) > 500


@needs_espeak
async def test_espeak_ng_reads_text_that_looks_like_an_option() -> None:
    chunks = await collect(EspeakEngine(), "--version -h")
    assert sum(c.seconds for c in chunks) > 0.5  # said, not taken as a flag
    with pytest.raises(SpeechError, match="invalid espeak-ng voice"):
        await collect(EspeakEngine(), "hi", voice="--help")


@needs_espeak
async def test_closing_espeak_ng_kills_the_process() -> None:
    import os

    text = " ".join(f"This is sentence number {i}." for i in range(200))
    before = _children()
    async with aclosing(EspeakEngine().synthesize(SpeechRequest(text=text))) as chunks:
        async for _ in chunks:
            assert len(_children() - before) == 1
            break
    assert _children() - before == set(), os.getpid()


@needs_espeak
async def test_espeak_ng_lists_voices() -> None:
    voices = await EspeakEngine().voices()
    assert "en-us" in [v.id for v in voices]


async def test_espeak_ng_missing_is_a_clear_error() -> None:
    with pytest.raises(SpeechError, match="espeak-ng is not installed") as caught:
        await collect(EspeakEngine(program="no-such-espeak"), "hi")
    assert "apt-get install espeak-ng" in caught.value.hint


def _children() -> set[int]:
    import os

    pid = os.getpid()
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.add(int(entry.name))
    return found
