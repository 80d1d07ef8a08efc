"""One utterance from a stream of audio chunks: the microphone (``sounddevice``), or a
recording fed in its place (``adjutant listen --audio FILE``, the tests). Recording
stops when the user says so (Enter, the key released), when the speech is followed by
silence (the Silero VAD inside faster-whisper), at a length limit, or when nothing was
said for a while."""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ._errors import NoInputDevice, SttError
from ._transcribe import SAMPLE_RATE, decode_file

__all__ = ["DEFAULT_ENDPOINT", "Endpoint", "Recording", "file_chunks", "microphone_chunks",
           "record_utterance"]

CHUNK_S = 0.1
CHECK_EVERY_S = 0.3


@dataclass(frozen=True)
class Endpoint:
    #: Speech followed by this much silence ends the utterance.
    silence_s: float = 0.8
    #: The longest utterance.
    max_s: float = 30.0
    #: Give up when nothing was said for this long.
    no_speech_s: float = 8.0


DEFAULT_ENDPOINT = Endpoint()


@dataclass(frozen=True)
class Recording:
    samples: Any
    #: ``silence``, ``stopped`` (the user), ``limit``, ``no speech`` or ``end`` (the
    #: source ran out).
    why: str
    heard_speech: bool
    #: When the last speech sample arrived (time.perf_counter), for latency figures.
    speech_ended_at: float


def microphone_chunks(stop: threading.Event, device: Any = None) -> Iterator[Any]:
    """Chunks from the default input device (16 kHz mono float32) until ``stop``.

    Raises `NoInputDevice` when there is none (no sound card, no PortAudio)."""
    try:
        import sounddevice
    except (OSError, ImportError) as exc:  # no PortAudio library, or no sounddevice
        raise NoInputDevice("no audio input: the PortAudio library is not installed",
                            hint="install it (Debian: apt-get install libportaudio2), or "
                                 "transcribe a recording: adjutant transcribe FILE") from exc
    try:
        sounddevice.check_input_settings(device=device, channels=1, samplerate=SAMPLE_RATE,
                                         dtype="float32")
    except Exception as exc:  # PortAudioError or ValueError: no such device
        raise NoInputDevice(f"no microphone: {exc}",
                            hint="connect one (or pick it with ADJUTANT_STT_DEVICE), or "
                                 "transcribe a recording: adjutant transcribe FILE") from exc
    chunks: queue.Queue[Any] = queue.Queue()

    def collect(data: Any, frames: int, when: Any, status: Any) -> None:
        chunks.put(data[:, 0].copy())

    with sounddevice.InputStream(device=device, channels=1, samplerate=SAMPLE_RATE,
                                 dtype="float32", blocksize=int(SAMPLE_RATE * CHUNK_S),
                                 callback=collect):
        while not stop.is_set():
            try:
                yield chunks.get(timeout=CHUNK_S * 2)
            except queue.Empty:
                continue


def file_chunks(path: str, *, realtime: bool = True, tail_silence_s: float = 2.0
                ) -> Iterator[Any]:
    """A recording fed in place of the microphone: in chunks, at speaking pace when
    ``realtime``, followed by silence (as a microphone would hear the room)."""
    import numpy as np

    samples = decode_file(path)
    step = int(SAMPLE_RATE * CHUNK_S)
    padded = np.concatenate([samples, np.zeros(int(SAMPLE_RATE * tail_silence_s),
                                               dtype=np.float32)])
    start = time.perf_counter()
    for index, offset in enumerate(range(0, padded.size, step)):
        if realtime:
            time.sleep(max(0.0, start + index * CHUNK_S - time.perf_counter()))
        yield padded[offset:offset + step]


def record_utterance(chunks: Iterator[Any], stop: threading.Event | None = None,
                     endpoint: Endpoint = DEFAULT_ENDPOINT) -> Recording:
    """Collect chunks until the utterance ends (see the module's docstring)."""
    import numpy as np
    from faster_whisper.vad import VadOptions, get_speech_timestamps

    stop = stop or threading.Event()
    options = VadOptions(min_silence_duration_ms=int(endpoint.silence_s * 1000),
                         speech_pad_ms=0, min_speech_duration_ms=200)
    parts: list[Any] = []
    size, checked, heard, ended_at, why = 0, 0, False, time.perf_counter(), "end"
    last_end = 0
    for chunk in chunks:
        parts.append(np.asarray(chunk, dtype=np.float32).reshape(-1))
        size += parts[-1].size
        if stop.is_set():
            why = "stopped"
            break
        if size - checked < SAMPLE_RATE * CHECK_EVERY_S:
            continue
        checked = size
        spans = get_speech_timestamps(np.concatenate(parts), options)
        if spans:
            if not heard or spans[-1]["end"] > last_end:
                ended_at = time.perf_counter() - (size - spans[-1]["end"]) / SAMPLE_RATE
            heard, last_end = True, spans[-1]["end"]
            if (size - last_end) / SAMPLE_RATE >= endpoint.silence_s:
                why = "silence"
                break
        elif size / SAMPLE_RATE >= endpoint.no_speech_s:
            why = "no speech"
            break
        if size / SAMPLE_RATE >= endpoint.max_s:
            why = "limit"
            break
    if not parts:
        raise SttError("the audio source gave nothing (is the input device muted?)")
    samples = np.concatenate(parts)
    if why != "silence" and not heard:  # stopped early, or the source ran out
        heard = bool(get_speech_timestamps(samples, options))
    return Recording(samples=samples, why=why, heard_speech=heard,
                     speech_ended_at=ended_at if why == "silence" else time.perf_counter())
