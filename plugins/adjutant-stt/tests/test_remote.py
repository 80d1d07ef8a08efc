"""A remote recognizer (adjutant-openrouter's ``openrouter``) gets a recording only when
the user names it and says yes to exactly where it goes; the default never touches the
network. The fake OpenRouter transcribes what it receives with the real local Whisper,
so a transcript proves the recording arrived; its request list proves what did not."""

from __future__ import annotations

import importlib.util
import io
import json
import os
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import adjutant_stt
from adjutant import hookimpl
from adjutant.testing import on_terminal

adjutant_openrouter = pytest.importorskip("adjutant_openrouter",
                                          reason="the remote engine is adjutant-openrouter's")
FAKE = Path(__file__).parents[2] / "adjutant-openrouter" / "tests" / "fake_openrouter.py"
ADJUTANT = [sys.executable, "-m", "adjutant.cli"]
KEY = "sk-or-v1-test"
QUESTION = (r"send this recording to openrouter \(127\.0\.0\.1:\d+, model "
            r"google/gemini-2\.5-flash\)\? It leaves this machine\. \[y/N\] ")


def fake_module() -> ModuleType:
    if not FAKE.exists():
        pytest.skip("the fake OpenRouter is in the repository, not in this distribution")
    spec = importlib.util.spec_from_file_location("stt_fake_openrouter", FAKE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def whisper_ear(audio: bytes, fmt: str) -> str:
    """The fake hears with the real embedded Whisper."""
    from faster_whisper import decode_audio

    from adjutant_stt import HeardNothing, transcribe

    try:
        return transcribe(decode_audio(io.BytesIO(audio), sampling_rate=16_000)).text
    except HeardNothing:
        return ""


@pytest.fixture
def server(request: pytest.FixtureRequest) -> Iterator[Any]:
    options = getattr(request, "param", {})
    with fake_module().FakeOpenRouter(hear=whisper_ear, **options) as fake:
        yield fake


def environment(home: Path, server: Any, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if "OPENROUTER" not in k}
    return {**env, "ADJUTANT_HOME": str(home), "OPENROUTER_API_KEY": KEY,
            "ADJUTANT_OPENROUTER_URL": server.url, **extra}


def cli(*args: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*ADJUTANT, *args], capture_output=True, text=True, env=env,
                          cwd=cwd, timeout=600, check=False, stdin=subprocess.DEVNULL)


def log_records(env: dict[str, str], cwd: Path) -> list[dict[str, Any]]:
    done = cli("log", "tail", "-n", "50", "--json", env=env, cwd=cwd)
    assert done.returncode == 0, done.stderr
    return [json.loads(line)["body"] for line in done.stdout.splitlines()]


def chats(server: Any) -> list[Any]:
    return [r for r in server.requests if r.path == "/chat/completions"]


def terminal(*args: str, env: dict[str, str], cwd: Path) -> Any:
    pytest.importorskip("pexpect")
    return on_terminal(sys.executable, ["-m", "adjutant.cli", *args], env=env,
                       cwd=str(cwd), encoding="utf-8", timeout=300)


def same_audio(sent: bytes, original: Path) -> None:
    """What the server got is the recording, decoded here and re-encoded as WAV."""
    import wave

    import numpy as np

    from adjutant_stt._transcribe import decode_file

    with wave.open(io.BytesIO(sent)) as wav:
        assert (wav.getframerate(), wav.getnchannels(), wav.getsampwidth()) == (16_000, 1, 2)
        got = np.frombuffer(wav.readframes(wav.getnframes()), dtype="<i2") / 32767
    expected = decode_file(original)
    assert got.size == expected.size
    assert float(np.max(np.abs(got - expected))) < 2 / 32767


# -- consent on a terminal ---------------------------------------------------------------

