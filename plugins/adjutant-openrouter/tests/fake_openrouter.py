"""A fake OpenRouter from its API documentation: SSE chunks with
``: OPENROUTER PROCESSING`` comments anywhere (also before the first token), usage on
the final chunk (with its ``cost`` when the request asks for usage accounting,
``"usage": {"include": true}``), ``[DONE]``; errors as
``{"error": {"code", "message", "metadata"}}`` with the status equal to the code
before streaming, and in-band after tokens were sent (HTTP 200, a top-level ``error``
whose code may be a string, finish_reason "error", sometimes empty ``choices``); 429
with Retry-After and X-RateLimit-*; models.

Audio input as the real API takes it: ``input_audio`` parts of a user message with raw
base64 ``data`` (a ``data:`` URI or anything that is not base64 is a 400), a ``format``
it knows (a WAV must parse as one), only for models with audio among their input
modalities (others: 404 "No endpoints found that support input audio"; an unknown
model id: 400). Every recording received is kept (``audio``: bytes and format), and
``hear`` (bytes, format -> words), when given, writes the reply: the tests of
adjutant-stt pass the real local Whisper, so a transcript proves the audio arrived."""

from __future__ import annotations

import base64
import binascii
import io
import wave
from collections.abc import Callable
from typing import Any

from adjutant.testing.fakeserver import FakeRequest, FakeResponse, FakeServer, sse, sse_json

MODELS = [
    {"id": "openai/gpt-4o-mini", "context_length": 128000,
     "architecture": {"input_modalities": ["text", "image"], "output_modalities": ["text"]},
     "supported_parameters": ["tools", "response_format", "structured_outputs"],
     "pricing": {"prompt": "0.00000015", "completion": "0.0000006"}},
    {"id": "google/gemini-2.5-flash", "context_length": 1048576,
     "architecture": {"input_modalities": ["text", "image", "audio"],
                      "output_modalities": ["text"]},
     "supported_parameters": ["tools", "response_format"],
     "pricing": {"prompt": "0.0000003", "completion": "0.0000025"}},
    {"id": "openai/gpt-4o-audio-preview", "context_length": 128000,
     "architecture": {"input_modalities": ["text", "audio"], "output_modalities": ["text",
                                                                                   "audio"]},
     "supported_parameters": ["tools", "response_format"],
     "pricing": {"prompt": "0.0000025", "completion": "0.00001"}},
]
AUDIO_FORMATS = ("wav", "mp3", "flac", "ogg", "m4a", "aac", "aiff")
DEFAULT_MODEL = "openai/gpt-4o-mini"  # the account's default, when a body names none


def refused(status: int, message: str) -> FakeResponse:
    return FakeResponse.json(status, {"error": {"code": status, "message": message}})


