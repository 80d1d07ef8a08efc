"""Voice in the dock: the mic button's upload, speech controls, and the ambient stream.

- ``POST /api/voice/hear``: one push-to-talk recording (a WAV, at most `MAX_SECONDS`
  of audio, at most `MAX_BYTES`), heard by adjutant-stt's ``hear`` in this process
  (the embedded Whisper: the audio never leaves the machine). The answer is
  ``{status, text, editFirst}``; ``status`` is ``request`` (the page sends ``text`` as
  the user's request, through the normal run path), ``context`` (listen-only: logged
  as context, not planned), ``nothing`` (no speech: ``text`` says why) or ``off``. In
  ``off`` the request is refused (409) before the body is read. The recording is
  written to a private temporary file (0600, in a 0700 folder) and deleted after.
  When the profile's ``listen.engine`` is a remote recognizer, `/api/state`'s
  ``voice.remote`` names where a recording would go (engine, host, model) and the
  ``digest`` of that destination; the page asks, and an upload the user said yes to
  carries ``X-Adjutant-Consent: <digest>``. The server recomputes the digest before
  reading the body (another destination: 409, nothing read, nothing sent) and only
  then lets adjutant-stt's consent path say yes, for that very destination; without
  the header a remote engine is refused (logged by adjutant-stt as unasked).
- ``POST /api/voice/consent`` ``{digest, given: false}``: the user said no (or
  pressed Esc): adjutant-stt's consent path logs the refusal; no audio was uploaded.
- ``POST /api/speech/pause``, ``/resume``, ``/stop``: adjutant-tts's speaker (503
  when that plugin is not loaded).
- ``GET /api/voice/events``: the ambient stream (SSE, the run stream's envelope):
  ``speech.*`` and ``stt.*`` events, which belong to no run. It starts with an
  ``adjutant.dock.voice_snapshot`` (what is being said or heard now); reconnecting
  with ``Last-Event-ID`` (or ``?after=``) replays what was missed while it is kept.
"""

from __future__ import annotations

import collections
import hashlib
import json
import os
import shutil
import tempfile
import wave
from collections.abc import AsyncIterator, Callable
from io import BytesIO
from pathlib import Path
from typing import Any

import anyio
from sse_starlette import EventSourceResponse, ServerSentEvent
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ._records import DockVoiceConsentRecord
from ._wire import envelope, frame

__all__ = ["CONSENT_HEADER", "MAX_BYTES", "MAX_SECONDS", "VoiceFeed", "is_voice",
           "remote_engine", "voice_routes", "voice_state"]

#: The longest recording the dock hears.
MAX_SECONDS = 60
#: The largest upload: 60 s of 48 kHz mono 16-bit PCM, and room for the header (the
#: page sends 16 kHz; a script may send its microphone's rate).
MAX_BYTES = MAX_SECONDS * 48_000 * 2 + 4096
#: Event names the ambient stream carries (they belong to no run).
PREFIXES = ("speech.", "stt.")
STT_MISSING = ("speech in needs the adjutant-stt plugin: pip install adjutant-stt "
               "(then restart the dock)")
#: The header that carries the user's yes, bound to the destination they were shown.
CONSENT_HEADER = "X-Adjutant-Consent"
TTS_MISSING = ("speech out needs the adjutant-tts plugin: pip install adjutant-tts "
               "(then restart the dock)")


def is_voice(name: str) -> bool:
    return name.startswith(PREFIXES)


