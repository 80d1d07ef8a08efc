"""The plugin registers what it says: by itself, and when found by its entry point."""

from pathlib import Path

import pytest

import adjutant_template
from adjutant.testing import Harness
from adjutant.testing.plugin_checks import assert_entry_point, assert_registers

#: What this plugin registers, by kind; update it along with the plugin.
REGISTERS = {"tools": ["template.echo"]}
PYPROJECT = Path(__file__).parents[1] / "pyproject.toml"


@pytest.mark.anyio
async def test_registers_what_it_says() -> None:
    await assert_registers(adjutant_template, REGISTERS)


@pytest.mark.anyio
async def test_echo_previews_then_echoes() -> None:
    async with Harness(adjutant_template) as h:
        preview = await h.dry_run("template.echo", text="hello")
        result = await h.execute("template.echo", text="hello")
    assert (preview.status, preview.dry_run_diff) == ("dry_run", "echo 'hello'")
    assert (result.status, result.stdout) == ("ok", "hello\n")


def test_entry_point_is_found_and_loads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Catches a stale name in pyproject.toml after copying the template."""
    assert_entry_point(PYPROJECT, adjutant_template, REGISTERS, tmp_path, monkeypatch)
