"""The system's sound (``--system``: the default sink's monitor, read with parec) and the
microphone (``--mic``: sounddevice → PortAudio → ALSA → the pulse plugin), recorded from
a real sound server: a private PulseAudio started for each test, with two null sinks.
"call" is the default sink (what the machine plays); "room"'s monitor is the default
source (what the microphone hears). espeak-ng's sentences are played into them with
paplay, `adjutant record` records in another process, and the real Whisper hears the
recording.

Nothing here waits a fixed time: each step waits for the recording to have grown (it
grows in real time) or for a process to end, with generous deadlines. The last test
drives `mix` with sources of its own, timed in real time, without a sound server."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import AsyncGenerator, Iterator
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from adjutant_copilot_agent import _sources, list_sessions
from adjutant_copilot_agent._sources import RecorderError, mix, resample
from adjutant_copilot_agent._wav import BYTES_PER_SECOND, HEADER

ADJUTANT = str(Path(sys.executable).with_name("adjutant"))
CALL = "The blue submarine leaves the harbor tomorrow morning."
ROOM = "Please send the invoice to the accountant before Friday."
#: Words of each that Whisper base hears in espeak-ng's voice (it may miss one).
CALL_WORDS = {"submarine", "leaves", "tomorrow", "morning"}
ROOM_WORDS = {"invoice", "accountant", "before", "friday"}


class SoundServer:
    """A private PulseAudio daemon: its own socket, runtime and state folders, no
    autospawn, nothing of the machine's (the user's server, cookie or config) used."""

    def __init__(self, folder: Path) -> None:
        folder.mkdir()
        self.folder = folder
        socket = folder / "native"
        (folder / "client.conf").write_text(f"autospawn = no\ndefault-server = unix:{socket}\n")
        #: What a client (pactl, paplay, adjutant) needs to reach this server only.
        self.env = {**os.environ, "PULSE_SERVER": f"unix:{socket}",
                    "PULSE_CLIENTCONFIG": str(folder / "client.conf"),
                    "PULSE_COOKIE": str(folder / "cookie")}
        daemon_env = {**self.env, "HOME": str(folder), "XDG_CONFIG_HOME": str(folder / "config"),
                      "XDG_RUNTIME_DIR": str(folder), "PULSE_RUNTIME_PATH": str(folder / "run"),
                      "PULSE_STATE_PATH": str(folder / "state")}
        self.log = (folder / "daemon.log").open("wb")
        self.process = subprocess.Popen(
            ["pulseaudio", "-n", "--daemonize=no", "--exit-idle-time=-1", "--use-pid-file=no",
             "--realtime=no", "--high-priority=no", "--disable-shm=yes", "--log-target=stderr",
             "-L", f"module-native-protocol-unix socket={socket} auth-anonymous=1",
             "-L", "module-null-sink sink_name=call", "-L", "module-null-sink sink_name=room"],
            env=daemon_env, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 30
        while self.pactl("info").returncode != 0:
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                pytest.fail(f"the private PulseAudio did not start: "
                            f"{(folder / 'daemon.log').read_text(errors='replace')}")
            time.sleep(0.1)
        for command in (("set-default-sink", "call"), ("set-default-source", "room.monitor")):
            assert self.pactl(*command).returncode == 0
        # The room is never idle, as a real microphone never is: silence plays into it.
        # (A null sink that starts playing from idle loses its first ~0.3 s to a capture
        # stream of PortAudio's 1 s latency through ALSA's pulse plugin; parec's 100 ms
        # stream of the idle "call" loses nothing.)
        self.hum = subprocess.Popen(["pacat", "--device=room", "--raw", "--format=s16le",
                                     "--rate=16000", "--channels=1", "/dev/zero"],
                                    env=self.env, stderr=subprocess.DEVNULL)

    def pactl(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["pactl", *args], env=self.env, capture_output=True, text=True,
                              timeout=30, check=False)

    def play(self, *plays: tuple[str, Path]) -> None:
        """Each ``(sink, wav)`` played into its sink, at the same time; returns once
        they are played."""
        players = [subprocess.Popen(["paplay", f"--device={sink}", str(wav)], env=self.env)
                   for sink, wav in plays]
        for player in players:
            assert player.wait(timeout=60) == 0

    def kill(self) -> None:
        """SIGKILL: the server dies as a crashed one does, saying nothing to its clients."""
        self.process.kill()
        self.process.wait(timeout=30)

    def stop(self) -> None:
        for process in (getattr(self, "hum", None), self.process):
            if process is not None and process.poll() is None:
                process.terminate()
                try:
                    process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait(timeout=30)
        self.log.close()


@pytest.fixture
def server(tmp_path: Path) -> Iterator[SoundServer]:
    if shutil.which("pulseaudio") is None:
        pytest.skip("the pulseaudio binary is missing (./dev installs it: apt-get install "
                    "pulseaudio pulseaudio-utils libasound2-plugins)")
    missing = [tool for tool in ("pactl", "parec", "paplay", "pacat") if not shutil.which(tool)]
    if missing:  # a dependency of Debian's pulseaudio: a broken install, not a choice
        pytest.fail(f"{', '.join(missing)} missing: apt-get install pulseaudio-utils")
    running = SoundServer(tmp_path / "pulse")
    try:
        yield running
    finally:
        running.stop()


def speak(text: str, path: Path) -> Path:
    subprocess.run(["espeak-ng", "-v", "en-us", "-w", str(path), text], check=True, timeout=60)
    return path


def heard(samples: np.ndarray) -> str:
    """What the real Whisper (adjutant-stt's base model) hears in 16 kHz int16 samples."""
    from adjutant_stt import transcribe

    text: str = transcribe(samples.astype(np.float32) / 32768, beam_size=1,
                           temperature=(0.0,), vocabulary=None).text
    return text.lower()


def hears(text: str, words: set[str]) -> bool:
    """At least all but one of ``words`` are in what was heard."""
    return len({w for w in words if w in text}) >= len(words) - 1


def match(recorded: np.ndarray, played: Path) -> tuple[float, float]:
    """Where what was played (resampled to 16 kHz as the recorder does) lines up best
    with the recording, in seconds from its start, and how well: the peak normalised
    cross-correlation over that stretch, about 1 when the recording holds it as played,
    near 0 for noise or a stretched copy."""
    data, rate = sf.read(str(played), dtype="float32")
    ref = resample(data, rate).astype(np.float64)
    rec = recorded.astype(np.float64)
    if len(rec) < len(ref):
        return 0.0, 0.0
    size = 1 << int(np.ceil(np.log2(len(rec) + len(ref))))
    corr = np.fft.irfft(np.fft.rfft(rec, size) * np.conj(np.fft.rfft(ref, size)), size)
    lag = int(np.argmax(np.abs(corr[: len(rec) - len(ref) + 1])))
    window = rec[lag: lag + len(ref)]
    return lag / 16_000, float(abs(corr[lag]) / (np.linalg.norm(ref) * np.linalg.norm(window)
                                                 + 1e-9))


def likeness(recorded: np.ndarray, played: Path) -> float:
    """How well what was played lines up with the recording (`match`)."""
    return match(recorded, played)[1]


def band(samples: np.ndarray, low: float, high: float) -> np.ndarray:
    """``samples`` (16 kHz) with what is outside ``low`` to ``high`` Hz taken out."""
    spectrum = np.fft.rfft(samples.astype(np.float64))
    hz = np.fft.rfftfreq(len(samples), 1 / 16_000)
    spectrum[(hz < low) | (hz > high)] = 0
    return np.fft.irfft(spectrum, len(samples))


def burst(path: Path, low: float, high: float) -> Path:
    """A second of noise between ``low`` and ``high`` Hz: it lines up with its copy in a
    recording at one lag only, to a sample, and another band's not at all."""
    noise = band(np.random.default_rng(int(low)).standard_normal(16_000), low, high)
    sf.write(str(path), 0.3 * noise / np.abs(noise).max(), 16_000, subtype="PCM_16")
    return path


def data_seconds(audio: Path) -> float:
    return max(0, audio.stat().st_size - HEADER) / BYTES_PER_SECOND


class Recording:
    """``adjutant record FLAGS`` in its own process, against ``server``."""

    def __init__(self, tmp_path: Path, server: SoundServer, *flags: str) -> None:
        self.home = tmp_path / "home"
        self.env = {**server.env, "ADJUTANT_HOME": str(self.home), "NO_COLOR": "1"}
        self.process = subprocess.Popen([ADJUTANT, "record", *flags], env=self.env,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                        text=True)
        self.audio = self._wait_for_the_file()

    def _wait_for_the_file(self) -> Path:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and self.process.poll() is None:
            found = list(self.home.glob("recordings/*/audio.wav"))
            if found:
                return found[0]
            time.sleep(0.05)
        self.process.kill()
        _, err = self.process.communicate(timeout=30)
        pytest.fail(f"the recording did not start: {err}")

    def grow(self, seconds: float) -> None:
        """Wait until ``seconds`` more of audio are on disk (it grows in real time)."""
        goal = data_seconds(self.audio) + seconds
        deadline = time.monotonic() + 60 + seconds * 3
        while data_seconds(self.audio) < goal:
            assert self.process.poll() is None, self.process.communicate()[1]
            assert time.monotonic() < deadline, f"the recording stalled: {self.audio}"
            time.sleep(0.05)

    def stop(self) -> tuple[int, str]:
        """``adjutant record --stop`` from another process; the recorder's exit code and
        what it said."""
        stopped = subprocess.run([ADJUTANT, "record", "--stop"], env=self.env,
                                 capture_output=True, text=True, timeout=120, check=False)
        assert stopped.returncode == 0, stopped.stderr
        return self.finish()

    def finish(self) -> tuple[int, str]:
        try:
            _, err = self.process.communicate(timeout=60)
        finally:
            if self.process.poll() is None:
                self.process.kill()
                self.process.communicate()
        return self.process.returncode, err

    def samples(self) -> np.ndarray:
        """The recording, read as any WAV: 16 kHz mono 16-bit whose header describes every
        byte on disk."""
        data, rate = sf.read(str(self.audio), dtype="int16")
        info = sf.info(str(self.audio))
        assert (rate, info.channels, info.subtype) == (16_000, 1, "PCM_16")
        assert len(data) * 2 + HEADER == self.audio.stat().st_size  # the header says all
        return np.asarray(data)


def record_while_playing(tmp_path: Path, server: SoundServer, flags: tuple[str, ...],
                         *plays: list[tuple[str, Path]]) -> tuple[Recording, np.ndarray]:
    """Each list of ``(sink, wav)`` played at once, one list after the other, while
    ``adjutant record FLAGS`` records; then ``adjutant record --stop``."""
    recording = Recording(tmp_path, server, *flags)
    recording.grow(0.5)  # the source is live: what is played now is heard
    for together in plays:
        server.play(*together)
    recording.grow(2.0)  # beyond the capture's latency: the last words are on disk
    code, err = recording.stop()
    assert code == 0, err
    assert "recorded" in err
    [session] = list_sessions(recording.home)
    assert session.status == "stopped"
    samples = recording.samples()
    assert session.seconds == pytest.approx(len(samples) / 16_000)
    return recording, samples


def _records_one_side(tmp_path: Path, server: SoundServer, flag: str, wanted: str) -> None:
    """``adjutant record FLAG`` while one sentence plays into each sink: the one played
    into ``wanted`` is in the recording as played (its samples line up, Whisper hears
    its words); the other is not."""
    said = {"call": (CALL, CALL_WORDS), "room": (ROOM, ROOM_WORDS)}
    other = "room" if wanted == "call" else "call"
    wav = {sink: speak(said[sink][0], tmp_path / f"{sink}.wav") for sink in said}
    _, samples = record_while_playing(tmp_path, server, (flag,),
                                      [(wanted, wav[wanted]), (other, wav[other])])
    assert likeness(samples, wav[wanted]) > 0.95
    assert likeness(samples, wav[other]) < 0.3
    text = heard(samples)
    assert hears(text, said[wanted][1]), text
    assert not hears(text, said[other][1]), text


def test_system_records_what_the_machine_plays(tmp_path: Path, server: SoundServer) -> None:
    """``--system``: the default sink ("call"), not "room" (the microphone's side)."""
    _records_one_side(tmp_path, server, "--system", "call")


def test_the_microphone_records_what_the_room_hears(tmp_path: Path, server: SoundServer) -> None:
    """``--mic``: the default input device, through sounddevice, PortAudio and ALSA's
    pulse plugin, is the default source ("room"'s monitor), not "call" (the machine's
    output)."""
    _records_one_side(tmp_path, server, "--mic", "room")


def test_system_and_mic_are_mixed_into_one_recording(tmp_path: Path,
                                                     server: SoundServer) -> None:
    """``--system --mic``: one sentence played into "call" and another into "room" are
    both in the one recording, each as played (neither stretched, squeezed nor torn
    by the two sources' different block sizes); and they are lined up in time: a burst
    of noise played into "call" and another into "room" at the same moment start
    within 0.3 s of each other in the recording (they were 2.5 s apart when the mix
    lined the sources up by their first samples)."""
    call = speak(CALL, tmp_path / "call.wav")
    room = speak(ROOM, tmp_path / "room.wav")
    low, high = (300, 1_800), (2_200, 3_800)  # bursts apart in pitch: each found alone
    call_burst = burst(tmp_path / "call-burst.wav", *low)
    room_burst = burst(tmp_path / "room-burst.wav", *high)
    _, samples = record_while_playing(tmp_path, server, ("--system", "--mic"),
                                      [("call", call_burst), ("room", room_burst)],
                                      [("call", call)], [("room", room)])
    (call_at, call_like), (room_at, room_like) = (match(band(samples, *low), call_burst),
                                                  match(band(samples, *high), room_burst))
    found = (f"call's at {call_at:.3f} s ({call_like:.2f}), "
             f"room's at {room_at:.3f} s ({room_like:.2f})")
    assert abs(call_at - room_at) < 0.3, found
    # Found, not a chance peak (about 0.1). A sound started into a sink that is already
    # playing loses up to its first 0.3 s (the sink rendered ahead without it): the rest
    # still lines up where it was played, at the square root of the part kept.
    assert min(call_like, room_like) > 0.6, found
    assert likeness(samples, call) > 0.95
    assert likeness(samples, room) > 0.95
    text = heard(samples)
    assert hears(text, CALL_WORDS), text
    assert hears(text, ROOM_WORDS), text


@pytest.mark.parametrize("flags", [("--system",), ("--mic",), ("--system", "--mic")],
                         ids=["system", "mic", "system+mic"])
def test_the_sound_server_dying_mid_recording_stops_it_clearly_and_keeps_the_audio(
        tmp_path: Path, server: SoundServer, flags: tuple[str, ...]) -> None:
    """The sound server killed (SIGKILL) mid-recording: the recorder stops by itself
    (neither hangs nor ends as if stopped), exit 1 with an error that says the source
    stopped and what was kept; the recording is a valid WAV holding every byte written
    before the kill, the sentence played before it among them; the session is stopped."""
    sentence = speak(CALL, tmp_path / "said.wav")
    sink = "room" if flags == ("--mic",) else "call"
    recording = Recording(tmp_path, server, *flags)
    recording.grow(0.5)
    server.play((sink, sentence))
    recording.grow(2.0)
    before = data_seconds(recording.audio)
    server.kill()
    code, err = recording.finish()
    assert code == 1, err
    assert "error:" in err and "stopped" in err and "sound server" in err, err
    assert "Traceback" not in err, err
    [session] = list_sessions(recording.home)
    assert session.status == "stopped"
    samples = recording.samples()
    assert session.seconds == pytest.approx(len(samples) / 16_000)
    assert session.seconds >= before  # nothing written before the kill is lost
    assert f"{session.seconds:.1f} s" in err  # it says what it kept
    assert likeness(samples, sentence) > 0.95
    assert hears(heard(samples), CALL_WORDS)


class Live:
    """A live source without a sound server, for `mix`: it starts capturing ``delay``
    seconds after ``t0`` and hands over blocks of ``block_s`` as their last sample is
    in (none for ``stall`` seconds from ``stall_at``: a device that hangs, then hands
    over what it kept at once), each click (time from ``t0``) at the sample captured then, of
    ``level``; it fails with a `RecorderError` at ``fail_at``."""

    def __init__(self, t0: float, *, delay: float, block_s: float, level: int,
                 clicks: tuple[float, ...], stall_at: float = 1e9, stall: float = 0.0,
                 fail_at: float = 1e9) -> None:
        self.t0, self.delay, self.block, self.level = t0, delay, int(16_000 * block_s), level
        self.clicks, self.stall_at, self.stall, self.fail_at = clicks, stall_at, stall, fail_at
        self.began, self.taken, self.closed = 0.0, 0, False
        #: The most a block was taken after it was in (what waited in its own buffer).
        self.late = 0.0

    async def blocks(self) -> AsyncGenerator[bytes, None]:
        import anyio

        await anyio.sleep(max(0.0, self.t0 + self.delay - time.monotonic()))
        self.began = time.monotonic()
        try:
            while True:
                block = np.zeros(self.block, dtype="<i2")
                for click in self.clicks:
                    at = round((self.t0 + click - self.began) * 16_000) - self.taken
                    if 0 <= at < self.block:
                        block[at] = self.level
                self.taken += self.block
                end = self.began + self.taken / 16_000 - self.t0
                due = max(end, self.stall_at + self.stall) if end > self.stall_at else end
                await anyio.sleep(max(0.0, due - (time.monotonic() - self.t0)))
                self.late = max(self.late, time.monotonic() - self.t0 - due)
                if end >= self.fail_at:
                    raise RecorderError("the fake source stopped")
                yield block.tobytes()
        finally:
            self.closed = True


@pytest.mark.anyio
async def test_mix_lines_up_sources_that_start_apart_caps_a_stall_and_ends_with_either(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """`mix` without a sound server: a source of 0.1 s blocks, and one of 0.5 s blocks
    started 0.7 s later; a click captured by both at the same moment is at the same
    sample of the mix (to 0.05 s), before and after the second stalls for 1.5 s, during
    which the first is not read more than `AHEAD_S` ahead (its own buffer keeps the rest);
    the second failing ends the mix with its error and closes the first."""
    import anyio.lowlevel

    monkeypatch.setattr(_sources, "AHEAD_S", 0.5)
    t0 = time.monotonic()
    first = Live(t0, delay=0.0, block_s=0.1, level=1_000, clicks=(1.2, 3.0))
    second = Live(t0, delay=0.7, block_s=0.5, level=8_000, clicks=(1.2, 3.0),
                  stall_at=2.5, stall=1.5, fail_at=4.5)
    out = bytearray()

    async def take() -> None:
        async for block in mix(first.blocks(), second.blocks()):
            out.extend(block)

    with pytest.raises(RecorderError, match="the fake source stopped"), anyio.fail_after(30):
        await take()
    await anyio.lowlevel.checkpoint()
    assert first.closed and second.closed
    samples = np.frombuffer(bytes(out), dtype="<i2")
    firsts = np.flatnonzero(np.isin(samples, (1_000, 9_000)))
    seconds = np.flatnonzero(np.isin(samples, (8_000, 9_000)))
    assert len(firsts) == len(seconds) == 2, (firsts, seconds)
    assert np.abs(firsts - seconds).max() < 0.05 * 16_000, (firsts, seconds)
    # Its reader waited (about the stall less AHEAD_S): read on, it would be taken at once.
    assert first.late > 0.5, first.late
