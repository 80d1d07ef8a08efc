"""A fake Ollama from its API documentation: NDJSON lines with ``done:false``, a final
``done:true`` line with ``done_reason`` and durations in nanoseconds; a mid-stream
``{"error"}`` line under HTTP 200; ``{"error": "..."}`` bodies (404 unknown model,
400 missing capability, 429 with ``Retry-After``, 503 busy); tags, ps, show;
preload/unload with an empty request (``done_reason`` ``load``/``unload``); and silent
truncation of long prompts to ``num_ctx`` (only ``prompt_eval_count`` tells)."""

from __future__ import annotations

import json
from typing import Any

from adjutant.testing.fakeserver import FakeRequest, FakeResponse, FakeServer

#: Installed models and their ``/api/show`` capabilities.
MODELS = {"qwen2.5:0.5b": ["completion", "tools"], "gemma3:270m": ["completion"]}
#: Modelfile parameters ``/api/show`` reports (``num_ctx`` set for one model).
PARAMETERS = {"qwen2.5:0.5b": 'stop "<|im_end|>"\nnum_ctx 2048',
              "gemma3:270m": "temperature 1"}
NDJSON = "application/x-ndjson"


def line(payload: Any) -> bytes:
    return json.dumps(payload).encode() + b"\n"


def error(status: int, message: str, **headers: str) -> FakeResponse:
    return FakeResponse.json(status, {"error": message}, **headers)


BUSY = error(503, "server busy, please try again.  maximum pending requests exceeded")


class FakeOllama(FakeServer):
    """``refusals``: answers given to the next ``/api/chat`` requests before a normal
    one (429, 503...); ``fail_after``: an error line after that many pieces; ``cut_after``:
    the stream ends there without a ``done`` line; ``split``: every line is written in
    two parts with a pause between (reads split anywhere); ``context``: the server's
    context size when the request names none (OLLAMA_CONTEXT_LENGTH)."""

    def __init__(self, pieces: tuple[str, ...] = ("Hel", "lo"), *, fail_after: int | None = None,
                 cut_after: int | None = None, busy: int = 0,
                 refusals: list[FakeResponse] | None = None, delay: float = 0.0,
                 done_reason: str = "stop", split: bool = False, context: int = 4096) -> None:
        super().__init__()
        self.pieces, self.fail_after, self.cut_after = pieces, fail_after, cut_after
        self.refusals = [*(refusals or []), *[BUSY] * busy]
        self.delay, self.done_reason, self.split, self.context = delay, done_reason, split, context
        self.running: set[str] = set()
        self.routes.update({
            ("POST", "/api/chat"): self.chat,
            ("POST", "/api/generate"): self.generate,
            ("GET", "/api/tags"): lambda r: FakeResponse.json(200, {"models": [
                {"name": n, "model": n, "modified_at": "2026-11-01T10:00:00Z", "size": 1,
                 "digest": "sha256:0", "details": {"format": "gguf", "family": "x",
                                                   "parameter_size": "0.5B",
                                                   "quantization_level": "Q4_K_M"}}
                for n in MODELS]}),
            ("GET", "/api/ps"): lambda r: FakeResponse.json(200, {"models": [
                {"name": n, "model": n, "expires_at": "2026-11-22T12:00:00Z", "size_vram": 1}
                for n in sorted(self.running)]}),
            ("POST", "/api/show"): self.show,
        })

    def _emit(self, payload: Any) -> list[bytes | float]:
        data = line(payload)
        if not self.split:
            return [data]
        return [data[:7], 0.01, data[7:]]

    def chat(self, request: FakeRequest) -> FakeResponse:
        if self.refusals:
            return self.refusals.pop(0)
        body = request.json()
        if body["model"] not in MODELS:
            return error(404, f"model '{body['model']}' not found")
        if body.get("tools") and "tools" not in MODELS[body["model"]]:
            return error(400, f"registry.ollama.ai/library/{body['model']} does not support "
                              "tools")
        self.running.add(body["model"])
        num_ctx = body.get("options", {}).get("num_ctx", self.context)
        prompt_tokens = sum(len(m["content"]) for m in body["messages"]) // 4 + 10
        events: list[bytes | float] = []
        for index, piece in enumerate(self.pieces):
            if self.fail_after is not None and index == self.fail_after:
                events += self._emit({"error": "an error was encountered while running the "
                                               "model: unexpected EOF"})
                return FakeResponse(200, events, content_type=NDJSON)
            if self.cut_after is not None and index == self.cut_after:
                return FakeResponse(200, events, content_type=NDJSON)
            if self.delay:
                events.append(self.delay)
            events += self._emit({"model": body["model"], "created_at": "2026-11-22T10:00:00Z",
                                  "message": {"role": "assistant", "content": piece},
                                  "done": False})
        events += self._emit({
            "model": body["model"], "created_at": "2026-11-22T10:00:01Z",
            "message": {"role": "assistant", "content": ""}, "done": True,
            "done_reason": self.done_reason, "total_duration": 5_000_000_000,
            "load_duration": 1_000_000, "prompt_eval_count": min(prompt_tokens, num_ctx),
            "prompt_eval_duration": 100_000_000, "eval_count": len(self.pieces),
            "eval_duration": 900_000_000})
        return FakeResponse(200, events, content_type=NDJSON)

    def generate(self, request: FakeRequest) -> FakeResponse:
        body = request.json()
        if body["model"] not in MODELS:
            return error(404, f"model '{body['model']}' not found")
        unload = body.get("keep_alive") == 0
        (self.running.discard if unload else self.running.add)(body["model"])
        return FakeResponse.json(200, {"model": body["model"],
                                       "created_at": "2026-11-22T10:00:00Z", "response": "",
                                       "done": True,
                                       "done_reason": "unload" if unload else "load"})

    def show(self, request: FakeRequest) -> FakeResponse:
        model = request.json()["model"]
        if model not in MODELS:
            return error(404, f"model '{model}' not found")
        return FakeResponse.json(200, {"modelfile": "", "parameters": PARAMETERS[model],
                                       "template": "{{ .Prompt }}", "details": {},
                                       "model_info": {}, "capabilities": MODELS[model]})
