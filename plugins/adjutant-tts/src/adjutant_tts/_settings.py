"""adjutant-tts's settings: the profile's ``plugins.tts`` section."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

import attrs
from attrs import validators as v

if TYPE_CHECKING:
    from adjutant_hookspecs import Kernel

__all__ = ["TtsSettings", "speech_settings"]


@attrs.frozen
class TtsSettings:
    """How answers are spoken (profile: ``"plugins": {"tts": {...}}``; older profiles'
    ``speech`` and ``auto_speech`` keys are read as this section)."""

    #: Speak short answers and plan summaries aloud; False: never on its own.
    auto_speech: bool = True
    #: A registered speech engine by name; ``auto``: the embedded voice, else espeak-ng.
    engine: str = "auto"
    #: The engine's voice (None: its default); ``model`` for servers with several.
    voice: str | None = None
    model: str | None = None
    speed: float = attrs.field(default=1.0, validator=[v.ge(0.25), v.le(4.0)])
    #: Auto-speech says answers up to this many characters; longer ones stay on screen.
    max_auto_chars: int = attrs.field(default=400, validator=[v.ge(0), v.le(100_000)])
    #: Say the summary of a finished plan too.
    plan_summary: bool = True
    #: A new answer while one is being said: ``interrupt`` it or ``queue`` behind it.
    overlap: Literal["interrupt", "queue"] = "interrupt"


def speech_settings(kernel: Kernel) -> TtsSettings:
    """This kernel's `TtsSettings` (the defaults where adjutant-tts is not loaded)."""
    try:
        return kernel.plugin_settings(TtsSettings)
    except LookupError:
        return TtsSettings()
