"""Speech out and in: the protocols of a speech engine (text to audio) and a speech
recognizer (audio to text), and the values they exchange.

An engine turns text into audio: 16-bit mono or multi-channel PCM in chunks, as
soon as each is ready (a sentence at a time for a local voice, the HTTP body as it
arrives for a server that streams). Whoever plays the audio (the speech service of
``adjutant-tts``, a test, another frontend) stops an utterance by closing the
iterator or cancelling the task that reads it; the engine then frees what it holds
(a thread, a subprocess, a connection) before ``aclose`` of the iterator returns.

A recognizer turns one recording into text. It says whether audio leaves the machine
(``remote``) and where it goes (``destination``); the caller (``adjutant-stt``) asks
the user before handing a remote one anything, so a recognizer never asks itself.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, Protocol, runtime_checkable

import msgspec

__all__ = ["AudioChunk", "RecognitionRequest", "SpeechEngine", "SpeechError", "SpeechRecognizer",
           "SpeechRequest", "VoiceInfo"]

_frozen: dict[str, Any] = {"frozen": True, "kw_only": True, "forbid_unknown_fields": True}


class SpeechRequest(msgspec.Struct, **_frozen):
    """What to say and how. ``voice`` and ``model`` are engine names (None: the
    engine's default); ``speed`` 1.0 is the voice's own pace."""

    text: str
    voice: str | None = None
    model: str | None = None
    speed: float = 1.0

    def __post_init__(self) -> None:
        if not 0.25 <= self.speed <= 4.0:
            raise ValueError(f"speed must be within 0.25..4.0, got {self.speed}")


class AudioChunk(msgspec.Struct, **_frozen):
    """A piece of audio: signed 16-bit little-endian PCM, channels interleaved."""

    pcm: bytes
    sample_rate: int
    channels: int = 1

    @property
    def frames(self) -> int:
        return len(self.pcm) // (2 * self.channels)

    @property
    def seconds(self) -> float:
        return self.frames / self.sample_rate


class VoiceInfo(msgspec.Struct, **_frozen):
    """A voice an engine offers (``id`` is what `SpeechRequest.voice` takes)."""

    id: str
    name: str = ""
    model: str | None = None
    language: str | None = None


class SpeechError(Exception):
    """An engine could not speak, or a recognizer could not hear, told the way a user
    can act on it.

    :param message: What happened (``"TTS-WebUI at http://127.0.0.1:7778 refused the
        connection"``).
    :param hint: What to do (``"activate its OpenAI TTS API extension"``).
    :param status: The HTTP status, when there was one.
    """

    def __init__(self, message: str, *, hint: str = "", status: int | None = None) -> None:
        super().__init__(f"{message}; {hint}" if hint else message)
        self.message, self.hint, self.status = message, hint, status


@runtime_checkable
class SpeechEngine(Protocol):
    """A text-to-speech engine (an embedded voice, espeak-ng, a TTS server).

    Optional members, used when present: ``description`` (one line for
    ``adjutant speak --engines``) and ``streams`` (True when audio arrives before
    the whole utterance is synthesized). Failures raise `SpeechError`.
    """

    name: str

    def synthesize(self, request: SpeechRequest) -> AsyncIterator[AudioChunk]:
        """Stream the audio of ``request.text``, chunk by chunk. Closing the iterator
        or cancelling its reader stops synthesis and frees the engine at once."""
        ...

    async def voices(self) -> list[VoiceInfo]:
        """The voices this engine can use now (no download is ever started)."""
        ...

    async def aclose(self) -> None: ...


class RecognitionRequest(msgspec.Struct, **_frozen):
    """A recording to transcribe. ``audio`` is a whole WAV file (16 kHz mono 16-bit
    PCM, as ``adjutant-stt`` records and decodes); ``language`` an ISO code (None:
    detect it); ``model`` a model the recognizer knows (None: its default)."""

    audio: bytes
    language: str | None = "en"
    model: str | None = None


@runtime_checkable
class SpeechRecognizer(Protocol):
    """A speech-to-text engine (the embedded Whisper, a hosted model).

    ``remote`` is True when the audio leaves this machine; ``destination`` says where
    it goes (a host, ``openrouter.ai``; ``this machine`` for a local engine). Callers
    never hand a remote recognizer audio without the user's consent for that
    destination. Optional members, used when present: ``model`` (the default model,
    named in the consent question) and ``description`` (one line for listings).
    Failures raise `SpeechError`.
    """

    name: str
    remote: bool
    destination: str

    async def recognize(self, request: RecognitionRequest) -> str:
        """The words said in ``request.audio``, verbatim (``""`` when none were).
        Cancelling the caller stops the work and frees what it holds (a connection
        closed, so a hosted model stops too)."""
        ...
