"""The plugin registers what it says: by itself, and when found by its entry point."""

import tomllib
from pathlib import Path

import pytest

import adjutant_openrouter
from adjutant import Kernel
from adjutant.testing import Harness

#: What this plugin registers, by kind; update it along with the plugin.
REGISTERS = {"providers": ["openrouter"]}
PYPROJECT = Path(__file__).parents[1] / "pyproject.toml"


@pytest.mark.anyio
async def test_registers_what_it_says() -> None:
    async with Harness(adjutant_openrouter) as h:
        (info,) = [p for p in h.kernel.plugins if p.module == adjutant_openrouter.__name__]
        assert (info.status, info.registered) == ("loaded", REGISTERS)
        for kind, names in REGISTERS.items():
            registry = getattr(h.kernel, kind)
            assert [registry.owner(name) for name in names] == [info.name] * len(names)


def test_entry_point_is_found_and_loads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Install-free check of the pyproject's entry point (as in the template)."""
    project = tomllib.loads(PYPROJECT.read_text())["project"]
    dist_info = tmp_path / f"{project['name'].replace('-', '_')}-0.dist-info"
    dist_info.mkdir()
    (dist_info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {project['name']}\n")
    entries = project["entry-points"]["adjutant"]
    lines = "".join(f"{name} = {value}\n" for name, value in entries.items())
    (dist_info / "entry_points.txt").write_text(f"[adjutant]\n{lines}")
    monkeypatch.syspath_prepend(tmp_path)

    env = {"ADJUTANT_HOME": str(tmp_path), "ADJUTANT_LOAD_PLUGINS": project["name"]}
    kernel = Kernel(env=env).load()
    (info,) = [p for p in kernel.plugins if p.distribution == project["name"]]
    assert info.status == "loaded", info.error
    assert (info.module, info.registered) == (adjutant_openrouter.__name__, REGISTERS)
