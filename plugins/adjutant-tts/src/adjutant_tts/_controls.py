"""The speech controls frontend: what a terminal frontend (``adjutant chat``) needs to
stop speech and copy what was said, without importing this plugin. Core finds it by
its methods (``hush``, ``speaking``, ``said``, ``caught_up``), as it finds a voice
frontend by ``hear``."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from adjutant_hookspecs import Kernel

    from ._plugin import TtsPlugin

__all__ = ["SpeechControls"]


class SpeechControls:
    """The controls of one kernel's speech (the `TtsPlugin` instance that made them)."""

    name = "speech"

    def __init__(self, plugin: TtsPlugin) -> None:
        self.plugin = plugin

    async def serve(self, kernel: Kernel) -> None:
        """The speech service itself starts with the kernel; this only keeps a frontend
        slot for it (it waits until cancelled)."""
        import anyio

        await anyio.sleep_forever()

    async def caught_up(self, kernel: Kernel) -> None:
        """Return once auto-speech has queued what it will say of the runs so far."""
        if self.plugin.service is not None:
            await self.plugin.service.caught_up()

    def speaking(self, kernel: Kernel) -> bool:
        speaker = self.plugin.speaker
        return speaker is not None and speaker.audible

    def hush(self, kernel: Kernel) -> bool:
        """Stop what is being said and what is queued; True when something was."""
        speaker = self.plugin.speaker
        if speaker is None or not speaker.audible:
            return False
        speaker.stop()
        return True

    def said(self, kernel: Kernel) -> str:
        """The text of what is being said, else of the last thing said (the transcript
        of the speech); ``""`` when nothing was."""
        speaker = self.plugin.speaker
        return "" if speaker is None else speaker.last_text
