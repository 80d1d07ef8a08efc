"""The live-recording copilot for Adjutant.

``adjutant record`` writes 16 kHz mono PCM to a crash-safe WAV in the data directory
(the microphone, the system's output, a file or a pipe); ``adjutant copilot-agent
start`` (or ``record --agent``) runs the agent beside it: every cycle it hears the
latest stretch, asks the active model what was said (the ``copilot_analyze``
capability, ``register_copilot_analyzers``), and keeps a running summary, key points,
decisions, action items, open questions, suggested questions and key concepts, each
item with the span of the recording it came from. Settings: the profile's
``plugins.copilot-agent`` section (`CopilotAgentSettings`). Cheap to import: numpy,
soundfile and the models load on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from adjutant_hookspecs import lazy_exports

from ._plugin import CopilotAgentPlugin

if TYPE_CHECKING:  # imported on first use (`lazy_exports`): start-up stays cheap
    from ._agent import AgentError, CopilotAgent, choose_analyzer
    from ._analysis import TranscribeThenAnalyze
    from ._clock import Clock, FastClock
    from ._control import (
        act_record,
        action_item,
        agent_running,
        dismiss_question,
        find_session,
        load_state,
    )
    from ._parse import parse_cycle_result
    from ._recorder import Recorder
    from ._records import CopilotActRecord
    from ._sessions import Session, active_recording, list_sessions
    from ._settings import CopilotAgentSettings, agent_settings
    from ._sources import RecorderError
    from ._state import CopilotState, merge
    from ._store import StateStore

__all__ = ["AgentError", "Clock", "CopilotActRecord", "CopilotAgent", "CopilotAgentPlugin",
           "CopilotAgentSettings", "CopilotState", "FastClock", "Recorder", "RecorderError",
           "Session", "StateStore", "TranscribeThenAnalyze", "act_record", "action_item",
           "active_recording", "agent_running", "agent_settings", "choose_analyzer",
           "dismiss_question", "find_session", "list_sessions", "load_state", "merge",
           "parse_cycle_result"]

__getattr__ = lazy_exports(__name__, {
    "AgentError": "._agent", "CopilotAgent": "._agent", "choose_analyzer": "._agent",
    "TranscribeThenAnalyze": "._analysis", "Clock": "._clock", "FastClock": "._clock",
    "parse_cycle_result": "._parse", "Recorder": "._recorder", "Session": "._sessions",
    "active_recording": "._sessions", "list_sessions": "._sessions",
    "CopilotAgentSettings": "._settings", "agent_settings": "._settings",
    "RecorderError": "._sources", "CopilotState": "._state", "merge": "._state",
    "CopilotActRecord": "._records", "StateStore": "._store", "act_record": "._control",
    "action_item": "._control", "agent_running": "._control",
    "dismiss_question": "._control", "find_session": "._control", "load_state": "._control"})
