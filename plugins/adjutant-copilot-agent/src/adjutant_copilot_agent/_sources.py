"""Where a recording's audio comes from, each as an async iterator of 16 kHz mono
16-bit PCM blocks: a file or a pipe (`from_file`, `from_stream`), the microphone
(`microphone`, through sounddevice) and the sound server's monitor of the system's
output (`system_output`, PulseAudio or PipeWire through ``parec``); `mix` adds two,
lined up by when their sound was captured.

Every source that cannot open says why in a `RecorderError`, before anything is
recorded; a live one that dies mid-recording (the sound server gone) says so too, rather
than ending as if stopped or waiting forever."""

from __future__ import annotations

import math
import shutil
import struct
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from contextlib import aclosing
from pathlib import Path
from typing import IO, Any
from weakref import WeakKeyDictionary

from ._wav import SAMPLE_RATE

__all__ = ["RecorderError", "from_file", "from_stream", "microphone", "mix", "monitor_source",
           "resample", "system_output"]

#: Seconds of audio per block.
BLOCK_S = 0.5
#: Seconds of audio `mix` takes from each live source before lining them up (from the
#: blocks of that second that came soonest).
SETTLE_S = 1.0
#: Seconds of audio one source may get ahead of the other in `mix` (the other stalled).
AHEAD_S = 4.0
#: Seconds the monitor of the system's output hands over its sound ahead of its being
#: heard: the sound server renders what its output plays about the output's latency in
#: advance, and the monitor has it then; parec's ``--latency-msec=100`` holds that
#: latency at about 100 ms. (Measured on a null sink: parec's blocks put a sound 0.09 s
#: before the paplay that played it was even launched.)
MONITOR_LEAD_S = 0.1
Sleep = Callable[[float], Awaitable[None]]

#: A live source's capture latency, in seconds, for `mix`: its block's first sample was
#: captured (or, from a monitor, is heard) about ``arrival - samples / rate - latency``.
#: Not here: 0. The microphone's is 0 (its blocks come as their last sample is in), not
#: the ``stream.latency`` PortAudio reports: that is the size of its buffer (1.0 s through
#: ALSA's pulse plugin, for 0.5 s blocks), which a capture stream whose blocks are taken as
#: they come does not fill; subtracting it (and 0.1 s for parec) put the microphone 0.8 s
#: early in the mix. As they are, a sound played into both at once lines up to 0.01 s.
_LATENCY: WeakKeyDictionary[AsyncIterator[bytes], float] = WeakKeyDictionary()


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


async def microphone() -> AsyncGenerator[bytes, None]:
    """The default input device, through sounddevice (PortAudio). A device or sound
    server that goes away mid-recording is a `RecorderError`."""
    import queue

    import anyio

    try:
        import sounddevice as sd
    except OSError as exc:
        raise RecorderError(f"no microphone: the PortAudio library is missing ({exc})",
                            hint="apt-get install libportaudio2") from exc
    # PortAudio's thread hands each block over without waiting for the event loop: a
    # callback that waits for the loop deadlocks with the loop stopping the stream
    # (which waits for the callback), and the recording never ends.
    blocks: queue.SimpleQueue[bytes] = queue.SimpleQueue()

    def callback(data: Any, frames: int, time: Any, status: Any) -> None:
        blocks.put(bytes(data))

    try:
        stream = sd.RawInputStream(samplerate=SAMPLE_RATE, channels=1, dtype="int16",
                                   blocksize=int(SAMPLE_RATE * BLOCK_S), callback=callback)
    except (sd.PortAudioError, ValueError) as exc:
        raise RecorderError(f"no microphone here: {exc}",
                            hint="connect one, or record from a file with --from") from exc
    with stream:
        while True:
            try:
                block = await anyio.to_thread.run_sync(blocks.get, True, 4 * BLOCK_S)
            except queue.Empty:
                if stream.active:
                    continue
                # PortAudio ended the stream (every block it gave is taken): none will come
                raise RecorderError("the microphone stopped: the device or the sound server "
                                    "went away") from None
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


def system_output() -> AsyncGenerator[bytes, None]:
    """What the machine plays, from the sound server's monitor source (``parec``). The
    sound server (or its output) going away mid-recording is a `RecorderError`."""
    source = _parec()
    _LATENCY[source] = -MONITOR_LEAD_S
    return source