def test_transcribe_yes_on_a_terminal_sends_the_recording(
        tmp_path: Path, hello_wav: Path, server: Any) -> None:
    env = environment(tmp_path, server)
    child = terminal("transcribe", "--engine", "openrouter", str(hello_wav), env=env,
                     cwd=tmp_path)
    try:
        child.expect(QUESTION)
        child.sendline("y")
        child.expect(r"(?i)hello")
        child.expect(__import__("pexpect").EOF)
    finally:
        child.close(force=True)
    assert child.exitstatus == 0
    [(sent, fmt)] = server.audio
    assert fmt == "wav"
    same_audio(sent, hello_wav)
    records = log_records(env, tmp_path)
    consent = next(r for r in records if r["kind"] == "speech_consent")
    assert (consent["engine"], consent["given"], consent["by"]) == ("openrouter", True,
                                                                   "terminal")
    assert consent["host"] == server.url.removeprefix("http://")
    assert consent["model"] == "google/gemini-2.5-flash"
    sent_record = next(r for r in records if r["kind"] == "speech_sent")
    assert sent_record["outcome"] == "ok" and sent_record["bytes"] == len(sent)
    assert "UklGR" not in json.dumps(records)  # the audio itself (base64 "RIFF") never


def test_listen_yes_on_a_terminal_hears_through_the_remote_engine(
        tmp_path: Path, say: Callable[..., Path], server: Any) -> None:
    env = environment(tmp_path, server)
    assert cli("mode", "listen-only", env=env, cwd=tmp_path).returncode == 0
    audio = say("List Python processes", tmp_path / "a.wav")
    child = terminal("listen", "--audio", str(audio), "--engine", "openrouter", "--json",
                     env=env, cwd=tmp_path)
    try:
        child.expect(QUESTION)
        child.sendline("yes")
        child.expect("heard: ")
        child.expect(r'\{"status": "context", "transcript": "([^"]*)"\}')
        transcript = child.match.group(1)
        child.expect(__import__("pexpect").EOF)
    finally:
        child.close(force=True)
    assert child.exitstatus == 0
    assert "python" in transcript.lower() and "process" in transcript.lower()
    [(sent, _)] = server.audio
    assert len(sent) > 16_000 * 2  # more than a second of 16 kHz 16-bit audio
    records = log_records(env, tmp_path)
    kinds = [r["kind"] for r in records]
    assert kinds.index("speech_consent") < kinds.index("speech_sent") < kinds.index("event")
    assert next(r for r in records if r["kind"] == "event")["text"] == transcript


@pytest.mark.parametrize("answer", ["n", "", "sure"])
def test_anything_but_yes_sends_nothing(tmp_path: Path, hello_wav: Path, server: Any,
                                        answer: str) -> None:
    env = environment(tmp_path, server)
    child = terminal("transcribe", "--engine", "openrouter", str(hello_wav), env=env,
                     cwd=tmp_path)
    try:
        child.expect(QUESTION)
        child.sendline(answer)
        child.expect("not sent: you said no")
        child.expect(__import__("pexpect").EOF)
    finally:
        child.close(force=True)
    assert child.exitstatus == 1
    assert server.requests == []
    consent = next(r for r in log_records(env, tmp_path) if r["kind"] == "speech_consent")
    assert (consent["given"], consent["by"]) == (False, "terminal")


# -- no terminal: refused unless consented in advance -------------------------------------

def test_without_a_terminal_nothing_is_sent_and_the_way_to_consent_is_named(
        tmp_path: Path, hello_wav: Path, server: Any) -> None:
    env = environment(tmp_path, server)
    done = cli("transcribe", "--engine", "openrouter", str(hello_wav), env=env, cwd=tmp_path)
    assert done.returncode == 1
    assert "no terminal to ask on" in done.stderr and "--allow-remote" in done.stderr
    assert done.stdout == ""
    listened = cli("listen", "--audio", str(hello_wav), "--engine", "openrouter", env=env,
                   cwd=tmp_path)
    assert listened.returncode == 1
    assert "--allow-remote" in listened.stderr and "listening" not in listened.stderr
    assert server.requests == []
    refusals = [r for r in log_records(env, tmp_path) if r["kind"] == "speech_consent"]
    assert [r["given"] for r in refusals] == [False, False]


