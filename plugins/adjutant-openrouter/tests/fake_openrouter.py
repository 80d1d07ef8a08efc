"""A fake OpenRouter from PROTOCOLS.md section 3: SSE chunks with
``: OPENROUTER PROCESSING`` comments anywhere (also before the first token), usage on
the final chunk, ``[DONE]``; errors as ``{"error": {"code", "message", "metadata"}}``
with the status equal to the code before streaming, and in-band after tokens were
sent (HTTP 200, a top-level ``error`` whose code may be a string, finish_reason
"error", sometimes empty ``choices``); 429 with Retry-After and X-RateLimit-*; models."""

from __future__ import annotations

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
]


class FakeOpenRouter(FakeServer):
    def __init__(self, pieces: tuple[str, ...] = ("Hel", "lo"), *, key: str = "sk-or-v1-test",
                 mode: str = "ok", delay: float = 0.0) -> None:
        super().__init__()
        self.pieces, self.key, self.mode, self.delay = pieces, key, mode, delay
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
                                     **{"Retry-After": "0.05", "X-RateLimit-Limit": "20",
                                        "X-RateLimit-Remaining": "0",
                                        "X-RateLimit-Reset": "1763812800000"})
        body: Any = request.json()
        events: list[bytes | float] = [b": OPENROUTER PROCESSING\n\n"]
        for index, piece in enumerate(self.pieces):
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
        events.append(sse_json({"id": "gen-1", "choices": [
            {"index": 0, "delta": {}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 12, "completion_tokens": len(self.pieces),
                      "total_tokens": 12 + len(self.pieces)}}))
        events.append(sse("[DONE]"))
        return FakeResponse(200, events, content_type="text/event-stream",
                            headers={"X-Generation-Id": "gen-1"})
