"""adjutant-copilot-agent's settings: the profile's ``plugins.copilot-agent`` section."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs
from attrs import validators as v

if TYPE_CHECKING:
    from adjutant_hookspecs import Kernel

__all__ = ["CopilotAgentSettings", "agent_settings"]


def _overlap_below_interval(instance: Any, attribute: Any, value: int) -> None:
    if value >= instance.cycle_interval:
        raise ValueError(f"audio_overlap ({value}) must be less than cycle_interval "
                         f"({instance.cycle_interval})")


@attrs.frozen
class CopilotAgentSettings:
    """How the copilot agent runs (profile: ``"plugins": {"copilot-agent": {...}}``; a
    profile without the section runs with these defaults)."""

    #: Start the agent with every recording (``adjutant record`` without ``--agent``).
    enabled: bool = False
    #: Seconds between cycles, measured from the end of one to the start of the next.
    cycle_interval: int = attrs.field(default=60, validator=[v.instance_of(int), v.ge(30),
                                                             v.le(120)])
    #: Seconds each cycle's audio reaches back into the previous one.
    audio_overlap: int = attrs.field(default=5, validator=[v.instance_of(int), v.ge(0),
                                                           v.le(15), _overlap_below_interval])
    #: Write ``agent_logs/YYYYMMDD_HHMMSS_copilot.md`` (prompts and responses, no audio).
    agent_logging: bool = True
    #: Seconds an analysis may take before the cycle is skipped.
    analysis_timeout: float = attrs.field(default=120.0, validator=[v.gt(0), v.le(3600)])
    #: The speech recognizer of the built-in pipeline (``whisper``: on this machine).
    recognizer: str = "whisper"
    #: Whisper's beam in each cycle: 1 (greedy, the default) or up to 5 (adjutant-stt's
    #: own): offline, 8 more of 125 held-out items heard for 38 % more Whisper time; live
    #: recall within one run's noise (bench/README.md, the seventh work).
    stt_beam_size: int = attrs.field(default=1, validator=[v.instance_of(int), v.ge(1),
                                                           v.le(5)])


def agent_settings(kernel: Kernel) -> CopilotAgentSettings:
    """This kernel's `CopilotAgentSettings` (the defaults where the plugin is not loaded).
    A bad section raises ``ValueError`` naming each bad field."""
    try:
        return kernel.plugin_settings(CopilotAgentSettings)
    except LookupError:
        return CopilotAgentSettings()
