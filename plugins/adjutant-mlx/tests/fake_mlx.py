"""A fake mlx-lm server, from its documentation and source: chat chunks with ``: keepalive``
comments during prompt processing, a finish chunk, an optional usage chunk, then
``[DONE]``; errors as ``{"error": "<string>"}``; 411 without Content-Length; empty
output (no error) when ``response_format`` is sent (mlx-lm #1007)."""

from __future__ import annotations

from typing import Any

from adjutant.testing.fakeserver import FakeRequest, FakeResponse, FakeServer, sse, sse_json

MODELS = ["mlx-community/Qwen2.5-0.5B-Instruct-4bit", "mlx-community/gemma-3-1b-it-4bit"]


class FakeMlx(FakeServer):
    def __init__(self, pieces: tuple[str, ...] = ("Hel", "lo")) -> None:
        super().__init__()
        self.pieces = pieces
        self.routes.update({
            ("POST", "/v1/chat/completions"): self.chat,
            ("GET", "/v1/models"): lambda r: FakeResponse.json(
                200, {"object": "list", "data": [{"id": m} for m in MODELS]}),
            ("GET", "/health"): lambda r: FakeResponse.json(200, {"status": "ok"}),
        })

    def chat(self, request: FakeRequest) -> FakeResponse:
        if "content-length" not in request.headers:
            return FakeResponse(411, b"Length Required", content_type="text/plain")
        try:
            body: Any = request.json()
        except ValueError:
            return FakeResponse.json(400, {"error": "Invalid JSON in request body"})
        model = body.get("model", "default_model")
        if model not in [*MODELS, "default_model"]:
            return FakeResponse.json(404, {"error": f"Failed to load model {model}"})
        pieces = () if "response_format" in body else self.pieces
        events: list[bytes | float] = [b": keepalive 256/512\n\n", b": keepalive 512/512\n\n"]
        events += [sse_json({"choices": [{"index": 0, "delta": {"content": p},
                                          "finish_reason": None}]}) for p in pieces]
        events.append(sse_json({"choices": [{"index": 0, "delta": {},
                                             "finish_reason": "stop"}]}))
        events.append(sse_json({"choices": [], "usage": {"prompt_tokens": 9,
                                                         "completion_tokens": len(pieces)}}))
        events.append(sse("[DONE]"))
        return FakeResponse(200, events, content_type="text/event-stream")
