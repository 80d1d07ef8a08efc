"""Where audio goes: the default output device (sounddevice, PortAudio) or a WAV file.

Both take PCM as it is synthesized and say how much of it has been played, so the
speech service can report progress, pause, and stop. A device output holds the sound
card only while one utterance plays: `close` aborts the stream and releases it.
``ADJUTANT_SPEECH_OUTPUT`` (``device`` or ``file``) forces one; by default a device is
used when PortAudio finds a default output, else a file.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

from ._wav import write_wav

__all__ = ["DeviceOutput", "FileOutput", "Output", "no_device_reason"]


class Output(Protocol):
    kind: str
    path: Path | None

    def write(self, pcm: bytes) -> None: ...
    def finish(self) -> None: ...
    def done(self) -> bool: ...
    def played_ms(self) -> int: ...
    def pause(self) -> None: ...
    def resume(self) -> None: ...
    def close(self) -> None: ...


def no_device_reason(env: Mapping[str, str]) -> str | None:
    """Why no audio device can be used here (None: there is one)."""
    forced = env.get("ADJUTANT_SPEECH_OUTPUT", "")
    if forced == "file":
        return "ADJUTANT_SPEECH_OUTPUT=file"
    if forced not in ("", "device"):
        return f"ADJUTANT_SPEECH_OUTPUT={forced!r} is neither device nor file"
    try:
        import sounddevice
    except (ImportError, OSError) as exc:  # OSError: the PortAudio library is missing
        return f"no PortAudio ({exc}; on Debian: apt-get install libportaudio2)"
    try:
        sounddevice.query_devices(kind="output")
    except Exception as exc:  # sounddevice raises PortAudioError or ValueError
        return f"no default audio output device (PortAudio: {exc})"
    return None


class DeviceOutput:
    """Plays through the default output device; the PortAudio callback pulls from a
    buffer the synthesis fills, so audio starts with the first chunk."""

    kind = "device"
    path: Path | None = None
    #: Streams open right now, process-wide: 0 when every utterance gave the device back.
    open_streams = 0

    def __init__(self, sample_rate: int, channels: int = 1) -> None:
        import sounddevice

        self.sample_rate, self.channels = sample_rate, channels
        self._buffer = bytearray()
        self._lock = threading.Lock()
        self._paused = False
        self._finished = False
        self._played = 0  # bytes
        self._ended = threading.Event()
        self._stop = sounddevice.CallbackStop
        self._stream: Any = sounddevice.RawOutputStream(
            samplerate=sample_rate, channels=channels, dtype="int16",
            callback=self._callback, finished_callback=self._ended.set)
        DeviceOutput.open_streams += 1
        try:
            self._stream.start()
        except BaseException:
            self.close()
            raise

    def _callback(self, outdata: Any, frames: int, time: Any, status: Any) -> None:
        size = len(outdata)
        with self._lock:
            take = 0 if self._paused else min(size, len(self._buffer))
            outdata[:take] = self._buffer[:take]
            del self._buffer[:take]
            self._played += take
            outdata[take:] = bytes(size - take)
            if self._finished and not self._buffer:
                raise self._stop

    def write(self, pcm: bytes) -> None:
        with self._lock:
            self._buffer += pcm

    def finish(self) -> None:
        with self._lock:
            self._finished = True

    def done(self) -> bool:
        return self._ended.is_set()

    def played_ms(self) -> int:
        return self._played * 1000 // (2 * self.channels * self.sample_rate)

    def pause(self) -> None:
        self._paused = True

    def resume(self) -> None:
        self._paused = False

    def close(self) -> None:
        """Stop at once and give the device back."""
        stream, self._stream = self._stream, None
        if stream is not None:
            stream.abort(ignore_errors=True)
            stream.close(ignore_errors=True)
            DeviceOutput.open_streams -= 1
            self._ended.set()


class FileOutput:
    """Collects the audio and writes it as a WAV when the utterance ends (also when it
    is stopped: what was said up to then)."""

    kind = "file"

    def __init__(self, path: Path, sample_rate: int, channels: int = 1) -> None:
        self.path: Path | None = path
        self.sample_rate, self.channels = sample_rate, channels
        self._pcm = bytearray()
        self._written = False

    def write(self, pcm: bytes) -> None:
        self._pcm += pcm

    def finish(self) -> None:
        self._save()

    def done(self) -> bool:
        return self._written

    def played_ms(self) -> int:
        return len(self._pcm) * 1000 // (2 * self.channels * self.sample_rate)

    def pause(self) -> None:
        return None

    def resume(self) -> None:
        return None

    def close(self) -> None:
        self._save()

    def _save(self) -> None:
        if not self._written and self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            write_wav(self.path, bytes(self._pcm), self.sample_rate, self.channels)
            self._written = True
