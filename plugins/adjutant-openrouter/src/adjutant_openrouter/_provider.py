"""OpenRouter on the shared OpenAI-compatible client."""

from __future__ import annotations

import base64
import copy
import os
from collections.abc import AsyncGenerator, Mapping
from contextlib import aclosing
from typing import Any

from adjutant.providers import OpenAICompatible, error_message
from adjutant_hookspecs import (
    CompletionChunk,
    CompletionRequest,
    ModelInfo,
    ProviderCapabilities,
    ProviderError,
)

__all__ = ["OpenRouter"]

DEFAULT_URL = "https://openrouter.ai/api/v1"
ATTRIBUTION = {"HTTP-Referer": "https://github.com/adjutant-dev/adjutant",
               "X-OpenRouter-Title": "Adjutant"}
AUDIO_FORMATS = ("wav", "mp3", "flac", "ogg", "m4a", "aac", "aiff")


class OpenRouter(OpenAICompatible):
    name = "openrouter"
    label = "OpenRouter"
    prefix = ""  # the base URL already ends in /api/v1
    start_hint = "check your network connection and https://status.openrouter.ai"
    key_hint = "set OPENROUTER_API_KEY to a key from https://openrouter.ai/settings/keys"
    capabilities = ProviderCapabilities(json_schema=True, native_tools=True, audio_input=True,
                                        list_models=True, load_models=True, remote=True)

    def __init__(self, base_url: str = DEFAULT_URL, *, api_key: str | None = None,
                 attribution: Mapping[str, str] | None = None, **options: Any) -> None:
        headers = {**ATTRIBUTION, **(attribution or {})}
        super().__init__(base_url, api_key=api_key, headers=headers, chat=True, **options)
        self._audio: dict[str, Any] | None = None
        self._modalities: dict[str, tuple[str, ...]] = {}

    @classmethod
    def from_environment(cls, env: Mapping[str, str] | None = None) -> OpenRouter:
        env = os.environ if env is None else env
        key = env.get("OPENROUTER_API_KEY") or env.get("ADJUTANT_OPENROUTER_API_KEY")
        return cls(env.get("ADJUTANT_OPENROUTER_URL", DEFAULT_URL), api_key=key or None)

    # -- the request -----------------------------------------------------------------

    def body(self, request: CompletionRequest) -> dict[str, Any]:
        if not self.api_key:
            raise ProviderError("no OpenRouter API key", hint=self.key_hint)
        body = super().body(request)
        body["usage"] = {"include": True}  # the final chunk's usage carries the cost
        if "response_format" in body:  # never routed to a provider that would ignore it
            body["provider"] = {"require_parameters": True}
        if self._audio is not None:
            body["messages"][-1]["content"] = [
                {"type": "text", "text": request.prompt},
                {"type": "input_audio", "input_audio": self._audio}]
        return body

    async def complete_audio(self, request: CompletionRequest, audio: bytes,
                             audio_format: str = "wav") -> AsyncGenerator[CompletionChunk, None]:
        """The request with a recording attached (raw base64 on the wire, no data: URI);
        refused for a model whose listed input modalities lack audio."""
        if audio_format not in AUDIO_FORMATS:
            raise ProviderError(f"audio format {audio_format!r} is not supported",
                                hint=f"use one of {', '.join(AUDIO_FORMATS)}")
        model = request.model or self.model or ""
        modalities = self._modalities.get(model)
        if modalities is not None and "audio" not in modalities:
            raise ProviderError(f"{model} does not take audio input",
                                hint="choose a model whose input modalities include audio")
        # The audio rides on a copy sharing the connection pool, never on this provider:
        # a request planned concurrently on it must not carry someone's recording.
        self._client()  # made here, so `aclose` of this provider closes it
        sender = copy.copy(self)
        sender._audio = {"data": base64.b64encode(audio).decode(), "format": audio_format}
        async with aclosing(sender.complete(request)) as stream:
            async for chunk in stream:
                yield chunk

    def error_for(self, status: int, body: bytes, headers: Mapping[str, str]) -> ProviderError:
        detail = error_message(body)
        if status == 402:
            return ProviderError(f"OpenRouter: no credits left ({detail})", hint="add credits "
                                 "at https://openrouter.ai/settings/credits (a negative "
                                 "balance blocks free models too)", status=status)
        if status == 403:
            reasons = _metadata(body).get("reasons") or []
            why = f"; reasons: {', '.join(map(str, reasons))}" if reasons else ""
            return ProviderError(f"OpenRouter refused the request by moderation ({detail}"
                                 f"{why})", hint="rephrase the request or choose another "
                                 "model", status=status)
        if status == 404 and "audio" in detail.lower():
            return ProviderError(f"OpenRouter: the model does not take audio ({detail})",
                                 hint="choose a model whose input modalities include "
                                      "audio (https://openrouter.ai/models?input_modalities="
                                      "audio)", status=status)
        error = super().error_for(status, body, headers)
        if status == 429:
            limit = headers.get("x-ratelimit-limit")
            reset = headers.get("x-ratelimit-reset")
            extra = "".join([f"; limit {limit}" if limit else "",
                             f"; resets at {reset}" if reset else ""])
            return ProviderError(error.message + extra, hint=error.hint + " (free models: "
                                 "20 requests a minute, 50 a day)", status=status,
                                 retryable=True)
        return error

    # -- models ----------------------------------------------------------------------

    async def list_models(self) -> list[ModelInfo]:
        found = await self.request_json("GET", f"{self.prefix}/models")
        models = []
        for entry in (found or {}).get("data", []):
            if not isinstance(entry, dict) or "id" not in entry:
                continue
            inputs = tuple((entry.get("architecture") or {}).get("input_modalities") or ())
            self._modalities[entry["id"]] = inputs
            caps = tuple(entry.get("supported_parameters") or ()) + tuple(
                f"input:{m}" for m in inputs)
            models.append(ModelInfo(name=entry["id"], context_size=entry.get("context_length"),
                                    capabilities=caps))
        return models

    async def load_model(self, name: str) -> None:
        """Switching is naming another model per request: check the id exists first."""
        if name not in {m.name for m in await self.list_models()}:
            raise ProviderError(f"OpenRouter has no model {name!r}",
                                hint="ids look like `openai/gpt-4o-mini`; see "
                                     "https://openrouter.ai/models")
        self.model = name


def _metadata(body: bytes) -> dict[str, Any]:
    import json

    try:
        error = json.loads(body).get("error", {})
    except (ValueError, AttributeError):
        return {}
    metadata = error.get("metadata") if isinstance(error, dict) else None
    return metadata if isinstance(metadata, dict) else {}
