"""What can go wrong with speech in, as the user should read it: a message and a fix."""

from __future__ import annotations

__all__ = ["HeardNothing", "NoInputDevice", "SttError"]


class SttError(Exception):
    """Speech-to-text failed; ``hint`` says what to do about it."""

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.hint = hint


class HeardNothing(SttError):
    """The audio held no speech (silence, noise, an empty file)."""

    def __init__(self, detail: str = "no speech in the audio") -> None:
        super().__init__(f"heard nothing: {detail}",
                         hint="speak closer to the microphone, or check the recording")


class NoInputDevice(SttError):
    """There is no microphone to record from."""
