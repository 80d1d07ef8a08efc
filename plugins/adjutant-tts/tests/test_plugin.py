"""The plugin registers what it says: by itself, and when found by its entry point."""

from pathlib import Path
from typing import Any

import pytest

import adjutant_tts
from adjutant import PluginLoadError, hookimpl
from adjutant.testing import Harness
from adjutant.testing.plugin_checks import assert_entry_point, assert_registers

REGISTERS = {
    "speech_engines": ["hibari", "espeak-ng", "tts-webui"],
    "events": ["speech.started", "speech.progress", "speech.stopped"],
    "commands": ["speak"],
    "checks": ["speech output", "speech engine"],
    "frontends": ["speech"],
    "settings": ["TtsSettings"],
}
PYPROJECT = Path(__file__).parents[1] / "pyproject.toml"


@pytest.mark.anyio
async def test_registers_what_it_says() -> None:
    await assert_registers(adjutant_tts, REGISTERS)


def test_entry_point_is_found_and_loads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert_entry_point(PYPROJECT, adjutant_tts, REGISTERS, tmp_path, monkeypatch)


class _Engine:
    """A third party's engine: what the hook asks for, nothing more."""

    def __init__(self, name: str) -> None:
        self.name = name

    async def synthesize(self, request: Any) -> Any:
        yield  # pragma: no cover

    async def voices(self) -> list[Any]:
        return []

    async def aclose(self) -> None:
        return None


def _plugin(engine: Any) -> Any:
    class Plugin:
        @staticmethod
        @hookimpl
        def register_speech_engines(register: Any) -> None:
            register(engine)
    return Plugin()


@pytest.mark.anyio
async def test_a_third_party_engine_registers_beside_ours() -> None:
    async with Harness(adjutant_tts, _plugin(_Engine("acme"))) as h:
        assert list(h.kernel.speech_engines) == ["hibari", "espeak-ng", "tts-webui", "acme"]
        assert h.kernel.speech_engines.owner("acme") != "adjutant_tts"


@pytest.mark.anyio
@pytest.mark.parametrize(("engine", "error"), [
    (_Engine("hibari"), "speech engine 'hibari' is already registered"),
    (type("NoVoices", (), {"name": "x", "synthesize": _Engine.synthesize,
                           "aclose": _Engine.aclose})(), r"lacks synthesize\(\), voices\(\)"),
    (type("Sync", (), {"name": "y", "synthesize": lambda self, r: iter(()),
                       "voices": _Engine.voices, "aclose": _Engine.aclose})(),
     "synthesize must be async"),
])
async def test_a_bad_or_clashing_engine_is_refused_by_name(engine: Any, error: str) -> None:
    with pytest.raises(PluginLoadError, match=error):
        async with Harness(adjutant_tts, _plugin(engine)):
            pass
