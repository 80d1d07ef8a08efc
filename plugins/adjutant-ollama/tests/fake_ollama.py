"""A fake Ollama from PROTOCOLS.md section 1: NDJSON lines with ``done:false``, a final
``done:true`` line with ``done_reason`` and durations in nanoseconds; a mid-stream
``{"error"}`` line under HTTP 200; ``{"error": "..."}`` bodies (404 unknown model,
503 busy); tags, ps, show; preload/unload with an empty request; and silent
truncation of long prompts to ``num_ctx`` (only ``prompt_eval_count`` tells)."""

from __future__ import annotations

import json
from typing import Any

from adjutant.testing.fakeserver import FakeRequest, FakeResponse, FakeServer

MODELS = {"qwen2.5:0.5b": ["completion", "tools"], "gemma3:270m": ["completion"]}


def line(payload: Any) -> bytes:
    return json.dumps(payload).encode() + b"\n"


class FakeOllama(FakeServer):
    def __init__(self, pieces: tuple[str, ...] = ("Hel", "lo"), *, fail_after: int | None = None,
                 busy: int = 0, delay: float = 0.0) -> None:
        super().__init__()
        self.pieces, self.fail_after, self.busy, self.delay = pieces, fail_after, busy, delay
        self.running: set[str] = set()
        self.routes.update({
            ("POST", "/api/chat"): self.chat,
            ("POST", "/api/generate"): self.generate,
            ("GET", "/api/tags"): lambda r: FakeResponse.json(200, {"models": [
                {"name": n, "model": n, "size": 1, "details": {"family": "x"}} for n in MODELS]}),
            ("GET", "/api/ps"): lambda r: FakeResponse.json(200, {"models": [
                {"name": n, "expires_at": "2026-11-22T12:00:00Z"} for n in self.running]}),
            ("POST", "/api/show"): self.show,
        })

    def chat(self, request: FakeRequest) -> FakeResponse:
        if self.busy:
            self.busy -= 1
            return FakeResponse.json(503, {"error": "server busy, please try again.  maximum "
                                                    "pending requests exceeded"})
        body = request.json()
        if body["model"] not in MODELS:
            return FakeResponse.json(404, {"error": f"model '{body['model']}' not found"})
        self.running.add(body["model"])
        num_ctx = body.get("options", {}).get("num_ctx", 4096)
        prompt_tokens = sum(len(m["content"]) for m in body["messages"]) // 4
        events: list[bytes | float] = []
        for index, piece in enumerate(self.pieces):
            if self.fail_after is not None and index == self.fail_after:
                events.append(line({"error": "an error was encountered while running the "
                                             "model: unexpected EOF"}))
                return FakeResponse(200, events, content_type="application/x-ndjson")
            if self.delay:
                events.append(self.delay)
            events.append(line({"model": body["model"], "created_at": "2026-11-22T10:00:00Z",
                                "message": {"role": "assistant", "content": piece},
                                "done": False}))
        events.append(line({"model": body["model"], "created_at": "2026-11-22T10:00:01Z",
                            "message": {"role": "assistant", "content": ""}, "done": True,
                            "done_reason": "stop", "total_duration": 5_000_000_000,
                            "load_duration": 1_000_000, "prompt_eval_count":
                                min(prompt_tokens, num_ctx),
                            "prompt_eval_duration": 100_000_000,
                            "eval_count": len(self.pieces), "eval_duration": 900_000_000}))
        return FakeResponse(200, events, content_type="application/x-ndjson")

    def generate(self, request: FakeRequest) -> FakeResponse:
        body = request.json()
        if body["model"] not in MODELS:
            return FakeResponse.json(404, {"error": f"model '{body['model']}' not found"})
        unload = body.get("keep_alive") == 0
        (self.running.discard if unload else self.running.add)(body["model"])
        return FakeResponse.json(200, {"model": body["model"], "response": "", "done": True,
                                       "done_reason": "unload" if unload else "load"})

    def show(self, request: FakeRequest) -> FakeResponse:
        model = request.json()["model"]
        if model not in MODELS:
            return FakeResponse.json(404, {"error": f"model '{model}' not found"})
        return FakeResponse.json(200, {"modelfile": "", "parameters": "", "template": "",
                                       "details": {}, "model_info": {},
                                       "capabilities": MODELS[model]})
