"""TTS-WebUI through its OpenAI TTS API extension.

``POST /v1/audio/speech`` on port 7778, with what the server really does:

- the body is WAV whatever ``response_format`` says (the extension labels it with the
  format's Content-Type but never converts), so Adjutant asks for ``wav``, the
  documented default, and reads the bytes as WAV, PCM 16-bit or float 32-bit;
- only chatterbox streams: a WAV header with placeholder sizes, then raw frames, read
  as they arrive; other models answer once the whole utterance is made;
- ``instructions`` is never sent: a non-null value crashes the request validator
  (``ModelEnum.TTS_1`` does not exist) into a plain-text 500;
- errors are FastAPI's ``{"detail": "..."}`` (500: the engine's exception, a missing
  extension) and ``{"detail": [{"loc": [...], "msg": ...}]}`` (422), a 401 in plain
  text when an API key is set, a 404 when the extension is not activated;
- ``input`` is at most 4096 characters: longer text goes as several requests.

``ADJUTANT_TTS_WEBUI_URL`` (default ``http://127.0.0.1:7778``) and
``ADJUTANT_TTS_WEBUI_API_KEY``. httpx loads on first use.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncGenerator, AsyncIterator, Iterator, Mapping
from typing import Any

from adjutant_hookspecs import AudioChunk, SpeechError, SpeechRequest, VoiceInfo

from ._wav import WavError, WavReader

__all__ = ["DEFAULT_URL", "MAX_INPUT", "TtsWebUI", "split_text"]

DEFAULT_URL = "http://127.0.0.1:7778"
DEFAULT_MODEL = "hexgrad/Kokoro-82M"
DEFAULT_VOICE = "af_heart"
MAX_INPUT = 4096
#: The voice listing's name for a model whose id cannot be a path segment.
VOICE_ROUTE = {"hexgrad/Kokoro-82M": "kokoro"}
START_HINT = ("start TTS-WebUI and activate its OpenAI TTS API extension (port 7778), "
              "or set the profile's speech.engine to auto for the embedded voice")


class TtsWebUI:
    """The ``tts-webui`` speech engine."""

    name = "tts-webui"
    description = "TTS-WebUI server (OpenAI-compatible /v1/audio/speech; Kokoro, chatterbox...)"
    streams = True  # chatterbox does; the others answer in one piece

    def __init__(self, base_url: str | None = None, *, api_key: str | None = None,
                 env: Mapping[str, str] | None = None, timeout: float = 120.0,
                 connect_timeout: float = 3.0) -> None:
        import os

        env = os.environ if env is None else env
        self.base_url = (base_url or env.get("ADJUTANT_TTS_WEBUI_URL") or DEFAULT_URL).rstrip("/")
        self.api_key = api_key or env.get("ADJUTANT_TTS_WEBUI_API_KEY") or None
        self.timeout, self.connect_timeout = timeout, connect_timeout
        self._http: Any = None

    def _client(self) -> Any:
        if self._http is None:
            import httpx

            headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
            self._http = httpx.AsyncClient(
                base_url=self.base_url, headers=headers,
                timeout=httpx.Timeout(self.timeout, connect=self.connect_timeout))
        return self._http

    def body(self, request: SpeechRequest, text: str) -> dict[str, Any]:
        """The request body: no ``instructions`` key at all (see the module docstring)."""
        return {"model": request.model or DEFAULT_MODEL, "input": text,
                "voice": request.voice or DEFAULT_VOICE, "response_format": "wav",
                "speed": request.speed, "stream": True}

    async def synthesize(self, request: SpeechRequest) -> AsyncIterator[AudioChunk]:
        from contextlib import aclosing

        for text in split_text(request.text):
            async with aclosing(self._one(request, text)) as chunks:  # a stop closes it now
                async for chunk in chunks:
                    yield chunk

    async def _one(self, request: SpeechRequest, text: str
                   ) -> AsyncGenerator[AudioChunk, None]:
        import httpx

        reader = WavReader()
        try:
            async with self._client().stream("POST", "/v1/audio/speech",
                                             json=self.body(request, text)) as response:
                if response.status_code != 200:
                    raise self.error_for(response.status_code, await response.aread())
                async for data in response.aiter_bytes():
                    pcm = reader.feed(data)
                    if pcm:
                        yield AudioChunk(pcm=pcm, sample_rate=reader.sample_rate,
                                         channels=reader.channels)
                reader.close()
        except WavError as exc:
            raise SpeechError(f"TTS-WebUI at {self.base_url} sent audio Adjutant cannot "
                              f"play: {exc}", hint="Adjutant asks for wav") from None
        except httpx.HTTPError as exc:
            raise self.transport_error(exc, started=reader.ready) from None

    def error_for(self, status: int, body: bytes) -> SpeechError:
        detail = error_detail(body)
        if status == 401:
            return SpeechError(f"TTS-WebUI at {self.base_url} refused the API key ({detail})",
                               hint="set ADJUTANT_TTS_WEBUI_API_KEY to its OPENAI_API_KEY",
                               status=status)
        if status == 404:
            return SpeechError(f"TTS-WebUI at {self.base_url} has no /v1/audio/speech",
                               hint="activate the OpenAI TTS API extension", status=status)
        what = "refused the request" if status == 422 else "failed"
        return SpeechError(f"TTS-WebUI {what} (HTTP {status}): {detail}", status=status)

    def transport_error(self, exc: Exception, *, started: bool) -> SpeechError:
        import httpx

        if isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout):
            return SpeechError(f"TTS-WebUI is not reachable at {self.base_url} ({exc})",
                               hint=START_HINT)
        if isinstance(exc, httpx.TimeoutException):
            return SpeechError(f"TTS-WebUI at {self.base_url} timed out", hint=START_HINT)
        where = "in the middle of the audio" if started else "before any audio"
        return SpeechError(f"TTS-WebUI at {self.base_url} dropped the connection {where} "
                           f"({type(exc).__name__}: {exc})")

    async def _get(self, path: str) -> Any:
        import httpx

        try:
            response = await self._client().get(path)
        except httpx.HTTPError as exc:
            raise self.transport_error(exc, started=False) from None
        if response.status_code != 200:
            raise self.error_for(response.status_code, response.content)
        try:
            return response.json()
        except ValueError:
            raise SpeechError(f"TTS-WebUI at {self.base_url}{path} did not answer JSON") from None

    async def models(self) -> list[str]:
        """``GET /v1/audio/models``: ``{"models": [{"id": ...}, ...]}``."""
        payload = await self._get("/v1/audio/models")
        return [m["id"] for m in payload.get("models", []) if isinstance(m, dict) and "id" in m]

    async def voices(self, model: str | None = None) -> list[VoiceInfo]:
        """``/v1/audio/voices/{model}`` answers ``{"value", "label"}`` pairs; the listing
        of every model, ``/v1/audio/voices``, ``{"id", "name"}``: both are read."""
        route = VOICE_ROUTE.get(model or DEFAULT_MODEL, model or DEFAULT_MODEL)
        path = "/v1/audio/voices" if "/" in route else f"/v1/audio/voices/{route}"
        payload = await self._get(path)
        found = []
        for voice in payload.get("voices", []):
            if isinstance(voice, dict):
                ident = voice.get("id", voice.get("value"))
                label = voice.get("name", voice.get("label"))
                if isinstance(ident, str):
                    found.append(VoiceInfo(id=ident, name=str(label or ident), model=model))
        return found

    async def aclose(self) -> None:
        if self._http is not None:
            client, self._http = self._http, None
            await client.aclose()


def error_detail(body: bytes) -> str:
    """FastAPI's ``detail`` (a string, or a list of ``{"loc", "msg"}``), else the text."""
    text = body.decode("utf-8", "replace").strip()
    try:
        payload = json.loads(text)
    except ValueError:
        return text[:300] or "no details"
    detail = payload.get("detail", payload) if isinstance(payload, dict) else payload
    if isinstance(detail, list):
        parts = []
        for item in detail:
            if isinstance(item, dict):
                loc = ".".join(str(p) for p in item.get("loc", []) if p != "body")
                parts.append(f"{loc}: {item.get('msg', '?')}" if loc else str(item.get("msg")))
        return "; ".join(parts)[:300] or "no details"
    return str(detail)[:300]


_SENTENCE_END = re.compile(r"(?<=[.!?;:])\s+")


def split_text(text: str, limit: int = MAX_INPUT) -> Iterator[str]:
    """Pieces of at most ``limit`` characters, cut after a sentence where possible,
    else at a space, else anywhere."""
    text = text.strip()
    while len(text) > limit:
        window = text[:limit]
        cuts = [m.end() for m in _SENTENCE_END.finditer(window)]
        cut = cuts[-1] if cuts else (window.rfind(" ") + 1 or limit)
        yield text[:cut].strip()
        text = text[cut:].strip()
    if text:
        yield text
