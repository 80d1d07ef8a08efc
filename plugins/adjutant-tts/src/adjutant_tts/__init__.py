"""Speech out for Adjutant: answers and plan summaries said aloud.

The plugin is `TtsPlugin` (the entry point names the class: one instance per kernel,
holding that kernel's speech service). Engines, behind the ``register_speech_engines``
hook: ``hibari`` (the default, an embedded voice that ships in its wheel),
``espeak-ng`` (the last resort) and ``tts-webui`` (a TTS-WebUI server). Settings: the
profile's ``plugins.tts`` section (`TtsSettings`). The speech service starts with the
kernel, follows the bus for auto-speech and publishes ``speech.started`` /
``speech.progress`` / ``speech.stopped``; ``adjutant speak`` says something or writes
it to a WAV. Cheap to import: numpy, onnxruntime, httpx and sounddevice load on first
use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from adjutant_hookspecs import lazy_exports

from ._plugin import TtsPlugin, speaker_for

if TYPE_CHECKING:  # imported on first use (`lazy_exports`): start-up stays cheap
    from ._controls import SpeechControls
    from ._espeak import EspeakEngine
    from ._hibari import HibariEngine
    from ._render import render_wav, synthesize_to_wav
    from ._settings import TtsSettings, speech_settings
    from ._webui import TtsWebUI

__all__ = ["EspeakEngine", "HibariEngine", "SpeechControls", "TtsPlugin", "TtsSettings",
           "TtsWebUI", "render_wav", "speaker_for", "speech_settings", "synthesize_to_wav"]

__getattr__ = lazy_exports(__name__, {
    "SpeechControls": "._controls", "EspeakEngine": "._espeak", "HibariEngine": "._hibari",
    "render_wav": "._render", "synthesize_to_wav": "._render", "TtsSettings": "._settings",
    "speech_settings": "._settings", "TtsWebUI": "._webui"})