def test_the_profile_alone_never_sends(tmp_path: Path, hello_wav: Path, server: Any) -> None:
    (tmp_path / "profiles").mkdir()
    (tmp_path / "profiles" / "default.json").write_text(
        json.dumps({"listen": {"engine": "openrouter"}}))
    env = environment(tmp_path, server)
    done = cli("transcribe", str(hello_wav), env=env, cwd=tmp_path)
    assert done.returncode == 1 and "--allow-remote" in done.stderr
    assert server.requests == []
    allowed = cli("transcribe", "--allow-remote", str(hello_wav), env=env, cwd=tmp_path)
    assert allowed.returncode == 0, allowed.stderr
    assert allowed.stdout.strip().strip(".!").lower() == "hello"
    consent = [r for r in log_records(env, tmp_path) if r["kind"] == "speech_consent"]
    assert [(r["given"], r["by"]) for r in consent] == [
        (False, "nobody (no terminal)"), (True, "in advance (--allow-remote or the frontend)")]


def test_off_sends_nothing_even_when_allowed(tmp_path: Path, hello_wav: Path,
                                             server: Any) -> None:
    env = environment(tmp_path, server)
    assert cli("mode", "off", env=env, cwd=tmp_path).returncode == 0
    done = cli("transcribe", "--engine", "openrouter", "--allow-remote", str(hello_wav),
               env=env, cwd=tmp_path)
    assert done.returncode == 4 and "operator is off" in done.stderr
    listened = cli("listen", "--audio", str(hello_wav), "--engine", "openrouter",
                   "--allow-remote", env=env, cwd=tmp_path)
    assert listened.returncode == 4
    assert server.requests == []


