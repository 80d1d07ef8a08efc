"""Ollama for Adjutant, over its native API (``/api/chat``, NDJSON).

Provider ``ollama``: JSON-schema ``format``, ``keep_alive``, ``num_ctx`` per request,
model listing (``/api/tags``, ``/api/ps``), capabilities (``/api/show``), preload and
unload, and a warning when Ollama silently cut the prompt to its context size.
``ADJUTANT_OLLAMA_URL`` or ``OLLAMA_HOST`` (default ``http://127.0.0.1:11434``).
Cheap to import: httpx and anyio load on first request.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from adjutant_hookspecs import hookimpl, lazy_exports

if TYPE_CHECKING:  # imported on first use (`lazy_exports`): start-up stays cheap
    from adjutant_hookspecs import Provider

    from ._provider import Ollama, truncation_warning

__all__ = ["Ollama", "register_providers", "truncation_warning"]

__getattr__ = lazy_exports(__name__, dict.fromkeys(["Ollama", "truncation_warning"], "._provider"))


@hookimpl
def register_providers(register: Callable[[Provider], None]) -> None:
    """Hand the kernel one Ollama provider, configured from the environment."""
    from ._provider import Ollama

    register(Ollama())
