"""A fake text-generation-webui API, built from PROTOCOLS.md section 2: sse-starlette
framing with ``sep="\\n"`` and ``: ping`` comments, a role-less completion stream, a
final chunk with ``finish_reason``, a separate usage chunk with ``choices: []``, then
``[DONE]``; the internal model endpoints (admin key), stop-generation, and the error
shapes (401 ``{"detail"}``, Host-header 400, load failure 500)."""

from __future__ import annotations

import json
import threading
from typing import Any

from adjutant.testing.fakeserver import FakeRequest, FakeResponse, FakeServer, sse, sse_json


class FakeTextGen(FakeServer):
    def __init__(self, *, pieces: tuple[str, ...] = ("Hel", "lo"), admin_key: str | None = None,
                 delay: float = 0.0) -> None:
        super().__init__()
        self.pieces, self.admin_key, self.delay = pieces, admin_key, delay
        self.loaded = "gemma-3-270m"
        self.stopped = threading.Event()
        self.routes.update({
            ("POST", "/v1/completions"): self.completions,
            ("POST", "/v1/internal/stop-generation"): self.stop,
            ("GET", "/v1/internal/model/list"): self.model_list,
            ("GET", "/v1/internal/model/info"): self.model_info,
            ("POST", "/v1/internal/model/load"): self.model_load,
            ("GET", "/v1/models"): lambda r: FakeResponse.json(
                200, {"object": "list", "data": [{"id": self.loaded}]}),
        })

    def _admin(self, request: FakeRequest) -> FakeResponse | None:
        if self.admin_key and request.headers.get("authorization") != f"Bearer {self.admin_key}":
            return FakeResponse.json(401, {"detail": "Unauthorized"})
        return None

    def completions(self, request: FakeRequest) -> FakeResponse:
        body = request.json()
        events: list[bytes | float] = [b": ping - 2026-11-22 10:00:00.000000\n\n"]
        for piece in self.pieces:
            if self.delay:
                events.append(self.delay)
            events.append(sse_json({"id": "cmpl-1", "object": "text_completion",
                                    "choices": [{"index": 0, "text": piece,
                                                 "finish_reason": None}]}))
        events.append(sse_json({"choices": [{"index": 0, "text": "",
                                             "finish_reason": "stop"}]}))
        if body.get("stream_options", {}).get("include_usage"):
            events.append(sse_json({"choices": [], "usage": {"prompt_tokens": 5,
                                                             "completion_tokens": 2}}))
        events.append(sse("[DONE]"))
        return FakeResponse(200, events, content_type="text/event-stream")

    def stop(self, request: FakeRequest) -> FakeResponse:
        self.stopped.set()
        return FakeResponse(200, json.dumps("OK").encode())

    def model_list(self, request: FakeRequest) -> FakeResponse:
        return self._admin(request) or FakeResponse.json(
            200, {"model_names": ["gemma-3-270m", "qwen2.5-0.5b"]})

    def model_info(self, request: FakeRequest) -> FakeResponse:
        return FakeResponse.json(200, {"model_name": self.loaded, "lora_names": []})

    def model_load(self, request: FakeRequest) -> FakeResponse:
        if denied := self._admin(request):
            return denied
        name = request.json()["model_name"]
        if name not in ("gemma-3-270m", "qwen2.5-0.5b"):
            return FakeResponse.json(500, {"detail": "Failed to load the model."})
        self.loaded = name
        return FakeResponse(200, json.dumps("OK").encode())


def last_body(server: FakeServer, path: str) -> Any:
    return [r for r in server.requests if r.path == path][-1].json()
