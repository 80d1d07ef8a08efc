"""Where a recording's audio comes from, each as an async iterator of 16 kHz mono
16-bit PCM blocks: a file or a pipe (`from_file`, `from_stream`), the microphone
(`microphone`, through sounddevice) and the sound server's monitor of the system's
output (`system_output`, PulseAudio or PipeWire through ``parec``); `mix` adds two.

Every source that cannot open says why in a `RecorderError`, before anything is
recorded."""

from __future__ import annotations

import shutil
import struct
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import suppress
from pathlib import Path
from typing import IO, Any

from ._wav import SAMPLE_RATE

__all__ = ["RecorderError", "from_file", "from_stream", "microphone", "mix", "monitor_source",
           "resample", "system_output"]

#: Seconds of audio per block.
BLOCK_S = 0.5
Sleep = Callable[[float], Awaitable[None]]


class RecorderError(Exception):
    """A source could not be opened or read, told the way a user can act on it."""

    def __init__(self, message: str, *, hint: str = "") -> None:
        super().__init__(f"{message}; {hint}" if hint else message)
        self.message, self.hint = message, hint


def resample(samples: Any, rate: int) -> Any:
    """Float mono ``samples`` at ``rate`` → int16 at 16 kHz (a box filter against
    aliasing when going down, then linear interpolation)."""
    import numpy as np

    x: Any = np.asarray(samples, dtype=np.float32)
    if rate != SAMPLE_RATE and len(x):
        if rate > SAMPLE_RATE:
            width = max(1, round(rate / SAMPLE_RATE))
            if width > 1:
                x = np.convolve(x, np.ones(width, dtype=np.float32) / width, mode="same")
        n = max(1, round(len(x) * SAMPLE_RATE / rate))
        x = np.interp(np.arange(n) * (rate / SAMPLE_RATE), np.arange(len(x)), x)
    return (np.clip(x, -1.0, 1.0) * 32767).astype("<i2")


async def from_file(path: Path, *, speed: float, sleep: Sleep) -> AsyncIterator[bytes]:
    """A sound file (WAV, FLAC, Ogg: what libsndfile reads), block by block, paced at
    ``speed`` times real time (0: as fast as it reads)."""
    import soundfile as sf

    try:
        handle = sf.SoundFile(str(path))
    except (sf.LibsndfileError, RuntimeError, OSError) as exc:
        raise RecorderError(f"cannot read {path} as audio: {exc}",
                            hint="give a WAV, FLAC or Ogg file") from exc
    with handle:
        rate = handle.samplerate
        frames = max(1, int(rate * BLOCK_S))
        while True:
            block = handle.read(frames, dtype="float32", always_2d=True)
            if not len(block):
                return
            yield resample(block.mean(axis=1), rate).tobytes()
            if speed > 0:
                await sleep(len(block) / rate / speed)


def _wav_head(stream: IO[bytes]) -> tuple[int, int, bytes]:
    """Rate and channels of a WAV stream (its header consumed), or 16 kHz mono raw PCM
    (and the bytes already read)."""
    first = stream.read(12)
    if not first.startswith(b"RIFF") or first[8:12] != b"WAVE":
        return SAMPLE_RATE, 1, first
    rate, channels = SAMPLE_RATE, 1
    while True:
        head = stream.read(8)
        if len(head) < 8:
            raise RecorderError("the piped WAV has no data chunk")
        kind, size = head[:4], struct.unpack("<I", head[4:])[0]
        if kind == b"data":
            return rate, channels, b""
        body = stream.read(size + size % 2)
        if kind == b"fmt ":
            fmt, channels, rate = struct.unpack("<HHI", body[:8])
            bits = struct.unpack("<H", body[14:16])[0]
            if fmt not in (1, 0xFFFE) or bits != 16:
                raise RecorderError(f"the piped WAV is not 16-bit PCM (format {fmt}, {bits} "
                                    "bits)", hint="convert it, e.g. sox in.wav -b 16 out.wav")


