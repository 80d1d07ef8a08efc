"""Checks every plugin's own tests make, written once.

::

    from adjutant.testing.plugin_checks import (
        assert_cheap_import, assert_entry_point, assert_registers)

    REGISTERS = {"tools": ["wordcount.count"]}

    async def test_registers_what_it_says():
        await assert_registers(my_plugin, REGISTERS)

    def test_entry_point_is_found_and_loads(tmp_path, monkeypatch):
        assert_entry_point(PYPROJECT, my_plugin, REGISTERS, tmp_path, monkeypatch)

    def test_import_does_not_load_heavy_modules():
        assert_cheap_import(my_plugin, {"anyio", "httpx", "numpy"})
"""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from adjutant_hookspecs import ToolDeclaration, decode, encode

from ..kernel._kernel import Kernel
from ._harness import Harness

__all__ = ["assert_cheap_import", "assert_documented", "assert_entry_point", "assert_registers",
           "assert_registry_matches", "write_registry"]


def _loaded_as(plugin: ModuleType | type) -> str:
    """The name a plugin module or class is loaded under when handed to a kernel."""
    if isinstance(plugin, ModuleType):
        return plugin.__name__
    return getattr(plugin, "name", None) or plugin.__name__


async def assert_registers(plugin: ModuleType | type,
                           registers: Mapping[str, Sequence[str]]) -> None:
    """Loaded alone in a harness, the plugin (its module, or its class: one instance
    per kernel) registers exactly ``registers`` (by kind), each owned by it."""
    async with Harness(plugin) as h:
        (info,) = [p for p in h.kernel.plugins if p.name == _loaded_as(plugin)]
        assert info.status == "loaded", f"the plugin did not load: {info.error}"
        got = {kind: sorted(names) for kind, names in info.registered.items()}
        want = {kind: sorted(names) for kind, names in registers.items()}
        assert got == want, (f"it registered {got}, REGISTERS says {want} (the order of "
                             "names does not matter)")
        for kind, names in registers.items():
            if kind == "settings":  # one class per plugin, kept under the plugin's name
                assert h.kernel.settings_schemas[info.name].__qualname__ == names[0]
                continue
            registry = getattr(h.kernel, kind)
            assert [registry.owner(name) for name in names] == [info.name] * len(names)


def assert_entry_point(pyproject: Path, plugin: ModuleType | type,
                       registers: Mapping[str, Sequence[str]], tmp_path: Path,
                       monkeypatch: Any) -> None:
    """Install-free check of the pyproject's ``adjutant`` entry point: a dist-info
    written from it is found by the kernel's scanner and loads the plugin (a module,
    or one instance of a class)."""
    project = tomllib.loads(pyproject.read_text())["project"]
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
    assert info.registered == dict(registers)
    loaded = kernel.plugin(info.name)
    assert loaded is plugin if isinstance(plugin, ModuleType) else isinstance(loaded, plugin)


def assert_cheap_import(module: ModuleType, heavy: Collection[str]) -> None:
    """Importing the plugin in a fresh interpreter loads none of ``heavy`` (the kernel
    imports every installed plugin at start-up)."""
    name = module.__name__
    src = str(Path(str(module.__file__)).parents[1])
    path = os.pathsep.join(p for p in (src, os.environ.get("PYTHONPATH")) if p)
    code = f"import sys, {name}; print(*sorted({{m.split('.')[0] for m in sys.modules}}))"
    proc = subprocess.run([sys.executable, "-c", code], env={**os.environ, "PYTHONPATH": path},
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    loaded = set(proc.stdout.split())
    assert set(heavy).isdisjoint(loaded), set(heavy) & loaded


def assert_registry_matches(registry: Path, tools: Sequence[Any]) -> None:
    """``registry/tools/<name>.json`` holds exactly each tool's declaration, one file per
    tool and no other file. Regenerate with `write_registry`."""
    names = sorted(cls.declaration.name + ".json" for cls in tools)
    assert sorted(p.name for p in registry.iterdir()) == names
    for cls in tools:
        data = (registry / f"{cls.declaration.name}.json").read_bytes()
        assert data == encode(cls.declaration) + b"\n", f"{cls.declaration.name} is stale"
        assert decode(data, ToolDeclaration) == cls.declaration


def write_registry(registry: Path, tools: Sequence[Any]) -> None:
    """Write each tool's declaration to ``registry/<name>.json`` (after changing one)."""
    registry.mkdir(parents=True, exist_ok=True)
    for cls in tools:
        (registry / f"{cls.declaration.name}.json").write_bytes(encode(cls.declaration) + b"\n")


def assert_documented(declaration: Any) -> None:
    """Every property described, two or more examples, and natural-language requests
    (``x-adjutant-requests``, which the planner ranks and shows) in a strict schema."""
    schema = declaration.args_schema
    assert schema["additionalProperties"] is False
    assert all(prop.get("description") for prop in schema["properties"].values())
    assert len(declaration.examples) >= 2
    requests = schema["x-adjutant-requests"]
    assert len(requests) >= 2 and all(isinstance(r, str) and r for r in requests)
