"""Test kit for voice: speech made by espeak-ng, and an audio output that plays in real
time where there is no sound card.

ALSA's null device swallows audio as fast as it is written, so an utterance would end
before a test could pause or stop it. `paced_speaker` makes ALSA's default output a
``file`` plugin writing into a FIFO that a thread drains at 48,000 bytes/s (24 kHz mono
16-bit, the default voice's rate: real time), so PortAudio, ALSA and adjutant-tts's
callback run as on a desktop and an utterance lasts as long as it sounds.
"""

from __future__ import annotations

import contextlib
import ctypes.util
import os
import shutil
import subprocess
import sys
import threading
import wave
from collections.abc import Iterator
from pathlib import Path

import pytest

PACED_ALSA = """</usr/share/alsa/alsa.conf>
pcm.!default {{
    type file
    slave.pcm "null"
    file "{fifo}"
    format "raw"
}}
"""
BYTES_PER_S = 48_000


def espeak(text: str, path: Path, lead_ms: int = 0) -> Path:
    """``text`` spoken by espeak-ng into a WAV (22.05 kHz mono 16-bit), after
    ``lead_ms`` of silence: chromium's fake microphone starts playing its file when the
    device opens, before the page captures, so a loaded machine would miss the start."""
    program = shutil.which("espeak-ng")
    if program is None:
        pytest.fail("espeak-ng is missing: ./dev installs it (apt-get install espeak-ng)")
    subprocess.run([program, "-v", "en-us", "-w", str(path), text], check=True, timeout=60)
    if lead_ms:
        with wave.open(str(path)) as spoken:
            params, frames = spoken.getparams(), spoken.readframes(spoken.getnframes())
        silence = b"\0" * (params.sampwidth * params.nchannels
                            * (params.framerate * lead_ms // 1000))
        with wave.open(str(path), "wb") as padded:
            padded.setparams(params)
            padded.writeframes(silence + frames)
    return path


def has_portaudio() -> bool:
    return ctypes.util.find_library("portaudio") is not None and Path(
        "/usr/share/alsa/alsa.conf").exists()


def _restart_portaudio() -> None:
    """PortAudio reads ALSA's configuration when it starts: start it again if this
    process started it already (another test may have)."""
    sounddevice = sys.modules.get("sounddevice")
    if sounddevice is not None:
        sounddevice._terminate()
        sounddevice._initialize()


@contextlib.contextmanager
def paced_speaker(folder: Path) -> Iterator[None]:
    """ALSA's default output plays in real time (see the module's docstring) while in
    the block; leave the block only after the kernel that plays has stopped."""
    fifo = folder / "speaker.fifo"
    os.mkfifo(fifo, 0o600)
    conf = folder / "asound.conf"
    conf.write_text(PACED_ALSA.format(fifo=fifo))
    # read-write: a writer's open never blocks and the reader never sees end-of-file
    fd = os.open(fifo, os.O_RDWR | os.O_NONBLOCK)
    done = threading.Event()

    def drain() -> None:
        step = BYTES_PER_S // 10
        while not done.wait(0.1):
            with contextlib.suppress(BlockingIOError):
                os.read(fd, step)

    reader = threading.Thread(target=drain, name="paced-speaker", daemon=True)
    reader.start()
    before = os.environ.get("ALSA_CONFIG_PATH")
    os.environ["ALSA_CONFIG_PATH"] = str(conf)
    _restart_portaudio()
    try:
        yield
    finally:
        done.set()
        reader.join()
        if before is None:
            os.environ.pop("ALSA_CONFIG_PATH", None)
        else:
            os.environ["ALSA_CONFIG_PATH"] = before
        _restart_portaudio()
        os.close(fd)
