"""The plugin registers what it says: by itself, and when found by its entry point."""

from pathlib import Path

import pytest

import adjutant_copilot_agent
from adjutant.testing import Harness
from adjutant.testing.plugin_checks import assert_entry_point, assert_registers

REGISTERS = {
    "events": ["copilot_agent.updated", "copilot_agent.status", "copilot_agent.error"],
    "commands": ["record", "copilot-agent"],
    "settings": ["CopilotAgentSettings"],
    "copilot_analyzers": ["transcribe-then-text"],
}
PYPROJECT = Path(__file__).parents[1] / "pyproject.toml"


@pytest.mark.anyio
async def test_registers_what_it_says() -> None:
    await assert_registers(adjutant_copilot_agent.CopilotAgentPlugin, REGISTERS)


def test_entry_point_is_found_and_loads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert_entry_point(PYPROJECT, adjutant_copilot_agent.CopilotAgentPlugin, REGISTERS,
                       tmp_path, monkeypatch)


@pytest.mark.anyio
async def test_settings_default_without_a_section_and_a_bad_one_stops_the_start() -> None:
    from adjutant import ModelPreset, Profile

    async with Harness(adjutant_copilot_agent.CopilotAgentPlugin) as h:
        settings = adjutant_copilot_agent.agent_settings(h.kernel)
        assert (settings.cycle_interval, settings.audio_overlap) == (60, 5)
        assert settings.agent_logging and not settings.enabled
    for bad, field in (({"cycle_interval": 10}, "cycle_interval"),
                       ({"cycle_interval": 121}, "cycle_interval"),
                       ({"audio_overlap": 16}, "audio_overlap"),
                       ({"cycle_interval": 30, "audio_overlap": 30}, "audio_overlap")):
        profile = Profile(model=ModelPreset(provider="scripted"),
                          plugins={"copilot-agent": bad})
        with pytest.raises(RuntimeError, match=rf"(?s)'copilot-agent' failed to start.*{field}"):
            async with Harness(adjutant_copilot_agent.CopilotAgentPlugin, profile=profile):
                pass
