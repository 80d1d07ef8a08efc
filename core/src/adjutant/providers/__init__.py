"""Building blocks for model-provider plugins: one shared HTTP client for the
OpenAI-compatible backends, stream parsers (SSE, NDJSON) that know every backend's
quirks, retries that honour ``Retry-After``, and errors that say what to do.

Plugins subclass `OpenAICompatible` (text-generation-webui, mlx-lm, OpenRouter,
llama.cpp's servers) or use `HttpBackend` with `ndjson_lines` (Ollama's native API).
Needs ``httpx`` (``adjutant-core[http]``), imported on first request only. `Ledger`:
what model calls spent (tokens, cost, metered or not, by run), for budgets of
longer work such as a task's chain of steps.
"""

from __future__ import annotations

from typing import Any

from adjutant_hookspecs import ProviderCapabilities

from ._budget import Ledger, Spend
from ._http import HttpBackend, error_message
from ._streams import ndjson_lines, sse_data
from .openai import OpenAICompatible

__all__ = ["HttpBackend", "Ledger", "OpenAICompatible", "Spend", "capabilities_of",
           "error_message", "ndjson_lines", "sse_data"]


def capabilities_of(provider: Any) -> Any:
    """The provider's declared `ProviderCapabilities`, or the plain-text default."""
    found = getattr(provider, "capabilities", None)
    return found if isinstance(found, ProviderCapabilities) else ProviderCapabilities()
