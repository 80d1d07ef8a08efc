"""The speech controls frontend: what a terminal frontend (``adjutant chat``) needs to
stop speech and copy what was said, without importing this plugin. Core finds it by
its methods (``hush``, ``speaking``, ``said``, ``caught_up``), as it finds a voice frontend by
``hear``."""

from __future__ import annotations

from typing import Any

__all__ = ["SpeechControls"]


class SpeechControls:
    name = "speech"

    async def serve(self, kernel: Any) -> None:
        """The speech service itself starts with the kernel; this only keeps a frontend
        slot for it (it waits until cancelled)."""
        import anyio

        await anyio.sleep_forever()

    async def caught_up(self, kernel: Any) -> None:
        """Return once auto-speech has queued what it will say of the runs so far."""
        from ._service import caught_up

        await caught_up(kernel)

    def speaking(self, kernel: Any) -> bool:
        speaker = _speaker(kernel)
        return speaker is not None and speaker.audible

    def hush(self, kernel: Any) -> bool:
        """Stop what is being said and what is queued; True when something was."""
        speaker = _speaker(kernel)
        if speaker is None or not speaker.audible:
            return False
        speaker.stop()
        return True

    def said(self, kernel: Any) -> str:
        """The text of what is being said, else of the last thing said (the transcript
        of the speech); ``""`` when nothing was."""
        speaker = _speaker(kernel)
        return "" if speaker is None else speaker.last_text


def _speaker(kernel: Any) -> Any:
    from ._service import speaker_for

    try:
        return speaker_for(kernel)
    except LookupError:  # a kernel that was not entered: nothing speaks
        return None
