"""mlx-lm's server: the shared client with its quirks handled."""

from __future__ import annotations

import os
from collections.abc import AsyncGenerator, Mapping
from contextlib import aclosing
from typing import Any

from adjutant.providers.openai import OpenAICompatible
from adjutant_hookspecs import (
    CompletionChunk,
    CompletionRequest,
    ProviderCapabilities,
    ProviderError,
)

__all__ = ["MlxLm"]

DEFAULT_URL = "http://127.0.0.1:8080"
EMPTY = ("mlx-lm returned no text; it ignores structured-output requests and may answer "
         "with nothing (mlx-lm #1007): the answer was validated and retried instead")


class MlxLm(OpenAICompatible):
    name = "mlx"
    label = "the mlx-lm server"
    start_hint = "start it with `mlx_lm.server --model <repo or path>` (port 8080)"
    #: No grammar, no schema: the server ignores both and returns empty output.
    capabilities = ProviderCapabilities(list_models=True, load_models=True)

    def __init__(self, base_url: str = DEFAULT_URL, **options: Any) -> None:
        options.setdefault("chat", True)
        super().__init__(base_url, **options)

    @classmethod
    def from_environment(cls, env: Mapping[str, str] | None = None) -> MlxLm:
        env = os.environ if env is None else env
        return cls(env.get("ADJUTANT_MLX_URL", DEFAULT_URL))

    def body(self, request: CompletionRequest) -> dict[str, Any]:
        body = super().body(request)
        body.pop("response_format", None)
        body["temperature"] = request.temperature  # the server's default is 0.0
        return body

    async def complete(self, request: CompletionRequest) -> AsyncGenerator[CompletionChunk, None]:
        produced = False
        async with aclosing(super().complete(request)) as stream:
            async for chunk in stream:
                produced = produced or bool(chunk.text)
                if chunk.finish_reason is not None and not produced:
                    chunk = CompletionChunk(finish_reason=chunk.finish_reason,
                                            usage=chunk.usage,
                                            warnings=(*chunk.warnings, EMPTY))
                yield chunk

    async def load_model(self, name: str) -> None:
        """The server loads the model named in each request: check it exists, then use it."""
        known = [m.name for m in await self.list_models()]
        if name not in known and name != "default_model":
            raise ProviderError(f"{self.label} does not know the model {name!r}",
                                hint=f"known: {', '.join(known) or 'none'}; models come from "
                                     "the server's Hugging Face cache and --model")
        self.model = name
