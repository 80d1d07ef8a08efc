"""adjutant-stt's settings: the profile's ``plugins.stt`` section."""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs
from attrs import validators as v

if TYPE_CHECKING:
    from adjutant_hookspecs import Kernel

__all__ = ["SttSettings", "listen_settings"]


@attrs.frozen
class SttSettings:
    """How spoken requests are heard (profile: ``"plugins": {"stt": {...}}``; older
    profiles' ``listen`` key is read as this section)."""

    #: Show the transcript on an editable line before it goes to the operator.
    edit_first: bool = False
    #: The spoken language (ISO code), or ``auto`` to detect it per utterance.
    language: str = "en"
    #: A pause this long after speech ends the recording; ``max_s`` is the longest.
    silence_s: float = attrs.field(default=0.8, validator=[v.ge(0.2), v.le(10.0)])
    max_s: float = attrs.field(default=30.0, validator=[v.gt(0.0), v.le(600.0)])
    #: The speech recognizer, by name: ``whisper`` (embedded, on this machine) or a
    #: registered remote one (``openrouter``). A remote engine is used only when named
    #: here or on the command line, and only after the user consents each time.
    engine: str = attrs.field(default="whisper", validator=v.matches_re(r"^[a-z0-9][a-z0-9_.-]*$"))
    #: The model a remote engine transcribes with (None: the engine's default).
    remote_model: str | None = None


def listen_settings(kernel: Kernel) -> SttSettings:
    """This kernel's `SttSettings` (the defaults where adjutant-stt is not loaded)."""
    try:
        return kernel.plugin_settings(SttSettings)
    except LookupError:
        return SttSettings()
