"""OpenRouter for Adjutant: hosted models behind one OpenAI-compatible API.

Provider ``openrouter``: chat completions with attribution headers, the planner's
JSON schema as ``response_format`` plus ``provider.require_parameters`` (so no
provider that ignores it is chosen), rate-limit details in errors, model listing with
capabilities, and audio input. ``OPENROUTER_API_KEY``; the only provider that sends
anything off the machine, so it is used only when a preset names it.

Speech recognizer ``openrouter`` (for adjutant-stt): a recording sent as audio input
to a hosted model, only when the user names this engine and consents each time.

Copilot analyzer ``openrouter-audio`` (for adjutant-copilot-agent): the recording's
latest stretch heard natively by the profile's audio model, after the same consent.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from adjutant_hookspecs import hookimpl, lazy_exports

if TYPE_CHECKING:  # imported on first use (`lazy_exports`): start-up stays cheap
    from adjutant_hookspecs import Provider

    from ._provider import OpenRouter

__all__ = ["OpenRouter", "register_copilot_analyzers", "register_providers",
           "register_speech_recognizers"]

__getattr__ = lazy_exports(__name__, dict.fromkeys(["OpenRouter"], "._provider"))


@hookimpl
def register_providers(register: Callable[[Provider], None]) -> None:
    from ._provider import OpenRouter

    register(OpenRouter.from_environment())


@hookimpl
def register_speech_recognizers(register: Callable[[Any], None]) -> None:
    from ._recognizer import OpenRouterRecognizer

    register(OpenRouterRecognizer.from_environment())


@hookimpl
def register_copilot_analyzers(register: Callable[[Any], None]) -> None:
    from ._copilot import OpenRouterCopilot

    register(OpenRouterCopilot())
