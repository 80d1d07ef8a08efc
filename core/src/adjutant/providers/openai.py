"""The one client for OpenAI-compatible servers (text-generation-webui, mlx-lm,
OpenRouter, llama.cpp's servers). Subclasses change the request body and the
model calls; the streaming, errors-in-200-streams, retries and cancellation live here.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator
from contextlib import aclosing, suppress
from typing import Any

from adjutant_hookspecs import (
    CompletionChunk,
    CompletionRequest,
    ModelInfo,
    ProviderCapabilities,
    ProviderError,
    Usage,
)

from ._http import HttpBackend, error_message
from ._streams import sse_data

__all__ = ["OpenAICompatible"]

_FINISH = {"stop": "stop", "eos": "stop", "tool_calls": "stop", "function_call": "stop",
           "length": "length", "content_filter": "stop"}


class OpenAICompatible(HttpBackend):
    """A `Provider` over ``/v1/completions`` (``chat=False``: base models, plain
    prompts) or ``/v1/chat/completions`` (``chat=True``)."""

    name = "openai-compatible"
    label = "the OpenAI-compatible server"
    capabilities = ProviderCapabilities(streaming=True, list_models=True)
    #: Route prefix before ``/completions``, ``/chat/completions`` and ``/models``.
    prefix = "/v1"

    def __init__(self, base_url: str, *, model: str | None = None, chat: bool = True,
                 **options: Any) -> None:
        super().__init__(base_url, **options)
        self.model, self.chat = model, chat

    # -- the request -----------------------------------------------------------------

    def body(self, request: CompletionRequest) -> dict[str, Any]:
        """The JSON body for ``request``; override to add a backend's own fields."""
        body: dict[str, Any] = {"stream": True, "max_tokens": request.max_tokens,
                                "temperature": request.temperature,
                                "stream_options": {"include_usage": True}}
        if (model := request.model or self.model) is not None:
            body["model"] = model
        if request.stop:
            body["stop"] = list(request.stop)
        if self.chat:
            messages = [{"role": "system", "content": request.system}] if request.system else []
            body["messages"] = [*messages, {"role": "user", "content": request.prompt}]
        else:
            body["prompt"] = (f"{request.system}\n\n" if request.system else "") + request.prompt
        if request.json_schema is not None and self.capabilities.json_schema:
            body["response_format"] = {"type": "json_schema", "json_schema": {
                "name": "reply", "strict": True, "schema": request.json_schema}}
        return body

    @property
    def route(self) -> str:
        return f"{self.prefix}/chat/completions" if self.chat else f"{self.prefix}/completions"

    # -- streaming -------------------------------------------------------------------

    async def complete(self, request: CompletionRequest) -> AsyncGenerator[CompletionChunk, None]:
        finish: str | None = None
        usage: Usage | None = None
        done = False
        try:
            async with self.stream("POST", self.route, self.body(request)) as response, \
                    aclosing(response.aiter_bytes()) as raw, aclosing(sse_data(raw)) as events:
                async for data in events:
                    text, reason, reported = self.parse_chunk(data)
                    finish = reason or finish
                    usage = reported or usage
                    if text:
                        yield CompletionChunk(text=text)
            done = True
        finally:
            if not done:
                await self._cancelled()
        if finish is None:
            raise ProviderError(f"{self.label} ended the stream without finishing",
                                hint="try again; the server may have restarted",
                                retryable=True)
        yield CompletionChunk(finish_reason=finish, usage=usage)  # type: ignore[arg-type]

    def parse_chunk(self, data: str) -> tuple[str, str | None, Usage | None]:
        """Text, finish reason and usage of one event; a stream error raises."""
        try:
            chunk = json.loads(data)
        except ValueError as exc:
            raise ProviderError(f"{self.label} sent a malformed event: {data[:200]!r}",
                                hint="the server may be a different API than expected",
                                retryable=True) from exc
        if not isinstance(chunk, dict):
            raise ProviderError(f"{self.label} sent an unexpected event: {data[:200]!r}")
        if "error" in chunk:  # inside a 200 stream: the status is no guide
            raise self.stream_error(chunk)
        choices = chunk.get("choices") or []
        text, reason = "", None
        if choices and isinstance(choices[0], dict):
            choice = choices[0]
            if choice.get("error") or choice.get("finish_reason") == "error":
                raise self.stream_error({"error": choice.get("error") or "finish_reason error"})
            delta = choice.get("delta") or {}
            text = choice.get("text") or (delta.get("content") if isinstance(delta, dict)
                                          else "") or ""
            if (raw := choice.get("finish_reason")) is not None:
                reason = _FINISH.get(str(raw), "stop")
        usage = None
        if isinstance(found := chunk.get("usage"), dict):
            cost = found.get("cost")
            usage = Usage(prompt_tokens=found.get("prompt_tokens"),
                          completion_tokens=found.get("completion_tokens"),
                          cost=float(cost) if isinstance(cost, int | float)
                          and not isinstance(cost, bool) else None)
        return str(text), reason, usage

    def stream_error(self, chunk: dict[str, Any]) -> ProviderError:
        error = chunk.get("error")
        code = error.get("code") if isinstance(error, dict) else None
        status = code if isinstance(code, int) else None
        return ProviderError(f"{self.label} failed mid-stream: {error_message(chunk)}"
                             + (f" (code {code})" if code is not None else ""),
                             hint="the partial answer was discarded; try again",
                             status=status, retryable=status in (None, 429, 502, 503))

    async def _cancelled(self) -> None:
        """The consumer stopped early (cancelled, or an error): the connection is
        closed already; backends with a stop endpoint override `stop_generation`."""
        import anyio  # providers load at every start-up: anyio at first use

        with anyio.CancelScope(shield=True), anyio.move_on_after(5), suppress(ProviderError):
            await self.stop_generation()

    async def stop_generation(self) -> None:
        """Tell the backend to stop (closing the connection is enough for most)."""

    # -- models ----------------------------------------------------------------------

    async def list_models(self) -> list[ModelInfo]:
        found = await self.request_json("GET", f"{self.prefix}/models")
        entries = found.get("data", []) if isinstance(found, dict) else []
        return [ModelInfo(name=str(e["id"]), context_size=e.get("context_length"))
                for e in entries if isinstance(e, dict) and "id" in e]
