"""The plugin registers what it says: by itself, and when found by its entry point."""

import tomllib
from pathlib import Path

import pytest

import adjutant_guard
from adjutant import Kernel
from adjutant.testing import Harness

#: What this plugin registers, by kind; update it along with the plugin.
REGISTERS = {"policies": ["guard"]}
PYPROJECT = Path(__file__).parents[1] / "pyproject.toml"


@pytest.mark.anyio
async def test_registers_what_it_says() -> None:
    async with Harness(adjutant_guard) as h:
        (info,) = [p for p in h.kernel.plugins if p.module == adjutant_guard.__name__]
        assert (info.status, info.registered) == ("loaded", REGISTERS)
        for kind, names in REGISTERS.items():
            registry = getattr(h.kernel, kind)
            assert [registry.owner(name) for name in names] == [info.name] * len(names)
        guard = h.kernel.policies["guard"]
        assert isinstance(guard, adjutant_guard.Guard)
        assert guard.max_steps == adjutant_guard.DEFAULT_MAX_STEPS == 25


def test_entry_point_is_found_and_loads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Install-free check of the pyproject's entry point: write the dist-info that an
    install would write from it, then let the kernel discover the plugin as
    `adjutant plugins` does."""
    project = tomllib.loads(PYPROJECT.read_text())["project"]
    dist_info = tmp_path / f"{project['name'].replace('-', '_')}-0.dist-info"
    dist_info.mkdir()
    (dist_info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {project['name']}\n")
    entries = project["entry-points"]["adjutant"]
    assert entries == {"guard": "adjutant_guard"}
    lines = "".join(f"{name} = {value}\n" for name, value in entries.items())
    (dist_info / "entry_points.txt").write_text(f"[adjutant]\n{lines}")
    monkeypatch.syspath_prepend(tmp_path)

    env = {"ADJUTANT_HOME": str(tmp_path), "ADJUTANT_LOAD_PLUGINS": project["name"]}
    kernel = Kernel(env=env).load()
    (info,) = [p for p in kernel.plugins if p.distribution == project["name"]]
    assert info.status == "loaded", info.error
    assert (info.module, info.registered) == (adjutant_guard.__name__, REGISTERS)


def test_public_names_are_exactly_all() -> None:
    public = {n for n in vars(adjutant_guard) if not n.startswith("_")} - {"annotations"}
    modules = {n for n in public if type(getattr(adjutant_guard, n)).__name__ == "module"}
    assert public - modules == set(adjutant_guard.__all__)


def test_runtime_dependencies_are_contracts_only() -> None:
    project = tomllib.loads(PYPROJECT.read_text())["project"]
    assert project["dependencies"] == ["adjutant-hookspecs>=0.1"]


def test_max_steps_must_be_positive() -> None:
    for bad in (0, -1, True, 2.5, "3"):
        with pytest.raises(ValueError, match="max_steps"):
            adjutant_guard.Guard(max_steps=bad)  # type: ignore[arg-type]
