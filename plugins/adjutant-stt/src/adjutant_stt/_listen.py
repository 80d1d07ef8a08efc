"""Push-to-talk: one utterance, transcribed on this machine, handed to the operator as
the user's request, through the same pipeline as a typed one (``adjutant run``'s).

Fail closed: in ``off`` the microphone is never opened; in ``listen-only`` the
transcript is logged as context (`Copilot.notice`) and never planned (the operator
refuses to plan in that mode too). Audio never leaves the machine unless the user
named a remote recognizer (``plugins.stt.engine``, ``--engine``) and consented to where it
goes (`_consent`) before the microphone opened; when a remote engine fails, a
microphone recording is kept on this machine (``<data home>/recordings``)."""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ._consent import Consent
from ._consent import consent as ask_consent
from ._engines import WHISPER, has_speech, pick, remote_transcript
from ._errors import HeardNothing, SttError
from ._events import Heard, HeardNothingEvent, Listening
from ._record import DEFAULT_ENDPOINT, Endpoint, file_chunks, microphone_chunks, record_utterance
from ._settings import listen_settings
from ._transcribe import SAMPLE_RATE, Transcript, decode_file, transcribe

if TYPE_CHECKING:
    from adjutant import Copilot
    from adjutant_hookspecs import Kernel

__all__ = ["PushToTalk", "Spoken", "hear", "record", "utterance"]


def _say(text: str) -> None:
    from adjutant.safety.terminal import printable

    print(printable(text), file=sys.stderr, flush=True)


def _enter_stops(stop: threading.Event, done: threading.Event) -> threading.Thread | None:
    """Enter on a terminal ends the recording (a polled read). The caller joins the
    returned watcher once the recording ended, so no line typed afterwards (at chat's
    next prompt) is swallowed by it."""
    import select

    if not sys.stdin.isatty():
        return None

    def watch() -> None:
        while not done.is_set():
            with contextlib.suppress(OSError, ValueError):
                ready, _, _ = select.select([sys.stdin], [], [], 0.1)
                if ready and not done.is_set():
                    sys.stdin.readline()
                    stop.set()
                    return
    watcher = threading.Thread(target=watch, name="adjutant-ptt", daemon=True)
    watcher.start()
    return watcher


def utterance(audio: str | None = None, *, endpoint: Endpoint = DEFAULT_ENDPOINT,
              language: str | None = "en", whole: bool = False) -> Transcript:
    """Record one utterance (the microphone, or ``audio`` fed in its place) and
    transcribe it on this machine. Blocking: run it in a worker thread."""
    return transcribe(record(audio, endpoint=endpoint, whole=whole), language=language)


def record(audio: str | None = None, *, endpoint: Endpoint = DEFAULT_ENDPOINT,
           whole: bool = False) -> Any:
    """One utterance's samples (16 kHz mono float32), from the microphone or ``audio``
    fed in its place; `HeardNothing` when no speech came. Blocking.

    ``whole``: ``audio`` is a finished push-to-talk recording (the key was released):
    all of it is the utterance, taken at once, with no pacing and no cut at a pause."""
    if audio is not None and whole:
        samples = decode_file(audio)
        if samples.size / SAMPLE_RATE > endpoint.max_s:
            raise SttError(f"the recording is longer than {endpoint.max_s:g} s "
                           "(the profile's plugins.stt.max_s)")
        if not has_speech(samples):
            raise HeardNothing("no speech in the recording")
        return samples
    stop, done = threading.Event(), threading.Event()
    watcher = None
    try:
        if audio is None:
            watcher = _enter_stops(stop, done)
            chunks = microphone_chunks(stop, os.environ.get("ADJUTANT_STT_DEVICE") or None)
        else:
            chunks = file_chunks(audio)
        recording = record_utterance(chunks, stop, endpoint)
    finally:
        done.set()
        stop.set()
        if watcher is not None:
            watcher.join()  # at most one poll (0.1 s): the terminal is chat's again
    if not recording.heard_speech:
        raise HeardNothing("no speech before "
                           + {"no speech": f"{endpoint.no_speech_s:g} s passed",
                              "stopped": "the recording was stopped"}.get(
                                  recording.why, "the recording ended"))
    return recording.samples


def _keep(kernel: Kernel, samples: Any) -> Path:
    """A microphone recording a remote engine failed on, kept on this machine (owner
    only), so nothing said is lost: ``adjutant transcribe`` it later."""
    import time

    from ._engines import wav_bytes

    folder = Path(kernel.home) / "recordings"
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    path = folder / f"{time.strftime('%Y%m%d-%H%M%S')}-{time.time_ns() % 10**9:09d}.wav"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as out:
        out.write(wav_bytes(samples))
    return path


