"""The plugin registers what it says, by itself and through its entry point, and
importing it stays cheap (the kernel imports every installed plugin at start-up)."""

from pathlib import Path

import pytest

import adjutant_template
from adjutant.testing.plugin_checks import (
    assert_cheap_import,
    assert_entry_point,
    assert_registers,
)

#: What this plugin registers, by kind; update it along with the plugin.
REGISTERS = {"tools": ["template.echo", "template.append"]}
PYPROJECT = Path(__file__).parents[1] / "pyproject.toml"


@pytest.mark.anyio
async def test_registers_what_it_says() -> None:
    await assert_registers(adjutant_template, REGISTERS)


def test_entry_point_is_found_and_loads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert_entry_point(PYPROJECT, adjutant_template, REGISTERS, tmp_path, monkeypatch)


def test_import_does_not_load_heavy_modules() -> None:
    assert_cheap_import(adjutant_template, {"anyio", "httpx", "numpy", "trio"})
