"""Opt in to the Adjutant test harness; speech made by espeak-ng (the project's setup
installs it: ./dev and .ci/run)."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.pluginmanager.import_plugin("adjutant.testing")
    config.addinivalue_line("markers", "slow: runs the embedded planning model many times "
                            "(deselect with -m 'not slow')")


def speak(text: str, path: Path, voice: str = "en-us") -> Path:
    """``text`` spoken by espeak-ng into a WAV (22.05 kHz mono)."""
    espeak = shutil.which("espeak-ng")
    if espeak is None:
        pytest.fail("espeak-ng is missing: ./dev installs it (apt-get install espeak-ng)")
    subprocess.run([espeak, "-v", voice, "-w", str(path), text], check=True, timeout=60)
    return path


@pytest.fixture
def say() -> Callable[..., Path]:
    """`speak`, for tests (their modules cannot import this conftest)."""
    return speak


@pytest.fixture
def hello_wav(tmp_path: Path) -> Path:
    return speak("hello", tmp_path / "hello.wav")
