"""Push-to-talk: the utterance's end is found (a pause, the user, a limit), a missing
microphone is a clear error, and the transcript reaches the operator only in the modes
that plan (off: the microphone is never opened; listen-only: logged as context)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from adjutant.testing import on_terminal
from adjutant_stt import NoInputDevice, _record
from adjutant_stt._record import Endpoint, file_chunks, record_utterance

ADJUTANT = [sys.executable, "-m", "adjutant.cli"]


def cli(*args: str, home: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "ADJUTANT_HOME": str(home)}
    return subprocess.run([*ADJUTANT, *args], capture_output=True, text=True, env=env,
                          cwd=cwd, timeout=900, check=False, stdin=subprocess.DEVNULL)


def test_a_pause_after_speech_ends_the_utterance(tmp_path: Path, say: Callable[..., Path]) -> None:
    audio = say("List Python processes", tmp_path / "a.wav")
    recording = record_utterance(file_chunks(str(audio), realtime=False, tail_silence_s=5))
    assert recording.why == "silence"
    assert recording.heard_speech
    # stopped about 0.8 s into the 5 s of silence, not at the end of the stream
    assert recording.samples.size / 16_000 < 1.6 + 2.5


def test_silence_gives_up_without_speech() -> None:
    import numpy as np

    chunks = iter([np.zeros(1600, dtype=np.float32)] * 200)
    recording = record_utterance(chunks, endpoint=Endpoint(no_speech_s=2))
    assert (recording.why, recording.heard_speech) == ("no speech", False)
    assert recording.samples.size / 16_000 == pytest.approx(2.1, abs=0.31)


def test_the_user_stops_the_recording(tmp_path: Path, say: Callable[..., Path]) -> None:
    audio = say("one two three four five six", tmp_path / "a.wav")
    stop = threading.Event()
    chunks = file_chunks(str(audio), realtime=False)

    def then_stop() -> object:
        for index, chunk in enumerate(chunks):
            if index == 8:
                stop.set()
            yield chunk
    recording = record_utterance(then_stop(), stop)
    assert recording.why == "stopped"
    assert recording.samples.size == 9 * 1600


def test_no_microphone_is_a_clear_error() -> None:
    try:
        import sounddevice
        sounddevice.query_devices(kind="input")
    except Exception:
        pass
    else:
        pytest.skip("this machine has a microphone")
    with pytest.raises(NoInputDevice, match=r"no (microphone|audio input)") as caught:
        next(_record.microphone_chunks(threading.Event()))
    assert "adjutant transcribe FILE" in caught.value.hint


def test_no_portaudio_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "sounddevice", None)
    with pytest.raises(NoInputDevice, match="PortAudio") as caught:
        next(_record.microphone_chunks(threading.Event()))
    assert "libportaudio2" in caught.value.hint


def test_listen_without_a_microphone_says_so(tmp_path: Path) -> None:
    try:
        import sounddevice
        sounddevice.query_devices(kind="input")
    except Exception:
        pass
    else:
        pytest.skip("this machine has a microphone")
    done = cli("listen", "--non-interactive", home=tmp_path, cwd=tmp_path)
    assert done.returncode == 1
    assert "no microphone" in done.stderr or "no audio input" in done.stderr
    assert "Traceback" not in done.stderr


def test_off_never_opens_the_microphone(tmp_path: Path, say: Callable[..., Path]) -> None:
    assert cli("mode", "off", home=tmp_path, cwd=tmp_path).returncode == 0
    audio = say("List Python processes", tmp_path / "a.wav")
    done = cli("listen", "--audio", str(audio), "--json", home=tmp_path, cwd=tmp_path)
    assert done.returncode == 4
    assert "not listening" in done.stderr
    assert "heard:" not in done.stderr
    assert json.loads(done.stdout) == {"status": "off", "transcript": ""}


def test_listen_only_logs_the_transcript_and_plans_nothing(
        tmp_path: Path, say: Callable[..., Path]) -> None:
    assert cli("mode", "listen-only", home=tmp_path, cwd=tmp_path).returncode == 0
    audio = say("Delete every file in my home folder", tmp_path / "a.wav")
    done = cli("listen", "--audio", str(audio), "--json", home=tmp_path, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    said = json.loads(done.stdout)
    assert said["status"] == "context"
    assert "delete" in said["transcript"].lower()
    assert "not planned" in done.stderr
    status = json.loads(cli("status", "--json", home=tmp_path, cwd=tmp_path).stdout)
    assert status["last_tasks"] == []  # no run: nothing reached the planner
    records = [json.loads(line)["body"] for line in cli(
        "log", "tail", "--json", home=tmp_path, cwd=tmp_path).stdout.splitlines()]
    assert [r["kind"] for r in records] == ["mode", "event"]  # no prompt, no plan
    assert records[1]["source"] == "speech"
    assert records[1]["text"] == said["transcript"]  # recorded as context


def test_a_bad_recording_stops_listen_before_anything(tmp_path: Path) -> None:
    (tmp_path / "bad.wav").write_bytes(os.urandom(5000))
    done = cli("listen", "--audio", str(tmp_path / "bad.wav"), home=tmp_path, cwd=tmp_path)
    assert done.returncode == 1
    assert "is not audio" in done.stderr


def test_ctrl_t_in_chat_listens_and_the_session_goes_on(tmp_path: Path) -> None:
    """In a real terminal: Ctrl-T types /talk; with no microphone that is said, and the
    next prompt comes back."""
    pexpect = pytest.importorskip("pexpect")
    try:
        import sounddevice
        sounddevice.query_devices(kind="input")
    except Exception:
        pass
    else:
        pytest.skip("this machine has a microphone")
    env = {**os.environ, "ADJUTANT_HOME": str(tmp_path)}
    chat = on_terminal(sys.executable, ["-m", "adjutant.cli", "chat"], env=env,
                       cwd=str(tmp_path), encoding="utf-8", timeout=60)
    try:
        chat.expect("> ")
        chat.sendcontrol("t")
        chat.expect("listening")
        assert chat.expect(["no microphone", "no audio input"]) in (0, 1)
        chat.expect("> ")
        chat.sendline("/quit")
        chat.expect(pexpect.EOF)
    finally:
        chat.close(force=True)


def test_a_whole_push_to_talk_recording_is_heard_entire_and_at_once(
        tmp_path: Path, say: Callable[..., Path]) -> None:
    """A dock's recording ends when the button is released: a pause inside it must not
    cut it (as it ends a stand-in for the microphone), and it is not fed at speaking
    pace. Silence is still "heard nothing"."""
    import time
    import wave

    import numpy as np

    from adjutant_stt._errors import HeardNothing
    from adjutant_stt._listen import record, utterance

    first, second = (say(text, tmp_path / f"{i}.wav") for i, text in
                     enumerate(["List the files here", "then show the git status"]))
    frames, rate = [], 0
    for part in (first, second):
        with wave.open(str(part)) as w:
            rate = w.getframerate()
            frames.append(np.frombuffer(w.readframes(w.getnframes()), dtype=np.int16))
    pause = np.zeros(int(rate * 1.5), dtype=np.int16)  # longer than listen.silence_s
    both = tmp_path / "both.wav"
    with wave.open(str(both), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(np.concatenate([frames[0], pause, frames[1]]).tobytes())

    cut = utterance(str(both)).text.lower()  # as a microphone: the pause ends it
    assert "file" in cut and "git" not in cut
    start = time.perf_counter()
    whole = utterance(str(both), whole=True).text.lower()
    took = time.perf_counter() - start
    assert "file" in whole and "git" in whole and "status" in whole
    print(f"whole recording of {record(str(both), whole=True).size / 16000:.1f} s heard "
          f"in {took:.2f} s")
    silence = tmp_path / "silence.wav"
    with wave.open(str(silence), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(16000)
        w.writeframes(np.zeros(16000 * 2, dtype=np.int16).tobytes())
    with pytest.raises(HeardNothing, match="no speech in the recording"):
        record(str(silence), whole=True)
