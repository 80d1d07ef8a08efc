"""Ollama's native API: NDJSON streaming on the shared HTTP plumbing."""

from __future__ import annotations

import json
import os
from collections.abc import AsyncGenerator, Mapping
from contextlib import aclosing
from typing import Any, Literal

from adjutant.providers import HttpBackend, error_message, ndjson_lines
from adjutant_hookspecs import (
    CompletionChunk,
    CompletionRequest,
    ModelInfo,
    ProviderCapabilities,
    ProviderError,
    Usage,
)

__all__ = ["Ollama"]

DEFAULT_URL = "http://127.0.0.1:11434"
#: Ollama's default context window (older builds: 2048).
DEFAULT_CONTEXT = 4096


class Ollama(HttpBackend):
    name = "ollama"
    label = "Ollama"
    start_hint = "start it with `ollama serve`"
    capabilities = ProviderCapabilities(json_schema=True, native_tools=True, list_models=True,
                                        load_models=True)

    def __init__(self, base_url: str = DEFAULT_URL, *, model: str | None = None,
                 keep_alive: str | int = "5m", **options: Any) -> None:
        super().__init__(base_url, **options)
        self.model, self.keep_alive = model, keep_alive

    @classmethod
    def from_environment(cls, env: Mapping[str, str] | None = None) -> Ollama:
        env = os.environ if env is None else env
        url = env.get("ADJUTANT_OLLAMA_URL") or env.get("OLLAMA_HOST") or DEFAULT_URL
        if "://" not in url:  # OLLAMA_HOST is often host:port
            url = f"http://{url}"
        return cls(url, keep_alive=env.get("ADJUTANT_OLLAMA_KEEP_ALIVE", "5m"))

    # -- the request -----------------------------------------------------------------

    def body(self, request: CompletionRequest) -> dict[str, Any]:
        model = request.model or self.model
        if not model:
            raise ProviderError("no Ollama model chosen", hint="set the preset's model to "
                                "one `ollama list` shows")
        options: dict[str, Any] = {"temperature": request.temperature,
                                   "num_predict": request.max_tokens}
        if request.stop:
            options["stop"] = list(request.stop)
        if request.context_size:
            options["num_ctx"] = request.context_size
        messages = [{"role": "system", "content": request.system}] if request.system else []
        body: dict[str, Any] = {
            "model": model, "stream": True, "keep_alive": self.keep_alive, "options": options,
            "messages": [*messages, {"role": "user", "content": request.prompt}]}
        if request.json_schema is not None:
            body["format"] = request.json_schema
        return body

    def error_for(self, status: int, body: bytes, headers: Mapping[str, str]) -> ProviderError:
        message = error_message(body)
        if status == 404 and "not found" in message:
            model = message.split("'")[1] if message.count("'") >= 2 else "the model"
            return ProviderError(f"Ollama: {message}", hint=f"pull it with `ollama pull "
                                 f"{model}`", status=status)
        if status == 400 and "does not support" in message:
            return ProviderError(f"Ollama: {message}", hint="choose a model with that "
                                 "capability (`ollama show <model>`)", status=status)
        return super().error_for(status, body, headers)

    # -- streaming -------------------------------------------------------------------

    async def complete(self, request: CompletionRequest) -> AsyncGenerator[CompletionChunk, None]:
        body = self.body(request)
        final: dict[str, Any] | None = None
        async with self.stream("POST", "/api/chat", body) as response, \
                aclosing(response.aiter_bytes()) as raw, aclosing(ndjson_lines(raw)) as lines:
            async for line in lines:
                try:
                    item = json.loads(line)
                except ValueError as exc:
                    raise ProviderError(f"Ollama sent a malformed line: {line[:200]!r}",
                                        retryable=True) from exc
                if "error" in item:  # mid-stream, under HTTP 200
                    raise ProviderError(f"Ollama failed mid-stream: {item['error']}",
                                        hint="the partial answer was discarded; try again",
                                        retryable=True)
                text = (item.get("message") or {}).get("content") or item.get("response")
                if text:
                    yield CompletionChunk(text=text)
                if item.get("done"):
                    final = item
                    break
        if final is None:
            raise ProviderError("Ollama ended the stream without finishing",
                                hint="try again; the server may have restarted",
                                retryable=True)
        reason: Literal["stop", "length"] = \
            "length" if final.get("done_reason") == "length" else "stop"
        usage = Usage(prompt_tokens=final.get("prompt_eval_count"),
                      completion_tokens=final.get("eval_count"))
        warnings = _truncation(request, body, final)
        yield CompletionChunk(finish_reason=reason, usage=usage, warnings=warnings)

    # -- models ----------------------------------------------------------------------

    async def list_models(self) -> list[ModelInfo]:
        tags = await self.request_json("GET", "/api/tags")
        running = await self.request_json("GET", "/api/ps")
        loaded = {m.get("name") for m in (running or {}).get("models", [])}
        return [ModelInfo(name=m["name"], loaded=m["name"] in loaded)
                for m in (tags or {}).get("models", []) if "name" in m]

    async def capabilities_for(self, model: str) -> tuple[str, ...]:
        """What Ollama says the model can do (``completion``, ``tools``, ``vision``...)."""
        shown = await self.request_json("POST", "/api/show", {"model": model})
        return tuple((shown or {}).get("capabilities", []))

    async def load_model(self, name: str) -> None:
        """Preload ``name`` (an empty request) and make it the default model."""
        await self.request_json("POST", "/api/generate", {"model": name,
                                                          "keep_alive": self.keep_alive})
        self.model = name

    async def unload_model(self, name: str) -> None:
        await self.request_json("POST", "/api/generate", {"model": name, "keep_alive": 0})


def _truncation(request: CompletionRequest, body: dict[str, Any],
                final: dict[str, Any]) -> tuple[str, ...]:
    """Ollama cuts a long prompt from the front without an error; the only trace is
    ``prompt_eval_count``. A prompt that filled the context while its text is clearly
    longer was cut."""
    counted = final.get("prompt_eval_count")
    if not isinstance(counted, int):
        return ()
    window = body["options"].get("num_ctx") or DEFAULT_CONTEXT
    estimate = (len(request.prompt) + len(request.system)) // 4  # ~4 characters a token
    if counted >= window * 0.95 and estimate > counted * 1.1:
        return (f"Ollama cut the prompt to {counted} tokens (its context size is {window}); "
                "raise `context_size` in the preset (num_ctx) or OLLAMA_CONTEXT_LENGTH, "
                "or shorten the request",)
    return ()
