"""`TtsPlugin`: adjutant-tts as the kernel sees it. One instance per kernel (the entry
point names the class); what the plugin holds for its kernel, the speech service,
lives on that instance and nowhere else."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from adjutant_hookspecs import Command, hookimpl, lazy

if TYPE_CHECKING:
    from adjutant_hookspecs import (
        Check,
        CheckResult,
        Event,
        Frontend,
        Kernel,
        SpeechEngine,
    )

    from ._service import SpeechService
    from ._speaker import Speaker

__all__ = ["TtsPlugin", "speaker_for"]


class TtsPlugin:
    """Speech out: engines, settings, the ``speak`` command, the speech controls
    frontend, two checks, and the speech service from ``startup`` to ``shutdown``."""

    name = "tts"

    def __init__(self) -> None:
        self.service: SpeechService | None = None

    @property
    def speaker(self) -> Speaker | None:
        """The kernel's voice while the kernel runs (None before and after)."""
        return self.service.speaker if self.service is not None else None

    @hookimpl
    def register_settings(self, register: Callable[[type[Any]], None]) -> None:
        from ._settings import TtsSettings

        register(TtsSettings)

    @hookimpl
    def register_speech_engines(self, register: Callable[[SpeechEngine], None]) -> None:
        """The embedded voice, espeak-ng and TTS-WebUI (configured from the environment)."""
        from ._espeak import EspeakEngine
        from ._hibari import HibariEngine
        from ._webui import TtsWebUI

        register(HibariEngine())
        register(EspeakEngine())
        register(TtsWebUI())

    @hookimpl
    def register_events(self, register: Callable[[type[Event]], None]) -> None:
        from adjutant_hookspecs import SPEECH_EVENTS

        for event in SPEECH_EVENTS:
            register(event)

    @hookimpl
    def register_commands(self, register: Callable[[Command], None]) -> None:
        register(Command(name="speak", help="say something aloud, or write it to a WAV "
                         "file (-o out.wav)", run=lazy("adjutant_tts._cli:speak"),
                         configure=lazy("adjutant_tts._cli:configure_speak")))

    @hookimpl
    def register_frontends(self, register: Callable[[Frontend], None]) -> None:
        """Stop and copy for terminal frontends (``adjutant chat``'s Space, Esc, /copy)."""
        from ._controls import SpeechControls

        register(SpeechControls(self))

    @hookimpl
    def register_checks(self, register: Callable[[Check], None]) -> None:
        from adjutant_hookspecs import Check

        register(Check(name="speech output", run=_check_output))
        register(Check(name="speech engine", run=_check_engine))

    @hookimpl
    async def startup(self, kernel: Kernel) -> None:
        from ._service import SpeechService
        from ._settings import speech_settings

        speech_settings(kernel)  # a bad plugins.tts section stops the start, naming it
        self.service = await SpeechService.start(kernel)

    @hookimpl
    async def shutdown(self, kernel: Kernel) -> None:
        service, self.service = self.service, None
        if service is not None:
            await service.stop()


def plugin_of(kernel: Kernel) -> TtsPlugin | None:
    """This kernel's `TtsPlugin` instance, whatever name it was loaded under."""
    for info in kernel.plugins:
        plugin = kernel.plugin(info.name)
        if isinstance(plugin, TtsPlugin):
            return plugin
    return None


def speaker_for(kernel: Kernel) -> Speaker:
    """The running `Speaker` of a started kernel with the adjutant-tts plugin."""
    plugin = plugin_of(kernel)
    if plugin is None or plugin.speaker is None:
        raise LookupError("no speech service in this kernel: load the adjutant-tts plugin "
                          "and enter the kernel (async with kernel)")
    return plugin.speaker


def _check_output(kernel: Kernel) -> CheckResult:
    from adjutant_hookspecs import CheckResult

    from ._output import no_device_reason

    reason = no_device_reason(kernel.env)
    if reason is None:
        return CheckResult(status="ok", message="audio plays on the default output device")
    return CheckResult(status="warn", message=f"speech goes to WAV files: {reason}",
                       fix="on a desktop: apt-get install libportaudio2 and check the sound "
                           "output; servers and CI need nothing")


def _check_engine(kernel: Kernel) -> CheckResult:
    from adjutant_hookspecs import CheckResult, SpeechError

    from ._settings import speech_settings
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
