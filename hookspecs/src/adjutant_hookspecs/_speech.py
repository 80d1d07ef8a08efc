"""Speech out: the protocol of a speech engine and the values it exchanges.

An engine turns text into audio: 16-bit mono or multi-channel PCM in chunks, as
soon as each is ready (a sentence at a time for a local voice, the HTTP body as it
arrives for a server that streams). Whoever plays the audio (the speech service of
``adjutant-tts``, a test, another frontend) stops an utterance by closing the
iterator or cancelling the task that reads it; the engine then frees what it holds
(a thread, a subprocess, a connection) before ``aclose`` of the iterator returns.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, Protocol, runtime_checkable

import msgspec

__all__ = ["AudioChunk", "SpeechEngine", "SpeechError", "SpeechRequest", "VoiceInfo"]

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
    """An engine could not speak, told the way a user can act on it.

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