async def from_stream(stream: IO[bytes], *, speed: float, sleep: Sleep) -> AsyncIterator[bytes]:
    """A pipe (``-``): a 16-bit WAV stream, or raw 16 kHz mono 16-bit PCM."""
    import anyio
    import numpy as np

    rate, channels, pending = await anyio.to_thread.run_sync(_wav_head, stream)
    size = int(rate * BLOCK_S) * 2 * channels
    while True:
        data = pending + await anyio.to_thread.run_sync(stream.read, size - len(pending))
        pending = b""
        if not data:
            return
        whole = len(data) - len(data) % (2 * channels)
        samples = np.frombuffer(data[:whole], dtype="<i2").reshape(-1, channels)
        mono = samples.astype(np.float32).mean(axis=1) / 32768.0
        yield resample(mono, rate).tobytes()
        if speed > 0:
            await sleep(len(mono) / rate / speed)


async def microphone() -> AsyncIterator[bytes]:
    """The default input device, through sounddevice (PortAudio)."""
    import anyio

    try:
        import sounddevice as sd
    except OSError as exc:
        raise RecorderError(f"no microphone: the PortAudio library is missing ({exc})",
                            hint="apt-get install libportaudio2") from exc
    send, receive = anyio.create_memory_object_stream[bytes](64)
    token = anyio.lowlevel.current_token()

    def callback(data: Any, frames: int, time: Any, status: Any) -> None:
        with suppress(anyio.WouldBlock, anyio.ClosedResourceError, RuntimeError):
            anyio.from_thread.run_sync(send.send_nowait, bytes(data), token=token)

    try:
        stream = sd.RawInputStream(samplerate=SAMPLE_RATE, channels=1, dtype="int16",
                                   blocksize=int(SAMPLE_RATE * BLOCK_S), callback=callback)
    except (sd.PortAudioError, ValueError) as exc:
        raise RecorderError(f"no microphone here: {exc}",
                            hint="connect one, or record from a file with --from") from exc
    with stream, receive:
        async for block in receive:
            yield block


def monitor_source(pactl: str | None = None) -> str:
    """The monitor source of the sound server's default output, or `RecorderError`."""
    import subprocess

    pactl = pactl or shutil.which("pactl")
    if pactl is None:
        raise RecorderError("no system audio here: no PulseAudio or PipeWire sound server "
                            "(pactl is not installed)",
                            hint="on a desktop with PipeWire: apt-get install pulseaudio-utils")
    try:
        sink = subprocess.run([pactl, "get-default-sink"], capture_output=True, text=True,
                              timeout=5, check=True).stdout.strip()
    except (subprocess.SubprocessError, OSError) as exc:
        detail = getattr(exc, "stderr", "") or str(exc)
        raise RecorderError(f"no system audio here: no sound server answers "
                            f"({str(detail).strip()})",
                            hint="start PipeWire or PulseAudio in this session") from exc
    if not sink:
        raise RecorderError("no system audio here: the sound server has no output")
    return f"{sink}.monitor"


async def system_output() -> AsyncIterator[bytes]:
    """What the machine plays, from the sound server's monitor source (``parec``)."""
    import anyio

    source = monitor_source()
    parec = shutil.which("parec")
    if parec is None:
        raise RecorderError("no system audio: parec is not installed",
                            hint="apt-get install pulseaudio-utils")
    async with await anyio.open_process(
            [parec, f"--device={source}", "--format=s16le", f"--rate={SAMPLE_RATE}",
             "--channels=1", "--raw"]) as process:
        assert process.stdout is not None
        async for block in process.stdout:
            yield block


async def mix(a: AsyncIterator[bytes], b: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
    """Two sources added sample by sample (clipped), block by block."""
    import numpy as np

    while True:
        try:
            x = await a.__anext__()
        except StopAsyncIteration:
            return
        try:
            y = await b.__anext__()
        except StopAsyncIteration:
            return
        n = max(len(x), len(y)) // 2
        xs = np.zeros(n, dtype=np.int32)
        ys = np.zeros(n, dtype=np.int32)
        xs[: len(x) // 2] = np.frombuffer(x[: len(x) - len(x) % 2], dtype="<i2")
        ys[: len(y) // 2] = np.frombuffer(y[: len(y) - len(y) % 2], dtype="<i2")
        yield np.clip(xs + ys, -32768, 32767).astype("<i2").tobytes()