def _edit(text: str) -> str:
    """The transcript on an editable line (readline), Enter to send it as it stands."""
    try:
        import readline
    except ImportError:
        return input("request> ") or text
    readline.set_startup_hook(lambda: readline.insert_text(text))
    try:
        return input("request> ")
    except EOFError:
        return ""
    finally:
        readline.set_startup_hook()


@dataclass(frozen=True)
class Spoken:
    #: ``request`` (``text`` goes to the operator), ``context`` (listen-only: logged,
    #: not planned), ``nothing`` (no speech, no microphone: ``text`` says why) or
    #: ``off`` (the microphone was not opened).
    status: Literal["request", "context", "nothing", "off"]
    text: str


async def hear(kernel: Kernel, copilot: Copilot, *, audio: str | None = None,
               edit: bool | None = None, engine: str | None = None,
               consent: Consent = None, whole: bool = False) -> Spoken:
    """One spoken request for the operator. Errors are shown, never raised.

    ``whole``: ``audio`` is a finished push-to-talk recording (a dock's, made while a
    button was held): heard at once and entire, not fed at speaking pace and cut at
    the first pause as a stand-in for the microphone is.

    ``engine``: a recognizer by name (None: the profile's ``plugins.stt.engine``, whisper by
    default). A remote one is asked for consent before anything is recorded:
    ``consent`` None asks on the terminal (refused without one), True means the user
    consented already (``--allow-remote``, a frontend's own question), False refuses,
    an async callable asks that way (see `adjutant_stt._consent`)."""
    import anyio

    mode = await copilot.mode()
    if mode == "off":
        _say("the operator is off: not listening (`adjutant mode propose-only` turns it on)")
        return Spoken("off", "")
    listen = listen_settings(kernel)
    endpoint = Endpoint(silence_s=listen.silence_s, max_s=listen.max_s)
    language = None if listen.language == "auto" else listen.language
    samples: Any = None
    try:
        recognizer = pick(kernel, engine)
        model = listen.remote_model or getattr(recognizer, "model", None)
        await ask_consent(kernel, copilot, recognizer, model, consent)
        kernel.bus.publish(Listening(source=audio or "microphone"))
        _say(f"listening{' to ' + audio if audio else ''}... "
             f"{'(Enter to stop; it stops by itself after a pause)' if audio is None else ''}")
        if recognizer.name == WHISPER:
            heard = await anyio.to_thread.run_sync(
                lambda: utterance(audio, endpoint=endpoint, language=language,
                                  whole=whole),
                abandon_on_cancel=True)
        else:
            samples = await anyio.to_thread.run_sync(
                lambda: record(audio, endpoint=endpoint, whole=whole),
                abandon_on_cancel=True)
            _say(f"sending {len(samples) / 16_000:.1f} s of audio to {recognizer.name} "
                 f"({recognizer.destination})...")
            heard = await remote_transcript(copilot, recognizer, samples, language=language,
                                            model=model)
    except SttError as exc:
        kept = ""
        if samples is not None and audio is None and not isinstance(exc, HeardNothing):
            with contextlib.suppress(OSError):
                kept = f"; the recording is kept at {_keep(kernel, samples)}"
        kernel.bus.publish(HeardNothingEvent(reason=str(exc)))
        _say(f"{exc}{kept}" + (f" ({exc.hint})" if exc.hint else ""))
        return Spoken("nothing", str(exc))
    mode = await copilot.mode()  # it may have changed while the user spoke
    planned = mode not in ("off", "listen-only")
    kernel.bus.publish(Heard(text=heard.text, mode=mode, planned=planned,
                             duration_s=heard.duration_s, elapsed_s=heard.elapsed_s,
                             engine=heard.engine))
    _say(f"heard: {heard.text}")
    if not planned:
        await copilot.notice(heard.text, source="speech")
        _say(f"({mode}: logged as context, not planned)")
        return Spoken("context", heard.text)
    wants_edit = listen.edit_first if edit is None else edit
    if wants_edit and sys.stdin.isatty():
        return Spoken("request", (await anyio.to_thread.run_sync(_edit, heard.text)).strip())
    return Spoken("request", heard.text)


class PushToTalk:
    """The voice frontend: ``hear`` gives `adjutant chat` its ``/talk``; ``serve``
    listens for one request after another until cancelled."""

    name = "voice"

    async def hear(self, kernel: Kernel, copilot: Copilot) -> str:
        """The spoken request's text, or ``""`` when there is nothing to plan."""
        spoken = await hear(kernel, copilot)
        return spoken.text if spoken.status == "request" else ""

    async def serve(self, kernel: Kernel) -> None:
        import anyio

        from adjutant import Copilot, TerminalApprover

        copilot = Copilot(kernel, approver=TerminalApprover(sys.stdin.isatty()))
        while True:
            if request := await self.hear(kernel, copilot):
                outcome = await copilot.handle(request)
                if outcome.text:
                    print(outcome.text, flush=True)
            else:
                await anyio.sleep(1.0)  # off, no microphone, or silence: do not spin
