"""The plugin registers what it says: by itself, and when found by its entry point."""

import tomllib
from pathlib import Path

import pytest

import adjutant_guard
from adjutant.testing import Harness
from adjutant.testing.plugin_checks import assert_entry_point, assert_registers

#: What this plugin registers, by kind; update it along with the plugin.
REGISTERS = {"policies": ["guard"]}
PYPROJECT = Path(__file__).parents[1] / "pyproject.toml"


@pytest.mark.anyio
async def test_registers_what_it_says() -> None:
    await assert_registers(adjutant_guard, REGISTERS)
    async with Harness(adjutant_guard) as h:
        guard = h.kernel.policies["guard"]
        assert isinstance(guard, adjutant_guard.Guard)
        assert guard.max_steps == adjutant_guard.DEFAULT_MAX_STEPS == 25


def test_entry_point_is_found_and_loads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = tomllib.loads(PYPROJECT.read_text())["project"]
    assert project["entry-points"]["adjutant"] == {"guard": "adjutant_guard"}
    assert_entry_point(PYPROJECT, adjutant_guard, REGISTERS, tmp_path, monkeypatch)


def test_public_names_are_exactly_all() -> None:
    public = {n for n in vars(adjutant_guard) if not n.startswith("_")} - {"annotations"}
    modules = {n for n in public if type(getattr(adjutant_guard, n)).__name__ == "module"}
    assert public - modules == set(adjutant_guard.__all__)


def test_runtime_dependencies_are_contracts_and_the_kernels_deny_rules() -> None:
    project = tomllib.loads(PYPROJECT.read_text())["project"]
    assert project["dependencies"] == ["adjutant-hookspecs>=0.1", "adjutant-core>=0.1"]


def test_max_steps_must_be_positive() -> None:
    for bad in (0, -1, True, 2.5, "3"):
        with pytest.raises(ValueError, match="max_steps"):
            adjutant_guard.Guard(max_steps=bad)  # type: ignore[arg-type]
