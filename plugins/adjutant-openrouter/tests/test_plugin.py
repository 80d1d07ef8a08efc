"""The plugin registers what it says: by itself, and when found by its entry point."""

from pathlib import Path

import pytest

import adjutant_openrouter
from adjutant.testing.plugin_checks import assert_entry_point, assert_registers

#: What this plugin registers, by kind; update it along with the plugin.
REGISTERS = {"providers": ["openrouter"], "speech_recognizers": ["openrouter"],
             "copilot_analyzers": ["openrouter-audio"]}
PYPROJECT = Path(__file__).parents[1] / "pyproject.toml"


@pytest.mark.anyio
async def test_registers_what_it_says() -> None:
    await assert_registers(adjutant_openrouter, REGISTERS)


def test_entry_point_is_found_and_loads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert_entry_point(PYPROJECT, adjutant_openrouter, REGISTERS, tmp_path, monkeypatch)
