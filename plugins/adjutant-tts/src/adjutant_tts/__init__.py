"""Speech out for Adjutant: answers and plan summaries said aloud.

Engines, behind the ``register_speech_engines`` hook: ``hibari`` (the default, an
embedded voice that ships in its wheel), ``espeak-ng`` (the last resort) and
``tts-webui`` (a TTS-WebUI server). The speech service starts with the kernel, follows
the bus for auto-speech and publishes ``speech.started`` / ``speech.progress`` /
``speech.stopped``; ``adjutant speak`` says something or writes it to a WAV.
Cheap to import: numpy, onnxruntime, httpx and sounddevice load on first use.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from adjutant_hookspecs import (
    SPEECH_EVENTS,
    Check,
    CheckResult,
    Command,
    Event,
    Frontend,
    hookimpl,
    lazy,
)

from ._controls import SpeechControls
from ._espeak import EspeakEngine
from ._hibari import HibariEngine
from ._render import render_wav, synthesize_to_wav
from ._service import speaker_for
from ._settings import TtsSettings, speech_settings
from ._webui import TtsWebUI

if TYPE_CHECKING:
    from adjutant_hookspecs import SpeechEngine

__all__ = [
    "EspeakEngine",
    "HibariEngine",
    "SpeechControls",
    "TtsSettings",
    "TtsWebUI",
    "register_checks",
    "register_commands",
    "register_events",
    "register_frontends",
    "register_settings",
    "register_speech_engines",
    "render_wav",
    "shutdown",
    "speaker_for",
    "speech_settings",
    "startup",
    "synthesize_to_wav",
]


@hookimpl
def register_settings(register: Callable[[type[Any]], None]) -> None:
    register(TtsSettings)


@hookimpl
def register_speech_engines(register: Callable[[SpeechEngine], None]) -> None:
    """The embedded voice, espeak-ng and TTS-WebUI (configured from the environment)."""
    register(HibariEngine())
    register(EspeakEngine())
    register(TtsWebUI())


@hookimpl
def register_events(register: Callable[[type[Event]], None]) -> None:
    for event in SPEECH_EVENTS:
        register(event)


@hookimpl
def register_commands(register: Callable[[Command], None]) -> None:
    register(Command(name="speak", help="say something aloud, or write it to a WAV file "
                     "(-o out.wav)", run=lazy("adjutant_tts._cli:speak"),
                     configure=lazy("adjutant_tts._cli:configure_speak")))


@hookimpl
def register_frontends(register: Callable[[Frontend], None]) -> None:
    """Stop and copy for terminal frontends (``adjutant chat``'s Space, Esc, /copy)."""
    register(SpeechControls())


@hookimpl
def register_checks(register: Callable[[Check], None]) -> None:
    register(Check(name="speech output", run=_check_output))
    register(Check(name="speech engine", run=_check_engine))


def _check_output(kernel: Any) -> CheckResult:
    from ._output import no_device_reason

    reason = no_device_reason(kernel.env)
    if reason is None:
        return CheckResult(status="ok", message="audio plays on the default output device")
    return CheckResult(status="warn", message=f"speech goes to WAV files: {reason}",
                       fix="on a desktop: apt-get install libportaudio2 and check the sound "
                           "output; servers and CI need nothing")


def _check_engine(kernel: Any) -> CheckResult:
    from adjutant_hookspecs import SpeechError

    from ._speaker import pick_engine

    try:
        wanted = speech_settings(kernel).engine
    except ValueError as exc:  # ProfileError: the plugin-settings check lists each field
        return CheckResult(status="fail", message=f"the speech settings are invalid: {exc}",
                           fix="fix plugins.tts in the profile (see plugin-settings)")
    try:
        engine = pick_engine(kernel.speech_engines, wanted)
    except SpeechError as exc:
        return CheckResult(status="fail", message=str(exc), fix=exc.hint)
    if engine.name != "hibari" and wanted == "auto":
        return CheckResult(status="warn", message=f"speaking with {engine.name}: the "
                           "embedded voice (hibari-tts) is not installed",
                           fix="pip install hibari-tts")
    return CheckResult(status="ok", message=f"speech engine: {engine.name}")


@hookimpl
def startup(kernel: Any) -> Any:
    from ._service import start

    return start(kernel)


@hookimpl
def shutdown(kernel: Any) -> Any:
    from ._service import stop

    return stop(kernel)