async def _parec() -> AsyncGenerator[bytes, None]:
    import subprocess
    import tempfile

    import anyio

    source = monitor_source()
    parec = shutil.which("parec")
    if parec is None:
        raise RecorderError("no system audio: parec is not installed",
                            hint="apt-get install pulseaudio-utils")
    # --latency-msec: without it the server hands parec 2 s fragments, the recording
    # lags by as much and a stop loses the fragment in flight.
    with tempfile.TemporaryFile() as errors:
        async with await anyio.open_process(
                [parec, f"--device={source}", "--format=s16le", f"--rate={SAMPLE_RATE}",
                 "--channels=1", "--raw", "--latency-msec=100"],
                stdin=subprocess.DEVNULL, stderr=errors) as process:
            assert process.stdout is not None
            async for block in process.stdout:
                yield block
            # parec ended by itself (a stop closes this generator at its yield, above)
            await process.wait()
            errors.seek(0)
            said = " ".join(errors.read().decode(errors="replace").split())
            raise RecorderError("the system audio stopped: the sound server or its output "
                                f"went away (parec exited {process.returncode}: {said})")


async def mix(a: AsyncGenerator[bytes, None],
              b: AsyncGenerator[bytes, None]) -> AsyncIterator[bytes]:
    """Two live sources added sample by sample (clipped), `BLOCK_S` at a time, lined up
    by when their sound was captured. Both are started at once and read, each in its own
    task, while either is awaited; each block is timed as it arrives. From their first
    `SETTLE_S`, the one that started later is given silence in front for the difference,
    once; then both advance at the sample rate. Each is buffered: they come in blocks of
    their own sizes (parec's are not PortAudio's), and pairing block with block would
    stretch one of them and leave it behind. Either ending or failing ends the mix and
    closes the other; its `RecorderError` is the mix's.

    The readers' task group lives within one step (until a block of both is in), never
    across a ``yield``: a task group held open over a ``yield`` would run its cancel
    scope around the consumer's code, and the generator is closed in another task when
    the consumer leaves it unclosed (the recorder does, at a stop). Between steps the
    sources keep what comes in their own buffers (a pipe, PortAudio's queue)."""
    import anyio
    import numpy as np

    rate = SAMPLE_RATE
    size, settle, ahead = (int(rate * s) * 2 for s in (BLOCK_S, SETTLE_S, AHEAD_S))
    sources = (a, b)
    latency = tuple(_LATENCY.get(source, 0.0) for source in sources)
    buffers = (bytearray(), bytearray())
    received = [0, 0]  # bytes from each since it started
    #: When each one's first sample was captured: the soonest any block implies (a block
    #: is never early, but often late: the event loop busy, a fragment handed in pieces).
    started = [math.inf, math.inf]
    lined_up = False
    over: list[BaseException] = []  # the source that ended or failed first
    arrived = [anyio.Event()]

    def ready() -> bool:
        """A block of both is in (after lining the two up, once, when both have settled)."""
        nonlocal lined_up
        if not lined_up:
            if min(received) < settle:
                return False
            later = 0 if started[0] > started[1] else 1
            pad = round((started[later] - started[1 - later]) * rate) * 2
            buffers[later][:0] = bytes(pad)
            lined_up = True
        return all(len(buffer) >= size for buffer in buffers)

    async def read(index: int, group: anyio.abc.TaskGroup) -> None:
        source, buffer, other = sources[index], buffers[index], buffers[1 - index]
        try:
            while not ready():
                if len(buffer) - len(other) >= ahead:  # never both: one always reads
                    # The other has stalled: this one waits for it (or for its end) and
                    # what comes meanwhile waits in this source's own buffer (parec's pipe,
                    # then the sound server's, which drops past its limit; PortAudio's
                    # queue), as it did when the mix pulled lazily. Silence for the
                    # stalled one would keep the recording going but put the two out of
                    # line when its late audio came.
                    await arrived[0].wait()
                    continue
                block = await source.__anext__()
                buffer += block
                received[index] += len(block)
                started[index] = min(started[index], time.monotonic() - latency[index]
                                     - received[index] / 2 / rate)
                arrived[0].set()
                arrived[0] = anyio.Event()
        except Exception as exc:  # StopAsyncIteration among them
            over.append(exc)
            group.cancel_scope.cancel()  # the other's block in flight: that source closes

    async with aclosing(a), aclosing(b):  # either ending (or failing) stops the other
        while True:
            if not ready():
                async with anyio.create_task_group() as group:
                    for index in (0, 1):
                        group.start_soon(read, index, group)
            if over and not isinstance(over[0], StopAsyncIteration):
                raise over[0]
            while ready():
                xs, ys = (np.frombuffer(bytes(buffer[:size]), dtype="<i2").astype(np.int32)
                          for buffer in buffers)
                for buffer in buffers:
                    del buffer[:size]
                yield np.clip(xs + ys, -32768, 32767).astype("<i2").tobytes()
            if over:
                return