class VoiceFeed:
    """The ambient events in order (``seq`` from 1, a bounded replay window), and what
    they add up to now: the utterance being said, the recording being heard."""

    def __init__(self, window: int = 512) -> None:
        self.events: collections.deque[dict[str, Any]] = collections.deque(maxlen=window)
        self.next_seq = 1
        self.speaking: dict[str, Any] | None = None
        self.hearing: dict[str, Any] | None = None
        self.closed = False
        self._changed = anyio.Event()

    def publish(self, data: dict[str, Any], thread_id: str | None, ms: int) -> None:
        """One bus event (as its AG-UI ``CUSTOM``) into the feed."""
        name, value = data["name"], data.get("value") or {}
        same = self.speaking is not None and self.speaking["speechId"] == value.get("speechId")
        if name == "speech.started":
            self.speaking = {**value, "state": "playing", "playedMs": 0, "synthesizedMs": 0}
        elif name == "speech.progress" and same:
            assert self.speaking is not None
            self.speaking.update({k: value[k] for k in ("state", "playedMs", "synthesizedMs")
                                  if k in value})
        elif name == "speech.stopped" and same:
            self.speaking = None
        elif name == "stt.listening":
            self.hearing = dict(value)
        elif name in ("stt.heard", "stt.heard_nothing"):
            self.hearing = None
        self.events.append(envelope(self.next_seq, "voice", thread_id or "", "", ms, data,
                                    "voice"))
        self.next_seq += 1
        self._wake()

    def snapshot(self, ms: int) -> dict[str, Any]:
        data = {"type": "CUSTOM", "name": "adjutant.dock.voice_snapshot",
                "value": {"speaking": self.speaking, "hearing": self.hearing},
                "timestamp": ms}
        return envelope(self.next_seq - 1, "voice", "", "", ms, data, "voice_snapshot")

    def after(self, seq: int) -> list[dict[str, Any]] | None:
        """The events after ``seq``; None when some have left the window."""
        first = self.events[0]["seq"] if self.events else self.next_seq
        if seq + 1 < first or seq >= self.next_seq:
            return None
        return [e for e in self.events if e["seq"] > seq]

    def close(self) -> None:
        """The dock is stopping: the streams end (so the server need not wait)."""
        self.closed = True
        self._wake()

    async def changed(self) -> None:
        await self._changed.wait()

    def _wake(self) -> None:
        self._changed.set()
        self._changed = anyio.Event()


def _loaded(kernel: Any, event: str) -> bool:
    """Whether the plugin that declares ``event`` is loaded in this kernel."""
    try:
        return event in kernel.events
    except TypeError:
        return False


def _destination(kernel: Any) -> tuple[Any, str | None] | None:
    """The recognizer the profile names and the model it would use, as adjutant-stt's
    ``hear`` picks them (None: no adjutant-stt, or an engine it does not know, which
    ``hear`` itself reports)."""
    if not _loaded(kernel, "stt.heard"):
        return None
    from adjutant_stt import SttError
    from adjutant_stt import pick_recognizer as pick

    try:
        recognizer = pick(kernel)
    except SttError:
        return None
    from adjutant_stt import listen_settings

    # the model as `adjutant_stt.hear` chooses it (it asks consent for this one)
    model = listen_settings(kernel).remote_model or getattr(recognizer, "model", None)
    return recognizer, model


def remote_engine(kernel: Any) -> dict[str, Any] | None:
    """Where a recording would go when the profile's ``listen.engine`` is off this
    machine: ``{engine, host, model, question, digest}`` (``question``: adjutant-stt's
    consent line; ``digest``: SHA-256 of engine, host and model, what a yes is bound
    to). None: it stays on this machine."""
    found = _destination(kernel)
    if found is None or not found[0].remote:
        return None
    from adjutant_stt import consent_question as question

    recognizer, model = found
    where = [recognizer.name, recognizer.destination, model or ""]
    return {"engine": recognizer.name, "host": recognizer.destination, "model": model,
            "question": question(recognizer, model),
            "digest": hashlib.sha256(json.dumps(where).encode()).hexdigest()}


def voice_state(kernel: Any) -> dict[str, Any]:
    """What the page needs to draw the mic button (and its tooltip), and to ask before
    a recording leaves the machine (``remote``)."""
    hear = _loaded(kernel, "stt.heard")
    edit_first = False
    if hear:
        from adjutant_stt import listen_settings

        edit_first = listen_settings(kernel).edit_first
    return {"hear": hear, "hearMissing": None if hear else STT_MISSING,
            "speak": _loaded(kernel, "speech.started"),
            "editFirst": edit_first,
            "maxSeconds": MAX_SECONDS, "remote": remote_engine(kernel) if hear else None}


