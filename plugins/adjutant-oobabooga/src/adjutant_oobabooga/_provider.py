"""The provider: the shared OpenAI-compatible client plus this server's extras."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from adjutant.providers.openai import OpenAICompatible
from adjutant_hookspecs import CompletionRequest, ModelInfo, ProviderCapabilities, ProviderError

__all__ = ["TextGenerationWebUI"]

DEFAULT_URL = "http://127.0.0.1:5000"


class TextGenerationWebUI(OpenAICompatible):
    name = "oobabooga"
    label = "text-generation-webui"
    start_hint = "start text-generation-webui with --api (it listens on port 5000)"
    key_hint = "set ADJUTANT_OOBABOOGA_API_KEY to the server's --api-key"
    capabilities = ProviderCapabilities(grammar=True, list_models=True, load_models=True)

    def __init__(self, base_url: str = DEFAULT_URL, **options: Any) -> None:
        options.setdefault("chat", False)  # base models and our own prompts: completions
        super().__init__(base_url, **options)

    @classmethod
    def from_environment(cls, env: Mapping[str, str] | None = None) -> TextGenerationWebUI:
        env = os.environ if env is None else env
        return cls(env.get("ADJUTANT_OOBABOOGA_URL", DEFAULT_URL),
                   api_key=env.get("ADJUTANT_OOBABOOGA_API_KEY") or None)

    def body(self, request: CompletionRequest) -> dict[str, Any]:
        body = super().body(request)
        body.pop("model", None)  # "Unused": the loaded model answers; switch with load_model
        if request.grammar:
            body["grammar_string"] = request.grammar
        return body

    def error_for(self, status: int, body: bytes, headers: Mapping[str, str]) -> ProviderError:
        if status == 400 and b"Invalid host header" in body:
            return ProviderError(f"{self.label} refused the Host header of {self.base_url}",
                                 hint="start it with --listen (or --public-api), or use "
                                      "127.0.0.1/localhost in ADJUTANT_OOBABOOGA_URL",
                                 status=status)
        return super().error_for(status, body, headers)

    async def stop_generation(self) -> None:
        """Closing the connection does not stop generation here: ask for it."""
        await self.request_json("POST", "/v1/internal/stop-generation")

    async def list_models(self) -> list[ModelInfo]:
        try:
            found = await self.request_json("GET", "/v1/internal/model/list")
            names = [str(n) for n in found.get("model_names", [])]
        except ProviderError as exc:
            if exc.status not in (401, 403, 404):
                raise
            return await super().list_models()  # no admin key: the public list
        info = await self.request_json("GET", "/v1/internal/model/info")
        loaded = info.get("model_name") if isinstance(info, dict) else None
        return [ModelInfo(name=n, loaded=n == loaded) for n in names]

    async def load_model(self, name: str) -> None:
        """Load a model through the server (blocks until it is loaded)."""
        try:
            await self.request_json("POST", "/v1/internal/model/load", {"model_name": name})
        except ProviderError as exc:
            if exc.status == 500:
                raise ProviderError(f"{self.label} failed to load the model {name!r}",
                                    hint="check the name against `adjutant presets` and the "
                                         "server's log", status=500) from exc
            raise
