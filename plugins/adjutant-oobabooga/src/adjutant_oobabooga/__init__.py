"""text-generation-webui ("oobabooga") for Adjutant, over its OpenAI-compatible API.

Provider ``oobabooga``: ``/v1/completions`` with the planner's grammar as
``grammar_string``, ``stop`` (never the silently dropped ``stopping_strings``), model
listing and loading through the internal endpoints, and ``stop-generation`` when a
stream is abandoned. ``ADJUTANT_OOBABOOGA_URL`` (default ``http://127.0.0.1:5000``)
and ``ADJUTANT_OOBABOOGA_API_KEY``. Cheap to import: httpx and anyio load on first use.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from adjutant_hookspecs import hookimpl, lazy_exports

if TYPE_CHECKING:  # imported on first use (`lazy_exports`): start-up stays cheap
    from adjutant_hookspecs import Provider

    from ._provider import TextGenerationWebUI

__all__ = ["TextGenerationWebUI", "register_providers"]

__getattr__ = lazy_exports(__name__, dict.fromkeys(["TextGenerationWebUI"], "._provider"))


@hookimpl
def register_providers(register: Callable[[Provider], None]) -> None:
    """Hand the kernel one text-generation-webui provider, configured from the environment."""
    from ._provider import TextGenerationWebUI

    register(TextGenerationWebUI())
