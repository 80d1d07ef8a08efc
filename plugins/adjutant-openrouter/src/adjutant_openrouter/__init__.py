"""OpenRouter for Adjutant: hosted models behind one OpenAI-compatible API.

Provider ``openrouter``: chat completions with attribution headers, the planner's
JSON schema as ``response_format`` plus ``provider.require_parameters`` (so no
provider that ignores it is chosen), rate-limit details in errors, model listing with
capabilities, and audio input. ``OPENROUTER_API_KEY``; the only provider that sends
anything off the machine, so it is used only when a preset names it.
"""

from __future__ import annotations

from collections.abc import Callable

from adjutant_hookspecs import Provider, hookimpl

from ._provider import OpenRouter

__all__ = ["OpenRouter", "register_providers"]


@hookimpl
def register_providers(register: Callable[[Provider], None]) -> None:
    register(OpenRouter.from_environment())