class FakeOpenRouter(FakeServer):
    def __init__(self, pieces: tuple[str, ...] = ("Hel", "lo"), *, key: str = "sk-or-v1-test",
                 mode: str = "ok", delay: float = 0.0, retry_after: str = "0.05",
                 hear: Callable[[bytes, str], str] | None = None) -> None:
        super().__init__()
        self.pieces, self.key, self.mode, self.delay = pieces, key, mode, delay
        self.retry_after, self.hear = retry_after, hear
        #: Every recording received in an input_audio part: (decoded bytes, format).
        self.audio: list[tuple[bytes, str]] = []
        self.routes.update({("POST", "/chat/completions"): self.chat,
                            ("GET", "/models"): lambda r: FakeResponse.json(200, {"data": MODELS})})

    def chat(self, request: FakeRequest) -> FakeResponse:
        if request.headers.get("authorization") != f"Bearer {self.key}":
            return FakeResponse.json(401, {"error": {"code": 401,
                                                     "message": "No auth credentials found"}})
        if self.mode == "credits":
            return FakeResponse.json(402, {"error": {"code": 402, "message":
                                                     "Insufficient credits"}})
        if self.mode == "moderation":
            return FakeResponse.json(403, {"error": {"code": 403, "message": "flagged",
                                                     "metadata": {"reasons": ["violence"],
                                                                  "provider_name": "x"}}})
        if self.mode.startswith("rate"):
            if self.mode == "rate-once":
                self.mode = "ok"
            return FakeResponse.json(429, {"error": {"code": 429, "message": "Rate limit "
                                                     "exceeded: free-models-per-min"}},
                                     **{"Retry-After": self.retry_after,
                                        "X-RateLimit-Limit": "20",
                                        "X-RateLimit-Remaining": "0",
                                        "X-RateLimit-Reset": "1763812800000"})
        body: Any = request.json()
        model = body.get("model") or DEFAULT_MODEL
        listed = {m["id"]: m for m in MODELS}
        if model not in listed:
            return refused(400, f"{model} is not a valid model ID")
        audio, problem = self.audio_parts(body)
        if problem:
            return refused(400, problem)
        if audio and "audio" not in listed[model]["architecture"]["input_modalities"]:
            return refused(404, "No endpoints found that support input audio")
        self.audio += audio
        pieces = self.pieces
        if self.mode == "empty":
            pieces = ()
        elif audio and self.hear is not None:
            words = self.hear(*audio[-1])
            pieces = (words[:len(words) // 2], words[len(words) // 2:])
        events: list[bytes | float] = [b": OPENROUTER PROCESSING\n\n"]
        if self.mode == "in-band":  # HTTP 200, then an error before any token
            events.append(sse_json({"id": "gen-1", "error": {
                "code": 502, "message": "Provider returned error"}, "choices": []}))
            return FakeResponse(200, events, content_type="text/event-stream",
                                headers={"X-Generation-Id": "gen-1"})
        for index, piece in enumerate(pieces):
            if self.delay:
                events.append(self.delay)
            events.append(sse_json({"id": "gen-1", "model": body["model"], "choices": [
                {"index": 0, "delta": {"role": "assistant", "content": piece},
                 "finish_reason": None}]}))
            if index == 0:
                events.append(b": OPENROUTER PROCESSING\n\n")
            if self.mode == "midstream" and index == 0:
                events.append(sse_json({"id": "gen-1", "error": {"code": "server_error",
                                                                  "message": "Provider "
                                                                  "disconnected"},
                                        "choices": [{"index": 0, "delta": {"content": ""},
                                                     "finish_reason": "error"}]}))
                return FakeResponse(200, events, content_type="text/event-stream",
                                    headers={"X-Generation-Id": "gen-1"})
        # the prompt's tokens, counted as a tokenizer roughly would: 4 characters each
        prompt = max(1, sum(len(m.get("content") or "") if isinstance(m.get("content"), str)
                            else 0 for m in body.get("messages") or []) // 4)
        usage: dict[str, Any] = {"prompt_tokens": prompt, "completion_tokens": len(pieces),
                                 "total_tokens": prompt + len(pieces)}
        if isinstance(body.get("usage"), dict) and body["usage"].get("include"):
            # usage accounting: the cost in credits (US dollars) at the model's prices
            price = listed[model]["pricing"]
            usage |= {"cost": prompt * float(price["prompt"])
                      + len(pieces) * float(price["completion"]), "is_byok": False}
        events.append(sse_json({"id": "gen-1", "choices": [
            {"index": 0, "delta": {}, "finish_reason": "stop"}], "usage": usage}))
        events.append(sse("[DONE]"))
        return FakeResponse(200, events, content_type="text/event-stream",
                            headers={"X-Generation-Id": "gen-1"})

    @staticmethod
    def audio_parts(body: Any) -> tuple[list[tuple[bytes, str]], str]:
        """The recordings in the messages' ``input_audio`` parts, or why the body is
        refused (a 400)."""
        found: list[tuple[bytes, str]] = []
        for message in body.get("messages") or []:
            content = message.get("content")
            for part in content if isinstance(content, list) else []:
                if not isinstance(part, dict) or part.get("type") != "input_audio":
                    continue
                if message.get("role") != "user":
                    return [], "input_audio is only accepted in user messages"
                given = part.get("input_audio")
                if not isinstance(given, dict) or "inputAudio" in part:
                    return [], "input_audio must be an object with data and format"
                data, fmt = given.get("data"), given.get("format")
                if not isinstance(data, str) or data.startswith("data:"):
                    return [], "input_audio.data must be raw base64 (not a data: URI or URL)"
                if fmt not in AUDIO_FORMATS:
                    return [], f"input_audio.format {fmt!r} is not supported"
                try:
                    raw = base64.b64decode(data, validate=True)
                except (binascii.Error, ValueError):
                    return [], "input_audio.data is not valid base64"
                if fmt == "wav":
                    try:
                        with wave.open(io.BytesIO(raw)) as wav:
                            wav.getnframes()
                    except (wave.Error, EOFError):
                        return [], "input_audio.data is not a WAV file"
                found.append((raw, fmt))
        return found, ""