def _error(code: int, message: str, **extra: Any) -> JSONResponse:
    return JSONResponse({"error": message, **extra}, status_code=code)


def check_wav(body: bytes) -> str | None:
    """Why ``body`` is not a recording the dock hears (None: it is)."""
    if not body:
        return "the recording is empty"
    if body[:4] != b"RIFF" or body[8:12] != b"WAVE":
        return ("not a WAV recording (RIFF/WAVE, PCM): the mic button sends one; from a "
                "script, send audio/wav")
    try:
        with wave.open(BytesIO(body)) as w:
            rate, width, channels = w.getframerate(), w.getsampwidth(), w.getnchannels()
            frames = len(w.readframes(w.getnframes())) // max(1, width * channels)
    except (wave.Error, EOFError) as exc:
        return f"not a WAV recording this dock reads (16-bit PCM): {exc}"
    if not 8000 <= rate <= 48000:
        return f"a sample rate of {rate} Hz: send 8,000 to 48,000 Hz"
    if frames == 0:
        return "the recording holds no audio (a header only)"
    if frames / rate > MAX_SECONDS:
        return f"too long: {frames / rate:.0f} s (at most {MAX_SECONDS} s)"
    return None


async def _body(request: Request) -> bytes | None:
    """The request's body, or None once it passes `MAX_BYTES` (read no further)."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_BYTES:
        return None
    parts, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BYTES:
            return None
        parts.append(chunk)
    return b"".join(parts)


def _private_copy(body: bytes) -> Path:
    """``body`` in a new file only this user can read, in a folder only they can enter."""
    folder = Path(tempfile.mkdtemp(prefix="adjutant-dock-voice-"))  # 0700
    path = folder / "recording.wav"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as out:
        out.write(body)
    return path


def voice_routes(hub: Any, *, ping_s: float, now_ms: Callable[[], int]) -> list[Route]:
    kernel = hub.kernel
    hearing = anyio.Lock()  # one recording at a time: one model, one operator

    def changed(remote: dict[str, Any] | None) -> JSONResponse:
        where = (f"{remote['engine']} ({remote['host']}, model {remote['model']})"
                 if remote else "this machine (the embedded Whisper)")
        return _error(409, "where the recording would go changed since you were asked: "
                      f"it would now go to {where}. Nothing was sent; ask again",
                      status="changed", remote=remote)

    async def hear(request: Request) -> Response:
        if await hub.copilot.mode() == "off":  # before anything is read or decoded
            return _error(409, "the operator is Off: nothing is heard (switch to Listen "
                          "or higher first)", status="off")
        said_yes = request.headers.get(CONSENT_HEADER)
        remote = remote_engine(kernel)
        if said_yes is not None and (remote is None or said_yes != remote["digest"]):
            return changed(remote)  # the profile changed under the question: ask again
        body = await _body(request)
        if body is None:
            return _error(413, f"the recording is too large (at most {MAX_SECONDS} s, "
                          f"{MAX_BYTES:,} bytes)")
        problem = check_wav(body)
        if problem is not None:
            status = 413 if problem.startswith("too long") else 415 if problem.startswith(
                "not a WAV") else 400
            return _error(status, problem)
        if not _loaded(kernel, "stt.heard"):
            return _error(503, STT_MISSING)
        import adjutant_stt

        consent: Any = False  # a remote engine nobody consented to is refused, and logged
        if said_yes is not None and remote is not None:
            shown = remote

            async def bound(line: str) -> bool:
                # yes only for the destination the user was shown: adjutant-stt asks
                # with its own line for what it is about to use, after the lock below
                return bool(line == shown["question"])

            consent = bound
            await hub.copilot.log.record(DockVoiceConsentRecord(
                engine=remote["engine"], host=remote["host"], model=remote["model"],
                digest=remote["digest"], given=True))
        async with hearing:
            path = _private_copy(body)
            try:
                # consent: False unless the page asked and the user said yes to this
                # very destination; never asked on the server's terminal behind the
                # browser's back; the local Whisper needs none
                # whole: the button was released, so the recording is finished: heard
                # entire and at once, not paced and cut at a pause like a microphone
                spoken = await adjutant_stt.hear(kernel, hub.copilot, audio=str(path),
                                                 edit=False, consent=consent, whole=True)
            finally:
                shutil.rmtree(path.parent, ignore_errors=True)
        return JSONResponse({"status": spoken.status, "text": spoken.text,
                             "editFirst": voice_state(kernel)["editFirst"]})

    async def refuse(request: Request) -> Response:
        """The user said no (or Esc) to the destination shown: logged by adjutant-stt's
        consent path as refused by the frontend; the recording never left the page."""
        try:
            body = json.loads(await request.body())
        except ValueError:
            body = None
        if not isinstance(body, dict) or body.get("given") is not False \
                or not isinstance(body.get("digest"), str):
            return _error(400, "send {\"digest\": the destination's digest, \"given\": "
                          "false}; a yes travels with the recording (" + CONSENT_HEADER
                          + " on /api/voice/hear)")
        remote = remote_engine(kernel)
        if remote is None or body["digest"] != remote["digest"]:
            return changed(remote)
        from adjutant_stt import NotSent
        from adjutant_stt import ask_consent as stt_consent

        found = _destination(kernel)
        assert found is not None
        await hub.copilot.log.record(DockVoiceConsentRecord(
            engine=remote["engine"], host=remote["host"], model=remote["model"],
            digest=remote["digest"], given=False))

        async def no(line: str) -> bool:
            return False

        try:
            await stt_consent(kernel, hub.copilot, found[0], found[1], no)
        except NotSent as exc:
            return JSONResponse({"status": "nothing", "text": str(exc)})
        return _error(500, "adjutant-stt sent nothing but did not refuse")  # not reached

    def speech(action: str) -> Callable[[Request], Any]:
        async def control(request: Request) -> Response:
            try:
                import adjutant_tts

                speaker = adjutant_tts.speaker_for(kernel)
            except (ImportError, LookupError):
                return _error(503, TTS_MISSING)
            getattr(speaker, action)()
            return JSONResponse({"speaking": speaker.speaking, "paused": speaker.paused})

        return control

    async def events(request: Request) -> Response:
        feed: VoiceFeed = hub.voice
        raw = request.query_params.get("after") or request.headers.get("last-event-id")
        try:
            after = int(raw) if raw else None
        except ValueError:
            return _error(400, f"after/Last-Event-ID must be a seq number, not {raw!r}")

        async def stream() -> AsyncIterator[ServerSentEvent]:
            seq = -1 if after is None else after
            while not feed.closed:
                missed = feed.after(seq) if seq >= 0 else None
                if missed is None:  # a new listener, or its replay is gone: the state now
                    snap = feed.snapshot(now_ms())
                    yield ServerSentEvent(**frame(snap))
                    seq = snap["seq"]
                    continue
                for env in missed:
                    yield ServerSentEvent(**frame(env))
                    seq = env["seq"]
                if not missed:
                    await feed.changed()

        return EventSourceResponse(stream(), ping=ping_s, sep="\n", headers={
            "Cache-Control": "no-store", "X-Accel-Buffering": "no"})

    return [
        Route("/api/voice/hear", hear, methods=["POST"]),
        Route("/api/voice/consent", refuse, methods=["POST"]),
        Route("/api/voice/events", events),
        Route("/api/speech/pause", speech("pause"), methods=["POST"]),
        Route("/api/speech/resume", speech("resume"), methods=["POST"]),
        Route("/api/speech/stop", speech("stop"), methods=["POST"]),
    ]
