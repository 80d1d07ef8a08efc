"""Test kit: the real ``adjutant`` command in a clean environment, and PortAudio on
ALSA's null device (CI has no sound card, but PortAudio, ALSA and the callback run)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ADJUTANT = str(Path(sys.executable).with_name("adjutant"))
NULL_ALSA = "</usr/share/alsa/alsa.conf>\npcm.!default {\n    type null\n}\n"


def portaudio() -> bool:
    import ctypes.util

    return ctypes.util.find_library("portaudio") is not None and Path(
        "/usr/share/alsa/alsa.conf").exists()


needs_portaudio = pytest.mark.skipif(not portaudio(), reason="no PortAudio/ALSA here "
                                     "(apt-get install libportaudio2)")


def env(tmp_path: Path, **extra: str) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("ADJUTANT_")}
    return {**base, "ADJUTANT_HOME": str(tmp_path / "home"), "ADJUTANT_LOAD_PLUGINS": "tts",
            "XDG_CACHE_HOME": str(tmp_path / "cache"), **extra}


def speak(tmp_path: Path, *args: str, **extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([ADJUTANT, *args], env=env(tmp_path, **extra), cwd=tmp_path,
                          capture_output=True, text=True, timeout=120, check=False)


def null_device(tmp_path: Path) -> str:
    conf = tmp_path / "asound.conf"
    conf.write_text(NULL_ALSA)
    return str(conf)
