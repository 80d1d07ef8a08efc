"""A fake TTS-WebUI OpenAI TTS API extension, built from the documentation and the
extension's source (``api/audio.py``, ``models/create_speech_request.py``,
``services/tts_service.py``, ``utils/audio_utils.py``, ``router.py``):

- ``POST /v1/audio/speech``: the request model's validation as FastAPI answers it (422
  ``{"detail": [{"type", "loc", "msg", "input"}]}``; ``input`` at most 4096 characters,
  ``speed`` 0.25..4.0, ``response_format`` one of six, default ``wav``); a non-null
  ``instructions`` crashes the validator (``ModelEnum.TTS_1`` does not exist): a
  plain-text 500 ``Internal Server Error``; an engine's exception is a 500
  ``{"detail": "..."}``; an unknown model ``Model x not found``;
- the body is WAV whatever the format (labelled with the format's Content-Type,
  ``Content-Disposition: attachment``): float 32-bit from scipy's writer (``fmt`` of 18
  bytes, a ``fact`` chunk) for Kokoro, PCM 16-bit for chatterbox;
- only chatterbox with ``stream`` (default true) streams: chunked transfer, a WAV header
  with ``0xFFFFFFFF - 36`` as its sizes, then raw frames as they are made; a failure
  mid-stream ends the connection without the final chunk;
- ``GET /v1/audio/models`` ``{"models": [{"id"}]}``; ``/v1/audio/voices/{model}``
  ``{"voices": [{"value", "label"}]}`` (the model's short name: ``kokoro``);
  ``/v1/audio/voices`` ``{"voices": [{"id", "name"}]}``; no ``/v1/models``;
- with an API key set, anything else is a plain-text 401 ``Unauthorized: invalid API key``.
"""

from __future__ import annotations

import json
import math
import struct
from typing import Any

from adjutant.testing.fakeserver import FakeRequest, FakeResponse, FakeServer

FORMATS = {"mp3": "audio/mpeg", "opus": "audio/opus", "aac": "audio/aac",
           "flac": "audio/flac", "wav": "audio/wav", "pcm": "audio/pcm"}
MODELS = ("hexgrad/Kokoro-82M", "chatterbox", "global_preset", "styletts2", "f5-tts")
KOKORO_VOICES = {"af_heart": "Heart", "af_bella": "Bella", "am_michael": "Michael"}
#: Engines whose extension this server lacks (their adapter's ImportError, as a 500).
MISSING = {"styletts2": "StyleTTS2 extension is not installed. Please install it with "
                        "`pip install git+https://github.com/rsxdalv/extension_styletts2@main`",
           "f5-tts": "F5-TTS extension is not installed."}
RATE = {"hexgrad/Kokoro-82M": 24000, "chatterbox": 24000}
SECONDS_PER_CHAR = 0.05


def tone(seconds: float, rate: int) -> list[float]:
    """A 220 Hz tone with an envelope: audible, not silence."""
    count = max(1, round(seconds * rate))
    return [0.5 * math.sin(2 * math.pi * 220 * i / rate) * min(1.0, i / 240)
            for i in range(count)]


def float_wav(samples: list[float], rate: int) -> bytes:
    """What ``scipy.io.wavfile.write`` makes of a float32 array."""
    data = struct.pack(f"<{len(samples)}f", *samples)
    fmt = struct.pack("<HHIIHH", 3, 1, rate, rate * 4, 4, 32) + b"\x00\x00"
    body = (b"WAVE" + b"fmt " + struct.pack("<I", len(fmt)) + fmt
            + b"fact" + struct.pack("<II", 4, len(samples))
            + b"data" + struct.pack("<I", len(data)) + data)
    return b"RIFF" + struct.pack("<I", len(body)) + body


def int16(samples: list[float]) -> bytes:
    return struct.pack(f"<{len(samples)}h", *(round(s * 32767) for s in samples))


def pcm_wav(samples: list[float], rate: int) -> bytes:
    data = int16(samples)
    return (b"RIFF" + struct.pack("<I", 36 + len(data)) + b"WAVE" + b"fmt "
            + struct.pack("<IHHIIHH", 16, 1, 1, rate, rate * 2, 2, 16)
            + b"data" + struct.pack("<I", len(data)) + data)


def streaming_header(rate: int) -> bytes:
    """``to_wav_streaming_header``: sizes it cannot know, as 0xFFFFFFFF - 36."""
    size = 0xFFFFFFFF - 36
    return (b"RIFF" + struct.pack("<I", size + 36) + b"WAVE" + b"fmt "
            + struct.pack("<IHHIIHH", 16, 1, 1, rate, rate * 2, 2, 16)
            + b"data" + struct.pack("<I", size))


def chunk(data: bytes) -> bytes:
    """One piece of HTTP/1.1 chunked transfer encoding."""
    return f"{len(data):x}\r\n".encode() + data + b"\r\n"


def missing(field: str, body: dict[str, Any]) -> dict[str, Any]:
    return {"type": "missing", "loc": ["body", field], "msg": "Field required", "input": body}


