"""A fake text-generation-webui API, built from its documentation:
sse-starlette framing with ``sep="\\n"`` and ``: ping`` comments, completion chunks
with ``choices[0].text``, a final chunk with ``finish_reason``, a separate usage chunk
with ``choices: []`` (when ``include_usage``), then ``[DONE]``; errors inside the 200
stream; the internal endpoints (health, stop-generation, model info/list/load, the
admin key, the load that blocks, 500 ``Failed to load the model.``, the 307 of a
trailing slash); the error shapes (401 ``{"detail"}``, the Host-header 400, 422)."""

from __future__ import annotations

import json
import threading
from typing import Any

from adjutant.testing.fakeserver import FakeRequest, FakeResponse, FakeServer, sse, sse_json

#: The models in the server's ``user_data/models`` folder.
MODELS = ("gemma-3-270m", "qwen2.5-0.5b")
PING = b": ping - 2026-11-22 10:00:00.000000\n\n"


def ok() -> FakeResponse:
    return FakeResponse(200, json.dumps("OK").encode())


class FakeTextGen(FakeServer):
    """``refusals``: answers given to the next completion requests before a normal one
    (429 with ``Retry-After``, 503...); ``fail_after``: an in-band error event after that
    many pieces; ``hosts``: the Host names accepted (``--listen`` accepts any);
    ``api_key``/``admin_key``: as ``--api-key``/``--admin-key``."""

    def __init__(self, *, pieces: tuple[str, ...] = ("Hel", "lo"), api_key: str | None = None,
                 admin_key: str | None = None, delay: float = 0.0,
                 refusals: list[FakeResponse] | None = None, fail_after: int | None = None,
                 finish: str = "stop", hosts: tuple[str, ...] | None = ("127.0.0.1",
                                                                         "localhost")) -> None:
        super().__init__()
        self.pieces, self.delay, self.finish = pieces, delay, finish
        self.api_key, self.admin_key = api_key, admin_key or api_key
        self.refusals, self.fail_after, self.hosts = list(refusals or []), fail_after, hosts
        self.loaded = MODELS[0]
        self.stopped = threading.Event()
        guarded = {
            ("POST", "/v1/completions"): self.completions,
            ("POST", "/v1/internal/stop-generation"): self.stop,
            ("GET", "/v1/internal/health"): lambda r: FakeResponse.json(200, {"status": "ok"}),
            ("GET", "/v1/internal/model/info"): lambda r: FakeResponse.json(
                200, {"model_name": self.loaded, "lora_names": []}),
            ("GET", "/v1/models"): lambda r: FakeResponse.json(200, {"object": "list", "data": [
                {"id": n, "object": "model", "created": 0, "owned_by": "user"}
                for n in sorted(MODELS, key=lambda n: n != self.loaded)]}),
        }
        admin = {
            ("GET", "/v1/internal/model/list"): lambda r: FakeResponse.json(
                200, {"model_names": list(MODELS)}),
            ("POST", "/v1/internal/model/load"): self.model_load,
            ("POST", "/v1/internal/model/load/"): lambda r: FakeResponse(
                307, b"", headers={"Location": "/v1/internal/model/load"}),
        }
        self.routes.update({k: self._guard(h, self.api_key) for k, h in guarded.items()})
        self.routes.update({k: self._guard(h, self.admin_key) for k, h in admin.items()})

    def _guard(self, handler: Any, key: str | None) -> Any:
        def guarded(request: FakeRequest) -> FakeResponse:
            host = request.headers.get("host", "").rsplit(":", 1)[0]
            if self.hosts is not None and host not in self.hosts:
                return FakeResponse.json(400, {"detail": "Invalid host header"})
            if key and request.headers.get("authorization") != f"Bearer {key}":
                return FakeResponse.json(401, {"detail": "Unauthorized"})
            response: FakeResponse = handler(request)
            return response
        return guarded

    def completions(self, request: FakeRequest) -> FakeResponse:
        if self.refusals:
            return self.refusals.pop(0)
        body = request.json()
        if not isinstance(body.get("prompt"), str | list):
            return FakeResponse.json(422, {"detail": [{"type": "missing", "loc": ["body",
                                                                                  "prompt"]}]})
        events: list[bytes | float] = [PING]
        for index, piece in enumerate(self.pieces):
            if index == self.fail_after:
                events.append(sse_json({"error": {"message": "CUDA out of memory",
                                                  "type": "server_error", "param": None,
                                                  "code": None}}))
                return FakeResponse(200, events, content_type="text/event-stream")
            if self.delay:
                events += [self.delay, PING]
            events.append(sse_json({"id": "conv-1", "object": "text_completion",
                                    "created": 0, "model": self.loaded,
                                    "choices": [{"index": 0, "text": piece,
                                                 "finish_reason": None, "logprobs": None}]}))
        events.append(sse_json({"id": "conv-1", "object": "text_completion", "created": 0,
                                "model": self.loaded, "choices": [
                                    {"index": 0, "text": "", "finish_reason": self.finish,
                                     "logprobs": None}]}))
        if (body.get("stream_options") or {}).get("include_usage"):
            events.append(sse_json({"id": "conv-1", "object": "text_completion",
                                    "choices": [], "usage": {
                                        "prompt_tokens": 5,
                                        "completion_tokens": len(self.pieces),
                                        "total_tokens": 5 + len(self.pieces)}}))
        events.append(sse("[DONE]"))
        return FakeResponse(200, events, content_type="text/event-stream")

    def stop(self, request: FakeRequest) -> FakeResponse:
        self.stopped.set()
        return ok()

    def model_load(self, request: FakeRequest) -> FakeResponse:
        name = request.json()["model_name"]
        if name not in MODELS:
            return FakeResponse.json(500, {"detail": "Failed to load the model."})
        self.loaded = name
        return ok()


def last_body(server: FakeServer, path: str) -> Any:
    return [r for r in server.requests if r.path == path][-1].json()
