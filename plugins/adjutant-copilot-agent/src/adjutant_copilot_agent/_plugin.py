"""`CopilotAgentPlugin`: adjutant-copilot-agent as the kernel sees it. One instance per
kernel (the entry point names the class)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from adjutant_hookspecs import Command, hookimpl, lazy

if TYPE_CHECKING:
    from adjutant_hookspecs import CopilotAnalyzer, Event, Kernel

__all__ = ["CopilotAgentPlugin"]


class CopilotAgentPlugin:
    """The live-recording copilot: its settings, events, the built-in analyzer
    (speech-to-text, then the text model), and the ``record`` and ``copilot-agent``
    commands. The agents themselves run in the tasks of whoever starts them
    (`CopilotAgent.running`), never in a global."""

    name = "copilot-agent"

    @hookimpl
    def register_settings(self, register: Callable[[type[Any]], None]) -> None:
        from ._settings import CopilotAgentSettings

        register(CopilotAgentSettings)

    @hookimpl
    def register_events(self, register: Callable[[type[Event]], None]) -> None:
        from ._events import EVENTS

        for event in EVENTS:
            register(event)

    @hookimpl
    def register_copilot_analyzers(self, register: Callable[[CopilotAnalyzer], None]) -> None:
        from ._analysis import TranscribeThenAnalyze

        register(TranscribeThenAnalyze())

    @hookimpl
    def register_commands(self, register: Callable[[Command], None]) -> None:
        register(Command(name="record", help="record audio (microphone, system output, a "
                         "file or a pipe) to a crash-safe WAV, optionally with the copilot "
                         "agent", run=lazy("adjutant_copilot_agent._cli:record"),
                         configure=lazy("adjutant_copilot_agent._cli:configure_record")))
        register(Command(name="copilot-agent", help="the live-recording copilot: start, "
                         "stop, state, dismiss, act, sessions, show, export",
                         run=lazy("adjutant_copilot_agent._cli:agent"),
                         configure=lazy("adjutant_copilot_agent._cli:configure_agent")))

    @hookimpl
    def startup(self, kernel: Kernel) -> None:
        from ._settings import agent_settings

        agent_settings(kernel)  # a bad plugins.copilot-agent section stops the start