class FakeTtsWebUI(FakeServer):
    """``api_key``: as ``OPENAI_API_KEY`` on the server; ``pieces``: how many chunks a
    chatterbox stream has, ``delay`` seconds apart; ``fail_after``: the chatterbox stream
    breaks after that many pieces."""

    def __init__(self, *, api_key: str | None = None, pieces: int = 4, delay: float = 0.05,
                 fail_after: int | None = None) -> None:
        super().__init__()
        self.api_key, self.pieces, self.delay, self.fail_after = api_key, pieces, delay, fail_after
        routes = {
            ("POST", "/v1/audio/speech"): self.speech,
            ("GET", "/v1/audio/models"): lambda r: FakeResponse.json(
                200, {"models": [{"id": m} for m in MODELS]}),
            ("GET", "/v1/audio/voices"): self.all_voices,
            ("GET", "/v1/audio/voices/kokoro"): lambda r: FakeResponse.json(
                200, {"voices": [{"value": k, "label": v} for k, v in KOKORO_VOICES.items()]}),
            ("GET", "/v1/audio/voices/chatterbox"): lambda r: FakeResponse.json(
                200, {"voices": [{"value": "random", "label": "Random"},
                                 {"value": "voices/chatterbox/ada.wav", "label": "ada"}]}),
        }
        self.routes.update({k: self._auth(h) for k, h in routes.items()})

    def _auth(self, handler: Any) -> Any:
        def guarded(request: FakeRequest) -> FakeResponse:
            if self.api_key and request.headers.get("authorization") != f"Bearer {self.api_key}":
                return FakeResponse(401, b"Unauthorized: invalid API key",
                                    content_type="text/plain")
            response: FakeResponse = handler(request)
            return response
        return guarded

    def all_voices(self, request: FakeRequest) -> FakeResponse:
        voices = [{"id": "random", "name": "Random"}]
        voices += [{"id": k, "name": v} for k, v in KOKORO_VOICES.items()]
        return FakeResponse.json(200, {"voices": voices})

    def speech(self, request: FakeRequest) -> FakeResponse:
        try:
            body = json.loads(request.body)
        except ValueError:
            return FakeResponse.json(422, {"detail": [{
                "type": "json_invalid", "loc": ["body", 0], "msg": "JSON decode error",
                "input": {}}]})
        if problems := self._validate(body):
            return FakeResponse.json(422, {"detail": problems})
        if body.get("instructions") is not None:
            # the validator refers to ModelEnum.TTS_1: AttributeError, before the route
            return FakeResponse(500, b"Internal Server Error", content_type="text/plain")
        model, text = body["model"], body["input"]
        fmt = body.get("response_format", "wav")
        headers = {"Content-Disposition": f"attachment; filename=speech_0001.{fmt}"}
        if model in MISSING:
            return FakeResponse.json(500, {"detail": MISSING[model]})
        if model not in RATE:
            return FakeResponse.json(500, {"detail": f"Model {model} not found"})
        rate = RATE[model]
        samples = tone(len(text) * SECONDS_PER_CHAR / body.get("speed", 1.0), rate)
        if model == "chatterbox" and body.get("stream", True):
            return self._stream(samples, rate, FORMATS[fmt], headers)
        audio = float_wav(samples, rate) if model == "hexgrad/Kokoro-82M" else \
            pcm_wav(samples, rate)
        return FakeResponse(200, audio, content_type=FORMATS[fmt], headers=headers)

    def _stream(self, samples: list[float], rate: int, content_type: str,
                headers: dict[str, str]) -> FakeResponse:
        size = math.ceil(len(samples) / self.pieces)
        parts: list[bytes | float] = [chunk(streaming_header(rate))]
        for index in range(self.pieces):
            if index == self.fail_after:
                return FakeResponse(200, parts, content_type=content_type,
                                    headers={**headers, "Transfer-Encoding": "chunked"})
            if index and self.delay:
                parts.append(self.delay)
            parts.append(chunk(int16(samples[index * size:(index + 1) * size])))
        parts.append(b"0\r\n\r\n")
        return FakeResponse(200, parts, content_type=content_type,
                            headers={**headers, "Transfer-Encoding": "chunked"})

    @staticmethod
    def _validate(body: Any) -> list[dict[str, Any]]:
        if not isinstance(body, dict):
            return [{"type": "model_attributes_type", "loc": ["body"],
                     "msg": "Input should be a valid dictionary", "input": body}]
        problems = [missing(f, body) for f in ("model", "input") if f not in body]
        text = body.get("input")
        if isinstance(text, str) and len(text) > 4096:
            problems.append({"type": "string_too_long", "loc": ["body", "input"],
                             "msg": "String should have at most 4096 characters",
                             "input": text, "ctx": {"max_length": 4096}})
        fmt = body.get("response_format", "wav")
        if fmt not in FORMATS:
            problems.append({"type": "enum", "loc": ["body", "response_format"],
                             "msg": "Input should be 'mp3', 'opus', 'aac', 'flac', 'wav' or "
                                    "'pcm'", "input": fmt})
        speed = body.get("speed", 1.0)
        if isinstance(speed, int | float) and not 0.25 <= speed <= 4.0:
            bound = "greater than or equal to 0.25" if speed < 0.25 else \
                "less than or equal to 4"
            problems.append({"type": "greater_than_equal" if speed < 0.25 else
                             "less_than_equal", "loc": ["body", "speed"],
                             "msg": f"Input should be {bound}", "input": speed})
        return problems
