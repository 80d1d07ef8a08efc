"""Ollama's native API: NDJSON streaming on the shared HTTP plumbing."""

from __future__ import annotations

import json
import os
import re
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

__all__ = ["DEFAULT_CONTEXT", "DEFAULT_URL", "Ollama", "truncation_warning"]

DEFAULT_URL = "http://127.0.0.1:11434"
#: Ollama's default context window (older builds: 2048).
DEFAULT_CONTEXT = 4096
#: Context sizes a server may be running with when the request did not say
#: (defaults old and new, and the usual OLLAMA_CONTEXT_LENGTH settings).
LIKELY_WINDOWS = (2048, 4096, 8192, 16384, 32768, 65536, 131072)
_NUM_CTX = re.compile(r"^\s*num_ctx\s+(\d+)\s*$", re.MULTILINE)


def _keep_alive(value: str | int | float) -> str | int | float:
    """``"10m"`` stays a duration; ``"300"``/``"-1"`` become numbers (seconds), which is
    what Ollama takes (a bare number in a string is rejected as a duration)."""
    if isinstance(value, str) and re.fullmatch(r"-?\d+(\.\d+)?", value.strip()):
        number = float(value)
        return int(number) if number.is_integer() else number
    return value


class Ollama(HttpBackend):
    """A `Provider` over Ollama's ``/api/chat``.

    Without arguments, configured from the environment when constructed:
    ``ADJUTANT_OLLAMA_URL`` or ``OLLAMA_HOST`` (a bare ``host:port`` is accepted),
    ``ADJUTANT_OLLAMA_KEEP_ALIVE`` or ``OLLAMA_KEEP_ALIVE`` (default ``"5m"``) and
    ``ADJUTANT_OLLAMA_MODEL`` (the default model)."""

    name = "ollama"
    label = "Ollama"
    start_hint = "start it with `ollama serve`"
    capabilities = ProviderCapabilities(json_schema=True, native_tools=True, list_models=True,
                                        load_models=True)

    def __init__(self, base_url: str | None = None, *, model: str | None = None,
                 keep_alive: str | int | float | None = None,
                 env: Mapping[str, str] | None = None, **options: Any) -> None:
        env = os.environ if env is None else env
        if base_url is None:
            base_url = env.get("ADJUTANT_OLLAMA_URL") or env.get("OLLAMA_HOST") or DEFAULT_URL
        if "://" not in base_url:  # OLLAMA_HOST is often host:port
            base_url = f"http://{base_url}"
        if keep_alive is None:
            keep_alive = (env.get("ADJUTANT_OLLAMA_KEEP_ALIVE") or env.get("OLLAMA_KEEP_ALIVE")
                          or "5m")
        super().__init__(base_url, **options)
        self.model = model or env.get("ADJUTANT_OLLAMA_MODEL") or None
        self.keep_alive = _keep_alive(keep_alive)
        #: Context sizes learnt from ``/api/show`` (a Modelfile's ``num_ctx``), per model.
        self.known_context: dict[str, int] = {}

    @classmethod
    def from_environment(cls, env: Mapping[str, str] | None = None) -> Ollama:
        return cls(env=env)

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
            model = message.split("'")[1] if message.count("'") >= 2 else "<model>"
            return ProviderError(f"Ollama: {message}", hint=f"pull it with `ollama pull "
                                 f"{model}`", status=status)
        if status == 400 and "does not support" in message:
            return ProviderError(f"Ollama: {message}", hint="choose a model with that "
                                 "capability (`ollama show <model>` lists them)", status=status)
        return super().error_for(status, body, headers)

    # -- streaming -------------------------------------------------------------------

    async def complete(self, request: CompletionRequest) -> AsyncGenerator[CompletionChunk, None]:
        """Cancelling the iteration leaves `stream`'s block, which closes the
        connection: Ollama stops generating when its client goes away."""
        body = self.body(request)
        final: dict[str, Any] | None = None
        async with self.stream("POST", "/api/chat", body) as response, \
                aclosing(response.aiter_bytes()) as raw, aclosing(ndjson_lines(raw)) as lines:
            async for line in lines:
                try:
                    item = json.loads(line)
                except ValueError as exc:
                    raise ProviderError(f"Ollama sent a malformed line: {line[:200]!r}",
                                        hint="is this URL really Ollama's native API?",
                                        retryable=True) from exc
                if not isinstance(item, dict):
                    raise ProviderError(f"Ollama sent an unexpected line: {line[:200]!r}")
                if "error" in item:  # mid-stream, under HTTP 200
                    raise ProviderError(f"Ollama failed mid-stream: {error_message(item)}",
                                        hint="the partial answer was discarded; try again",
                                        retryable=True)
                message = item.get("message")
                text = (message.get("content") if isinstance(message, dict) else None) \
                    or item.get("response")
                if text:
                    yield CompletionChunk(text=str(text))
                if item.get("done"):
                    final = item
                    break
        if final is None:
            raise ProviderError("Ollama ended the stream without finishing",
                                hint="try again; the server may have restarted or run out "
                                     "of memory (see `ollama serve`'s log)", retryable=True)
        reason: Literal["stop", "length"] = \
            "length" if final.get("done_reason") == "length" else "stop"
        usage = Usage(prompt_tokens=_count(final.get("prompt_eval_count")),
                      completion_tokens=_count(final.get("eval_count")))
        window = body["options"].get("num_ctx") or self.known_context.get(body["model"])
        warning = truncation_warning(request.system, request.prompt, usage.prompt_tokens,
                                     window)
        yield CompletionChunk(finish_reason=reason, usage=usage,
                              warnings=(warning,) if warning else ())

    # -- models ----------------------------------------------------------------------

    async def list_models(self) -> list[ModelInfo]:
        tags = await self.request_json("GET", "/api/tags")
        running = await self.request_json("GET", "/api/ps")
        loaded = {m.get("name") for m in _models(running)} | {m.get("model")
                                                              for m in _models(running)}
        return [ModelInfo(name=str(m["name"]), loaded=m["name"] in loaded,
                          context_size=self.known_context.get(str(m["name"])))
                for m in _models(tags) if "name" in m]

    async def show(self, model: str) -> dict[str, Any]:
        """``/api/show`` for ``model``; remembers a Modelfile's ``num_ctx`` (used to
        recognise a silently truncated prompt)."""
        shown = await self.request_json("POST", "/api/show", {"model": model})
        shown = shown if isinstance(shown, dict) else {}
        if found := _NUM_CTX.search(str(shown.get("parameters") or "")):
            self.known_context[model] = int(found.group(1))
        return shown

    async def capabilities_for(self, model: str) -> tuple[str, ...]:
        """What Ollama says the model can do (``completion``, ``tools``, ``vision``...)."""
        return tuple(str(c) for c in (await self.show(model)).get("capabilities") or ())

    async def load_model(self, name: str) -> None:
        """Preload ``name`` (a request without messages) and make it the default model."""
        await self.request_json("POST", "/api/generate", {"model": name,
                                                          "keep_alive": self.keep_alive})
        self.model = name

    async def unload_model(self, name: str) -> None:
        """Free ``name``'s memory now (``keep_alive: 0``)."""
        await self.request_json("POST", "/api/generate", {"model": name, "keep_alive": 0})


def truncation_warning(system: str, prompt: str, counted: int | None,
                       window: int | None) -> str | None:
    """Ollama cuts a prompt longer than its context from the front without an error;
    the only trace is ``prompt_eval_count``. The prompt was cut when that count sits at
    the context size (the request's or the Modelfile's ``num_ctx``; otherwise one of the
    usual sizes) while the text is clearly longer (about 4 characters a token)."""
    if counted is None or counted <= 0:
        return None
    estimate = (len(system) + len(prompt)) // 4
    if estimate <= counted * 1.1:
        return None
    windows = (window,) if window else LIKELY_WINDOWS
    if not any(0.9 * w <= counted <= w for w in windows):
        return None
    size = f" ({window})" if window else ""
    return (f"the prompt was cut to {counted} tokens by Ollama's context size{size}; "
            "raise num_ctx (the preset's context_size) or OLLAMA_CONTEXT_LENGTH, "
            "or shorten the prompt")


def _models(found: Any) -> list[dict[str, Any]]:
    models = found.get("models") if isinstance(found, dict) else None
    return [m for m in models or () if isinstance(m, dict)]


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None
