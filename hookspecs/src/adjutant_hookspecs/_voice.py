"""The voice frontends, as other frontends use them: a terminal chat or a dock finds
them among ``kernel.frontends`` by these Protocols, so neither imports a speech plugin.

* `VoiceFrontend` hears one spoken request (adjutant-stt's ``voice``: ``/talk`` in
  ``adjutant chat``);
* `SpeechFrontend` controls speech out (adjutant-tts's ``speech``): whether something
  is being said, stopping it, what was said, and waiting until the answers so far are
  queued to be said.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from ._kernel import Kernel

__all__ = ["SpeechFrontend", "VoiceFrontend"]


@runtime_checkable
class VoiceFrontend(Protocol):
    """A `Frontend` that hears one spoken request for the operator."""

    name: str

    async def serve(self, kernel: Kernel) -> None: ...

    async def hear(self, kernel: Kernel, copilot: Any) -> str:
        """Record and transcribe one request for ``copilot`` (an `adjutant.Copilot`,
        which hookspecs cannot name), showing the transcript; the text to hand the
        operator exactly as a typed line, or ``""`` when there is nothing to plan
        (nothing heard, no microphone, the operator off or listen-only). Errors are
        shown, never raised."""
        ...


@runtime_checkable
class SpeechFrontend(Protocol):
    """A `Frontend` that says answers aloud, and lets other frontends control it."""

    name: str

    async def serve(self, kernel: Kernel) -> None: ...

    async def caught_up(self, kernel: Kernel) -> None:
        """Return once what will be said of the runs so far is queued (speech follows
        the bus a moment behind the answer)."""
        ...

    def speaking(self, kernel: Kernel) -> bool:
        """Whether something is being said (audible) now."""
        ...

    def hush(self, kernel: Kernel) -> bool:
        """Stop what is being said and what is queued; True when something was."""
        ...

    def said(self, kernel: Kernel) -> str:
        """The text being said, else the last thing said; ``""`` when nothing was."""
        ...
