"""chat finds the voice frontends by the Protocol they meet (`VoiceFrontend`,
`SpeechFrontend`), never by one method name, and drives them through it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio
import pytest

from adjutant import Kernel, hookimpl
from adjutant.cli import _voice
from adjutant_hookspecs import SpeechFrontend, VoiceFrontend


class Frontend:
    name = "plain"

    async def serve(self, kernel: Any) -> None:
        await anyio.sleep_forever()


class HushOnly(Frontend):
    """Has a ``hush`` but is no speech frontend: chat must not mistake it for one."""

    name = "hush-only"

    def hush(self, kernel: Any) -> bool:
        raise AssertionError("not a SpeechFrontend: never asked")


class Speech(Frontend):
    name = "speech"

    def __init__(self) -> None:
        self.text, self.playing, self.queued = "", False, 0

    async def caught_up(self, kernel: Any) -> None:
        self.queued += 1

    def speaking(self, kernel: Any) -> bool:
        return self.playing

    def hush(self, kernel: Any) -> bool:
        was, self.playing = self.playing, False
        return was

    def said(self, kernel: Any) -> str:
        return self.text


class Voice(Frontend):
    name = "voice"

    async def hear(self, kernel: Any, copilot: Any) -> str:
        return "  list files \n"


class Frontends:
    def __init__(self, *frontends: object) -> None:
        self.frontends = frontends

    @hookimpl
    def register_frontends(self, register: Callable[[Any], None]) -> None:
        for frontend in self.frontends:
            register(frontend)


def kernel_with(*frontends: object) -> Kernel:
    return Kernel(plugins=[Frontends(*frontends)], load_installed=False, env={}).load()


def test_the_protocols_tell_the_frontends_apart() -> None:
    assert isinstance(Speech(), SpeechFrontend) and not isinstance(Speech(), VoiceFrontend)
    assert isinstance(Voice(), VoiceFrontend) and not isinstance(Voice(), SpeechFrontend)
    assert not isinstance(HushOnly(), SpeechFrontend)


def test_speech_controls_go_to_the_speech_frontend_only() -> None:
    speech = Speech()
    kernel = kernel_with(HushOnly(), speech)
    assert _voice.speech_frontend(kernel) is speech and _voice.voice_frontend(kernel) is None
    assert not _voice.speaking(kernel) and not _voice.hush(kernel)
    speech.playing, speech.text = True, "the answer"
    assert _voice.speaking(kernel)
    assert _voice.hush(kernel) and not speech.playing
    anyio.run(_voice.caught_up, kernel)
    assert speech.queued == 1


def test_without_a_speech_frontend_nothing_is_hushed() -> None:
    kernel = kernel_with(HushOnly())
    assert _voice.speech_frontend(kernel) is None
    assert not _voice.speaking(kernel) and not _voice.hush(kernel)
    anyio.run(_voice.caught_up, kernel)  # nothing to wait for


def test_a_spoken_request_comes_from_the_voice_frontend(
        capsys: pytest.CaptureFixture[str]) -> None:
    kernel = kernel_with(Speech(), Voice())
    assert anyio.run(_voice.spoken_request, kernel, None) == "list files"
    assert anyio.run(_voice.spoken_request, kernel_with(Speech()), None) == ""
    assert "pip install adjutant-stt" in capsys.readouterr().err
