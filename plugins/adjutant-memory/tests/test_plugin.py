"""The plugin registers what it says, by itself and through its entry point; a third
party's embedder plugs in through ``register_embedders`` and is used when named."""

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import adjutant_memory
from adjutant import ModelPreset, PluginLoadError, Profile, hookimpl
from adjutant.testing import Harness
from adjutant.testing.plugin_checks import assert_entry_point, assert_registers

REGISTERS = {
    "tools": ["memory.remember", "memory.note"],
    "context_providers": ["memory"],
    "commands": ["memory"],
    "checks": ["memory retrieval"],
    "settings": ["MemorySettings"],
    "embedders": ["minilm"],  # the default model: its extra is installed here
    "plan_recallers": ["memory"],
}
PYPROJECT = Path(__file__).parents[1] / "pyproject.toml"


@pytest.mark.anyio
async def test_registers_what_it_says() -> None:
    await assert_registers(adjutant_memory.MemoryPlugin, REGISTERS)


def test_entry_point_is_found_and_loads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert_entry_point(PYPROJECT, adjutant_memory.MemoryPlugin, REGISTERS, tmp_path,
                       monkeypatch)


class Words:
    """A third party's embedder (what the hook asks for, nothing more)."""

    name = "words"
    model_id = "words-8"
    dimension = 8
    remote = False
    destination = "this machine"

    async def embed(self, texts: Sequence[str]) -> Any:
        return np.array([[len(t) % 7 + 1.0] * 8 for t in texts], dtype=np.float32)


def embedder_plugin(embedder: Any) -> Any:
    class Plugin:
        @staticmethod
        @hookimpl
        def register_embedders(register: Any) -> None:
            register(embedder)
    return Plugin()


@pytest.mark.anyio
async def test_a_third_party_embedder_is_registered_and_used_when_named() -> None:
    from memkit import write_project

    profile = Profile(model=ModelPreset(provider="scripted"),
                      plugins={"memory": {"embedder": "words"}})
    async with Harness(adjutant_memory.MemoryPlugin, embedder_plugin(Words()),
                       profile=profile) as h:
        assert list(h.kernel.embedders) == ["minilm", "words"]  # named: words
        plugin = h.kernel.plugin("memory")
        assert isinstance(plugin, adjutant_memory.MemoryPlugin)
        service = plugin.require()
        write_project(h.workspace)
        report = await service.refresh(str(h.workspace))
        assert report.vectors == service.index(str(h.workspace)).counts()["chunks"] > 0
        assert service.index(str(h.workspace)).vector_model() == ("words-8", 8)
        [check] = [c for n, c in h.kernel.checks.items() if n == "memory retrieval"]
        assert check.run(h.kernel).status == "ok"


@pytest.mark.anyio
async def test_an_embedder_without_a_dimension_is_refused_naming_the_plugin() -> None:
    class NoDimension(Words):
        dimension = 0

    with pytest.raises(PluginLoadError, match="dimension must be a positive int"):
        async with Harness(embedder_plugin(NoDimension())):
            pass


@pytest.mark.anyio
async def test_without_an_embedder_the_check_says_lexical_only() -> None:
    profile = Profile(model=ModelPreset(provider="scripted"),
                      plugins={"memory": {"default_model": False}})
    async with Harness(adjutant_memory.MemoryPlugin, profile=profile) as h:
        [check] = [c for n, c in h.kernel.checks.items() if n == "memory retrieval"]
        result = check.run(h.kernel)
        assert result.status == "warn" and "lexical retrieval only" in result.message


@pytest.mark.anyio
async def test_a_bad_settings_section_stops_the_start_naming_the_field() -> None:
    profile = Profile(model=ModelPreset(provider="scripted"), plugins={"memory": {"hits": 0}})
    with pytest.raises(RuntimeError, match="hits"):
        async with Harness(adjutant_memory.MemoryPlugin, profile=profile):
            pass
