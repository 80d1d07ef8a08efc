"""The recorder: audio from a file or a pipe to a 16 kHz mono WAV as it arrives, and a
recording killed mid-write that plays up to the kill once repaired."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import anyio
import numpy as np
import pytest
import soundfile as sf

from adjutant_copilot_agent import Recorder, list_sessions
from adjutant_copilot_agent._sources import RecorderError, from_file, from_stream, monitor_source
from adjutant_copilot_agent._wav import HEADER, extract_chunk, repair

ADJUTANT = Path(sys.executable).with_name("adjutant")


def _tone(path: Path, seconds: float, rate: int = 44_100, channels: int = 2) -> None:
    t = np.arange(int(seconds * rate)) / rate
    wave = 0.3 * np.sin(2 * np.pi * 440 * t) * np.linspace(0.2, 1.0, len(t))
    sf.write(str(path), np.stack([wave] * channels, axis=1), rate, subtype="PCM_16")


async def _record_file(home: Path, source: Path) -> tuple[Recorder, Path]:
    recorder = Recorder(home, "test")
    await recorder.record(from_file(source, speed=0, sleep=anyio.sleep))
    return recorder, recorder.audio


@pytest.mark.anyio
async def test_a_file_is_recorded_as_16khz_mono_and_plays(tmp_path: Path) -> None:
    _tone(tmp_path / "in.wav", 3.0)
    recorder, audio = await _record_file(tmp_path / "home", tmp_path / "in.wav")
    data, rate = sf.read(str(audio), dtype="int16")
    assert rate == 16_000 and data.ndim == 1
    assert abs(len(data) - 3 * 16_000) <= 2
    assert np.abs(data).max() > 5000  # the tone, not silence
    assert recorder.session is not None and recorder.session.status == "stopped"
    assert [s.status for s in list_sessions(tmp_path / "home")] == ["stopped"]


@pytest.mark.anyio
async def test_a_pipe_takes_a_wav_stream_or_raw_pcm(tmp_path: Path) -> None:
    _tone(tmp_path / "in.wav", 2.0, rate=22_050, channels=1)
    for payload in ((tmp_path / "in.wav").read_bytes(),
                    np.zeros(32_000, dtype="<i2").tobytes()):
        (tmp_path / "pipe").write_bytes(payload)
        with (tmp_path / "pipe").open("rb") as stream:
            recorder = Recorder(tmp_path / "home", "pipe")
            done = await recorder.record(from_stream(stream, speed=0, sleep=anyio.sleep))
        assert abs(done.seconds - 2.0) < 0.01


@pytest.mark.anyio
async def test_what_is_not_audio_is_refused_clearly(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("hello")
    with pytest.raises(RecorderError, match=r"cannot read .*notes\.txt as audio"):
        await from_file(tmp_path / "notes.txt", speed=0, sleep=anyio.sleep).__anext__()


def test_system_audio_without_a_sound_server_is_a_clear_error(tmp_path: Path) -> None:
    fake = tmp_path / "pactl"  # a pactl whose server does not answer, as here
    fake.write_text("#!/bin/sh\necho 'Connection failure: Connection refused' >&2\nexit 1\n")
    fake.chmod(0o755)
    with pytest.raises(RecorderError, match="no system audio here: no sound server answers"):
        monitor_source(str(fake))
    out = subprocess.run([str(ADJUTANT), "record", "--system"], capture_output=True, text=True,
                         env={**os.environ, "ADJUTANT_HOME": str(tmp_path / "home")},
                         timeout=60)
    assert out.returncode == 1
    assert "no system audio here" in out.stderr
    assert not list((tmp_path / "home").glob("recordings/*"))  # nothing started


def test_a_recording_killed_mid_write_plays_up_to_the_kill(tmp_path: Path) -> None:
    """SIGKILL the recorder while it writes (real time): the next look at the sessions
    repairs the header from the file's length; the file plays, holds exactly what was
    recorded up to the kill (sample for sample), and the session says interrupted."""
    home = tmp_path / "home"
    _tone(tmp_path / "in.wav", 60.0)
    env = {**os.environ, "ADJUTANT_HOME": str(home)}
    process = subprocess.Popen([str(ADJUTANT), "record", "--from", str(tmp_path / "in.wav")],
                               env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        audio: Path | None = None
        while time.monotonic() < deadline:
            found = list(home.glob("recordings/*/audio.wav"))
            if found and found[0].stat().st_size > HEADER + 3 * 32_000:
                audio = found[0]
                break
            time.sleep(0.05)
        assert audio is not None, process.stderr.read() if process.poll() is not None else ""
        time.sleep(0.37)  # mid-second: part of the last second is not in the header yet
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=10)
    finally:
        if process.poll() is None:
            process.kill()
        process.stdout.close()  # type: ignore[union-attr]
        process.stderr.close()  # type: ignore[union-attr]
    on_disk = (audio.stat().st_size - HEADER) // 2
    [session] = list_sessions(home)  # what the next start does
    assert session.status == "interrupted"
    data, rate = sf.read(str(audio), dtype="int16")
    assert rate == 16_000 and len(data) == on_disk and len(data) >= 3 * 16_000
    reference = anyio.run(_record_file, tmp_path / "ref", tmp_path / "in.wav")[1]
    full, _ = sf.read(str(reference), dtype="int16")
    assert np.array_equal(data, full[:len(data)])
    assert session.seconds == pytest.approx(len(data) / 16_000)
    chunk = extract_chunk(audio, 30, 5)  # the agent reads it as any recording
    assert chunk.seconds == pytest.approx(min(35.0, len(data) / 16_000))


def test_repair_cuts_a_torn_sample_and_fixes_the_sizes(tmp_path: Path) -> None:
    path = tmp_path / "a.wav"
    path.write_bytes(b"RIFF\0\0\0\0WAVEfmt " + bytes(HEADER - 16) + bytes(1001))
    assert repair(path) == 1000
    data, rate = sf.read(str(path), dtype="int16")
    assert rate == 16_000 and len(data) == 500
