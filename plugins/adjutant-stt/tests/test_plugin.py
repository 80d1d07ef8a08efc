"""The plugin loads cheaply and registers what it says; `/talk` in chat finds it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import adjutant_stt
from adjutant import hookimpl
from adjutant.testing.plugin_checks import assert_cheap_import, assert_entry_point


def test_entry_point(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert_entry_point(Path(__file__).parents[1] / "pyproject.toml", adjutant_stt.SttPlugin,
                       {"frontends": ["voice"], "commands": ["transcribe", "listen"],
                        "checks": ["speech-to-text"],
                        "events": ["stt.listening", "stt.heard", "stt.heard_nothing",
                                   "stt.remote_consent"],
                        "speech_recognizers": ["whisper"], "settings": ["SttSettings"]},
                       tmp_path, monkeypatch)


def test_import_is_cheap() -> None:
    assert_cheap_import(adjutant_stt, ["adjutant", "anyio", "faster_whisper", "ctranslate2",
                                       "sounddevice", "numpy", "av", "onnxruntime"])


def test_registers_commands_frontend_events_and_check(tmp_path: Path) -> None:
    from adjutant import Kernel

    kernel = Kernel(plugins=[adjutant_stt.SttPlugin], load_installed=False, home=tmp_path).load()
    assert isinstance(kernel.plugin("stt"), adjutant_stt.SttPlugin)
    assert {"transcribe", "listen"} <= set(kernel.commands)
    assert "voice" in kernel.frontends
    assert {"stt.listening", "stt.heard", "stt.heard_nothing",
            "stt.remote_consent"} <= set(kernel.events)
    assert kernel.checks["speech-to-text"].run(kernel).status == "ok"


class Stores:
    """In-memory stores: the operator needs a log to run at all."""

    @hookimpl
    def register_stores(self, register: Callable[[Any], None]) -> None:
        from adjutant.testing import MemoryKeyValueStore, MemoryLogStore

        register(MemoryKeyValueStore())
        register(MemoryLogStore())


@pytest.mark.anyio
async def test_chat_talk_asks_the_voice_frontend(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """`/talk` hands chat what the frontend heard; listen-only yields nothing to plan."""
    from adjutant import Copilot, Kernel
    from adjutant.cli import _voice
    from adjutant_stt import _listen
    from adjutant_stt._transcribe import Transcript

    said = Transcript(text="List Python processes.", language="en", duration_s=1.6,
                      speech_s=1.6, elapsed_s=0.5)
    monkeypatch.setattr(_listen, "utterance", lambda *a, **k: said)
    kernel = Kernel(plugins=[adjutant_stt.SttPlugin, Stores()], load_installed=False,
                    home=tmp_path).load()
    async with kernel:
        copilot = Copilot(kernel, cwd=str(tmp_path))
        assert await _voice.spoken_request(kernel, copilot) == "List Python processes."
        assert await copilot.set_mode("listen-only", channel="user")
        assert await _voice.spoken_request(kernel, copilot) == ""
        assert await copilot.set_mode("off", channel="user")
        opened: list[Any] = []
        monkeypatch.setattr(_listen, "utterance", lambda *a, **k: opened.append(a))
        assert await _voice.spoken_request(kernel, copilot) == ""
        assert opened == []  # off: the microphone is never opened


def test_chat_without_the_plugin_says_what_to_install(capsys: pytest.CaptureFixture[str],
                                                      tmp_path: Path) -> None:
    import anyio

    from adjutant import Kernel
    from adjutant.cli import _voice

    kernel = Kernel(plugins=[], load_installed=False, home=tmp_path).load()
    assert anyio.run(_voice.spoken_request, kernel, None) == ""
    assert "pip install adjutant-stt" in capsys.readouterr().err