def test_silence_is_never_sent(tmp_path: Path, server: Any) -> None:
    import struct
    import wave

    path = tmp_path / "silence.wav"
    with wave.open(str(path), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(16_000)
        out.writeframes(struct.pack("<h", 0) * 48_000)
    done = cli("transcribe", "--engine", "openrouter", "--allow-remote", str(path),
               env=environment(tmp_path, server), cwd=tmp_path)
    assert done.returncode == 1 and "nothing was sent" in done.stderr
    assert server.requests == []


# -- errors: one clear line, exit 1 -------------------------------------------------------

@pytest.mark.parametrize(("server", "extra", "expected"), [
    ({}, {"OPENROUTER_API_KEY": "sk-or-v1-wrong"}, r"HTTP 401.*\n  fix: set OPENROUTER_API_KEY"),
    ({}, {"OPENROUTER_API_KEY": ""}, r"no OpenRouter API key\n  fix: set OPENROUTER_API_KEY"),
    ({"mode": "credits"}, {}, r"no credits.*\n  fix: add credits"),
    ({"mode": "rate", "retry_after": "120"}, {}, r"Rate limit exceeded.*limit 20.*\n  fix: "
     r"rate limited: wait 120 s"),
    ({"mode": "in-band"}, {}, r"failed mid-stream: Provider returned error"),
    ({"mode": "empty"}, {}, r"heard nothing: openrouter returned no words"),
], indirect=["server"], ids=["401", "no key", "402", "429", "200 with error", "empty"])
def test_each_failure_is_one_clear_error(tmp_path: Path, hello_wav: Path, server: Any,
                                         extra: dict[str, str], expected: str) -> None:
    env = environment(tmp_path, server, **extra)
    done = cli("transcribe", "--engine", "openrouter", "--allow-remote", str(hello_wav),
               env=env, cwd=tmp_path)
    assert done.returncode == 1
    assert re.search(r"^adjutant transcribe: .*" + expected, done.stderr, re.MULTILINE), \
        done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""
    outcome = next(r for r in log_records(env, tmp_path) if r["kind"] == "speech_sent")
    assert outcome["outcome"] != "ok"


def test_a_model_without_audio_input_is_refused_before_sending(
        tmp_path: Path, hello_wav: Path, server: Any) -> None:
    (tmp_path / "profiles").mkdir()
    (tmp_path / "profiles" / "default.json").write_text(
        json.dumps({"listen": {"remote_model": "openai/gpt-4o-mini"}}))
    done = cli("transcribe", "--engine", "openrouter", "--allow-remote", str(hello_wav),
               env=environment(tmp_path, server), cwd=tmp_path)
    assert done.returncode == 1
    assert "openai/gpt-4o-mini does not take audio input" in done.stderr
    assert "listen.remote_model" in done.stderr
    assert chats(server) == [] and server.audio == []


def test_a_dead_server_is_one_clear_error(tmp_path: Path, hello_wav: Path) -> None:
    with fake_module().FakeOpenRouter() as gone:
        env = environment(tmp_path, gone)
    done = cli("transcribe", "--engine", "openrouter", "--allow-remote", str(hello_wav),
               env=env, cwd=tmp_path)
    assert done.returncode == 1
    assert "is not reachable" in done.stderr and "Traceback" not in done.stderr


def test_an_unknown_engine_names_the_installed_ones(tmp_path: Path, hello_wav: Path,
                                                   server: Any) -> None:
    env = environment(tmp_path, server)
    for command in (["transcribe", str(hello_wav)], ["listen", "--audio", str(hello_wav)]):
        done = cli(*command, "--engine", "nope", env=env, cwd=tmp_path)
        assert done.returncode == 1
        assert "no speech recognizer named 'nope'" in done.stderr
        assert "openrouter" in done.stderr and "whisper" in done.stderr
    assert server.requests == []


# -- the default never reaches the network ------------------------------------------------

NO_NETWORK = '''
import os, socket
_log = os.environ["NO_NETWORK_LOG"]
def _refuse(*args, **kwargs):
    with open(_log, "a") as out:
        out.write(repr(args[:2]) + "\\n")
    raise OSError("network refused by the test")
_connect = socket.socket.connect
def connect(self, address):
    if self.family in (socket.AF_INET, socket.AF_INET6):
        _refuse(self, address)
    return _connect(self, address)
socket.socket.connect = connect
socket.socket.connect_ex = connect
socket.getaddrinfo = _refuse
socket.create_connection = _refuse
'''


def test_the_default_profile_never_reaches_the_network(
        tmp_path: Path, say: Callable[..., Path], server: Any) -> None:
    shim = tmp_path / "shim"
    shim.mkdir()
    (shim / "sitecustomize.py").write_text(NO_NETWORK)
    attempts = tmp_path / "attempts.log"
    env = environment(tmp_path, server, NO_NETWORK_LOG=str(attempts),
                      PYTHONPATH=os.pathsep.join([str(shim), os.environ.get("PYTHONPATH", "")]))
    audio = say("List Python processes", tmp_path / "a.wav")
    done = cli("transcribe", str(audio), env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "python" in done.stdout.lower()
    assert cli("mode", "listen-only", env=env, cwd=tmp_path).returncode == 0
    listened = cli("listen", "--audio", str(audio), "--json", env=env, cwd=tmp_path)
    assert listened.returncode == 0, listened.stderr
    assert json.loads(listened.stdout)["status"] == "context"
    probe = cli("transcribe", "--engine", "openrouter", "--allow-remote", str(audio),
                env=env, cwd=tmp_path)  # the shim works: a remote engine is refused
    assert probe.returncode == 1 and "not reachable" in probe.stderr
    lines = attempts.read_text().splitlines()
    assert lines and all("127.0.0.1" in line for line in lines)  # the probe's, only
    assert server.requests == []


# -- in process: a frontend's own consent, the events, nothing lost ------------------------

class Stores:
    @hookimpl
    def register_stores(self, register: Callable[[Any], None]) -> None:
        from adjutant.testing import MemoryKeyValueStore, MemoryLogStore

        register(MemoryKeyValueStore())
        register(MemoryLogStore())


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # Whisper in the fake is the cost here, not the event loop


@pytest.mark.anyio
@pytest.mark.parametrize("server", [{"mode": "credits"}], indirect=True)
async def test_a_failed_microphone_recording_is_kept_and_the_session_goes_on(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, say: Callable[..., Path],
        server: Any) -> None:
    from adjutant import Copilot, Kernel
    from adjutant_stt import _listen
    from adjutant_stt._transcribe import decode_file

    monkeypatch.setenv("OPENROUTER_API_KEY", KEY)
    monkeypatch.setenv("ADJUTANT_OPENROUTER_URL", server.url)
    samples = decode_file(say("List Python processes", tmp_path / "a.wav"))
    monkeypatch.setattr(_listen, "record", lambda *a, **k: samples)  # the microphone
    kernel = Kernel(plugins=[adjutant_stt.SttPlugin, adjutant_openrouter, Stores()],
                    load_installed=False, home=tmp_path / "home").load()
    published: list[Any] = []
    async with kernel:
        real = kernel.bus.publish
        monkeypatch.setattr(kernel.bus, "publish",
                            lambda event, **kw: (published.append(event), real(event, **kw))[1])
        copilot = Copilot(kernel, cwd=str(tmp_path))
        asked: list[str] = []

        async def dialog(question: str) -> bool:
            asked.append(question)
            return True

        spoken = await adjutant_stt.hear(kernel, copilot, engine="openrouter", consent=dialog)
        assert (spoken.status, "no credits" in spoken.text) == ("nothing", True)
        [kept] = (tmp_path / "home" / "recordings").iterdir()
        assert oct(kept.stat().st_mode & 0o777) == "0o600"
        server.mode = "ok"  # the same session goes on, and the kept recording is whole
        again = await adjutant_stt.hear(kernel, copilot, engine="openrouter", consent=True)
        refused = await adjutant_stt.hear(kernel, copilot, engine="openrouter",
                                          consent=lambda q: _no())
        local = await adjutant_stt.hear(kernel, copilot)  # the profile's: whisper
    assert asked and "leaves this machine" in asked[0]
    assert again.status == "request" and "python" in again.text.lower()
    assert refused.status == "nothing" and "refused" in refused.text
    assert local.status == "request"
    import base64

    sent = [base64.b64decode(r.json()["messages"][-1]["content"][1]["input_audio"]["data"])
            for r in chats(server)]
    assert len(sent) == 2  # the one refused was never sent
    assert sent[0] == kept.read_bytes() == sent[1] == server.audio[0][0]
    heard = [e for e in published if type(e).__name__ == "Heard"]
    assert [e.engine for e in heard] == ["openrouter", "whisper"]
    consents = [e for e in published if type(e).__name__ == "RemoteConsent"]
    assert [e.given for e in consents] == [True, True, False]


async def _no() -> bool:
    return False


@pytest.mark.parametrize(("engine", "status", "said"), [
    ("whisper", "ok", "audio stays on this machine"),
    ("openrouter", "warn", "recordings go to openrouter.ai, after you consent each time"),
    ("nope", "fail", "no installed plugin registers"),
])
def test_doctor_says_where_recordings_go(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                         engine: str, status: str, said: str) -> None:
    from adjutant import Kernel, parse_profile

    monkeypatch.delenv("ADJUTANT_OPENROUTER_URL", raising=False)
    profile = parse_profile({"listen": {"engine": engine}})
    kernel = Kernel(plugins=[adjutant_stt.SttPlugin, adjutant_openrouter], load_installed=False,
                    home=tmp_path, profile=profile).load()
    result = kernel.checks["speech-to-text"].run(kernel)
    assert result.status == status and said in result.message


HOSTILE = ("list files\x1b]52;c;cm0gLXJmIH4=\x07\x1b[1A\x1b[2K\rapproved\x9b31m "
           "\u202etxt.exe\u202c done")


def test_a_hostile_remote_transcript_cannot_drive_the_terminal(
        tmp_path: Path, hello_wav: Path) -> None:
    """An outsider's attack: the remote engine answers with terminal controls (an OSC 52
    clipboard write, cursor-up and erase-line to forge what is shown, a one-byte CSI, a
    bidi override). Whatever reaches the terminal shows them as visible escapes."""
    with fake_module().FakeOpenRouter(hear=lambda audio, fmt: HOSTILE) as hostile:
        env = environment(tmp_path, hostile)
        done = cli("transcribe", "--engine", "openrouter", "--allow-remote", str(hello_wav),
                   env=env, cwd=tmp_path)
        listened = cli("listen", "--audio", str(hello_wav), "--engine", "openrouter",
                       "--allow-remote", "--non-interactive", env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    for shown in (done.stdout, done.stderr, listened.stdout, listened.stderr):
        for control in ("\x1b", "\x07", "\x9b", "\u202e", "\r"):
            assert control not in shown, (control, shown)
    assert "\\x1b]52;c;" in done.stdout  # shown, visibly, not obeyed
    assert "heard: list files\\x1b]52" in listened.stderr
