"""The provider: the shared OpenAI-compatible client plus this server's extras."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from adjutant.providers import OpenAICompatible
from adjutant_hookspecs import CompletionRequest, ModelInfo, ProviderCapabilities, ProviderError

__all__ = ["DEFAULT_URL", "TextGenerationWebUI"]

DEFAULT_URL = "http://127.0.0.1:5000"


class TextGenerationWebUI(OpenAICompatible):
    """A `Provider` over text-generation-webui's ``/v1/completions``.

    Without arguments, configured from the environment when constructed:
    ``ADJUTANT_OOBABOOGA_URL`` (default ``http://127.0.0.1:5000``) and
    ``ADJUTANT_OOBABOOGA_API_KEY`` (sent as a Bearer token; model management needs
    the admin key, which defaults to the API key). ``chat=True`` switches to
    ``/v1/chat/completions`` (the server's instruction template then applies)."""

    name = "oobabooga"
    label = "text-generation-webui"
    start_hint = "start text-generation-webui with --api (port 5000)"
    key_hint = "set ADJUTANT_OOBABOOGA_API_KEY to the server's --api-key (or --admin-key)"
    capabilities = ProviderCapabilities(grammar=True, json_schema=False, list_models=True,
                                        load_models=True)

    def __init__(self, base_url: str | None = None, *, env: Mapping[str, str] | None = None,
                 **options: Any) -> None:
        env = os.environ if env is None else env
        if base_url is None:
            base_url = env.get("ADJUTANT_OOBABOOGA_URL") or DEFAULT_URL
        if options.get("api_key") is None:
            options["api_key"] = env.get("ADJUTANT_OOBABOOGA_API_KEY") or None
        options.setdefault("chat", False)  # base models and our own prompts: completions
        super().__init__(base_url, **options)

    @classmethod
    def from_environment(cls, env: Mapping[str, str] | None = None) -> TextGenerationWebUI:
        return cls(env=env)

    def body(self, request: CompletionRequest) -> dict[str, Any]:
        """The shared body (``stop`` as ``stop``: the server maps it to its custom
        stopping strings, whereas the legacy ``stopping_strings`` is silently dropped)
        plus the GBNF grammar as ``grammar_string``; no ``response_format`` (the server
        has none) and no ``model`` (ignored: switch with `load_model`)."""
        body = super().body(request)
        body.pop("model", None)
        body.pop("response_format", None)
        if request.grammar:
            body["grammar_string"] = request.grammar
        return body

    def error_for(self, status: int, body: bytes, headers: Mapping[str, str]) -> ProviderError:
        if status == 400 and b"Invalid host header" in body:
            return ProviderError(f"{self.label} refused the Host header of {self.base_url} "
                                 "(Invalid host header)",
                                 hint="start it with --listen (or --public-api), or use "
                                      "127.0.0.1/localhost in ADJUTANT_OOBABOOGA_URL",
                                 status=status)
        return super().error_for(status, body, headers)

    async def stop_generation(self) -> None:
        """Closing the connection does not stop generation here: ask for it."""
        await self.request_json("POST", "/v1/internal/stop-generation")

    # -- models ----------------------------------------------------------------------

    async def list_models(self) -> list[ModelInfo]:
        """Every model the server can load (admin list), the loaded one marked; without
        the admin key, ``/v1/models`` (the loaded model first)."""
        try:
            found = await self.request_json("GET", "/v1/internal/model/list")
        except ProviderError as exc:
            if exc.status not in (401, 403, 404):
                raise
            return await super().list_models()
        names = found.get("model_names") if isinstance(found, dict) else None
        info = await self.request_json("GET", "/v1/internal/model/info")
        loaded = info.get("model_name") if isinstance(info, dict) else None
        return [ModelInfo(name=str(n), loaded=n == loaded) for n in names or ()]

    async def load_model(self, name: str) -> None:
        """Load ``name`` through the server; blocks until it is loaded (no trailing
        slash: ``/model/load/`` answers 307)."""
        try:
            await self.request_json("POST", "/v1/internal/model/load", {"model_name": name})
        except ProviderError as exc:
            if exc.status == 500:
                raise ProviderError(f"{self.label} failed to load the model {name!r} "
                                    f"({exc.message.rpartition(': ')[2]})",
                                    hint="check the name against list_models() and the "
                                         "server's console for the cause", status=500) from exc
            raise
