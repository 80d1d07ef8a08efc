"""Voice endpoints: the mic button's upload, speech controls, and the ambient stream.

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

import json
import os
import shutil
import tempfile
import wave
from collections.abc import AsyncIterator, Awaitable, Callable
from io import BytesIO
from pathlib import Path
from typing import Any

from sse_starlette import EventSourceResponse, ServerSentEvent
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from . import _peers
from ._records import DockVoiceConsentRecord
from ._runs import now_ms
from ._state import dock_of, error
from ._voice_feed import MAX_SECONDS, STT_MISSING, remote_engine, voice_state
from ._wire import frame

__all__ = ["CONSENT_HEADER", "MAX_BYTES", "check_wav", "routes"]

#: The largest upload: 60 s of 48 kHz mono 16-bit PCM, and room for the header (the
#: page sends 16 kHz; a script may send its microphone's rate).
MAX_BYTES = MAX_SECONDS * 48_000 * 2 + 4096
#: The header that carries the user's yes, bound to the destination they were shown.
CONSENT_HEADER = "X-Adjutant-Consent"
TTS_MISSING = ("speech out needs the adjutant-tts plugin: pip install adjutant-tts "
               "(then restart the dock)")


async def hear(request: Request) -> Response:
    dock = dock_of(request)
    kernel, copilot = dock.kernel, dock.copilot
    if await copilot.mode() == "off":  # before anything is read or decoded
        return error(409, "the operator is Off: nothing is heard (switch to Listen or "
                     "higher first)", status="off")
    said_yes = request.headers.get(CONSENT_HEADER)
    remote = remote_engine(kernel)
    if said_yes is not None and (remote is None or said_yes != remote["digest"]):
        return _changed(remote)  # the profile changed under the question: ask again
    body = await _body(request)
    if body is None:
        return error(413, f"the recording is too large (at most {MAX_SECONDS} s, "
                     f"{MAX_BYTES:,} bytes)")
    problem = check_wav(body)
    if problem is not None:
        status = 413 if problem.startswith("too long") else 415 if problem.startswith(
            "not a WAV") else 400
        return error(status, problem)
    if not _peers.declares(kernel, "stt.heard"):
        return error(503, STT_MISSING)
    # a remote engine nobody consented to is refused, and logged
    consent: bool | Callable[[str], Awaitable[bool]] = False
    if said_yes is not None and remote is not None:
        shown = remote

        async def bound(line: str) -> bool:
            # yes only for the destination the user was shown: adjutant-stt asks with
            # its own line for what it is about to use, after the lock below
            return bool(line == shown["question"])

        consent = bound
        await copilot.log.record(DockVoiceConsentRecord(
            engine=remote["engine"], host=remote["host"], model=remote["model"],
            digest=remote["digest"], given=True))
    async with dock.hearing:
        path = _private_copy(body)
        try:
            heard, text = await _peers.hear(kernel, copilot, str(path), consent)
        finally:
            shutil.rmtree(path.parent, ignore_errors=True)
    return JSONResponse({"status": heard, "text": text,
                         "editFirst": voice_state(kernel)["editFirst"]})


async def refuse(request: Request) -> Response:
    """The user said no (or Esc) to the destination shown: logged by adjutant-stt's
    consent path as refused by the frontend; the recording never left the page."""
    dock = dock_of(request)
    try:
        body = json.loads(await request.body())
    except ValueError:
        body = None
    if not isinstance(body, dict) or body.get("given") is not False \
            or not isinstance(body.get("digest"), str):
        return error(400, "send {\"digest\": the destination's digest, \"given\": false}; "
                     "a yes travels with the recording (" + CONSENT_HEADER
                     + " on /api/voice/hear)")
    remote = remote_engine(dock.kernel)
    if remote is None or body["digest"] != remote["digest"]:
        return _changed(remote)
    found = _peers.recognizer(dock.kernel)
    assert found is not None
    await dock.copilot.log.record(DockVoiceConsentRecord(
        engine=remote["engine"], host=remote["host"], model=remote["model"],
        digest=remote["digest"], given=False))
    refused = await _peers.refuse_remote(dock.kernel, dock.copilot, found[0], found[1])
    if refused is None:  # not reached
        return error(500, "adjutant-stt sent nothing but did not refuse")
    return JSONResponse({"status": "nothing", "text": refused})


async def pause(request: Request) -> Response:
    return _speech(request, "pause")


async def resume(request: Request) -> Response:
    return _speech(request, "resume")


async def stop(request: Request) -> Response:
    return _speech(request, "stop")


def _speech(request: Request, action: str) -> Response:
    after = _peers.speech_control(dock_of(request).kernel, action)
    if after is None:
        return error(503, TTS_MISSING)
    return JSONResponse(after)


async def events(request: Request) -> Response:
    dock = dock_of(request)
    feed = dock.voice
    raw = request.query_params.get("after") or request.headers.get("last-event-id")
    try:
        after = int(raw) if raw else None
    except ValueError:
        return error(400, f"after/Last-Event-ID must be a seq number, not {raw!r}")

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

    return EventSourceResponse(stream(), ping=dock.ping_s, sep="\n", headers={
        "Cache-Control": "no-store", "X-Accel-Buffering": "no"})


routes = [
    Route("/api/voice/hear", hear, methods=["POST"]),
    Route("/api/voice/consent", refuse, methods=["POST"]),
    Route("/api/voice/events", events),
    Route("/api/speech/pause", pause, methods=["POST"]),
    Route("/api/speech/resume", resume, methods=["POST"]),
    Route("/api/speech/stop", stop, methods=["POST"]),
]


def _changed(remote: dict[str, Any] | None) -> JSONResponse:
    where = (f"{remote['engine']} ({remote['host']}, model {remote['model']})"
             if remote else "this machine (the embedded Whisper)")
    return error(409, "where the recording would go changed since you were asked: it "
                 f"would now go to {where}. Nothing was sent; ask again",
                 status="changed", remote=remote)


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
    if width != 2:
        return (f"not a WAV recording this dock reads: {8 * width}-bit samples, where "
                "it hears 16-bit PCM (e.g. sox in.wav -b 16 out.wav)")
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
