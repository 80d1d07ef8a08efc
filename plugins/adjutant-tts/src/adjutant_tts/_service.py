"""The speech service's life: started with the kernel, stopped with it.

The plugin's ``startup`` hook is awaited and returns, so the service runs as a
background task of the event loop: an asyncio task, or a trio system task (trio's
way for a service that belongs to no caller's nursery). It says queued utterances
and follows the bus for auto-speech. At shutdown it lets what is being said to a
device finish (``adjutant run`` speaks its answer before it exits; Ctrl-C stops it),
then stops and frees the device.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from ._auto import Progress
from ._speaker import Speaker

if TYPE_CHECKING:
    from adjutant_hookspecs import Kernel

__all__ = ["CATCH_UP_S", "DRAIN_LIMIT_S", "SpeechService"]

#: At most this long is waited at shutdown for speech still playing.
DRAIN_LIMIT_S = 120.0

#: At most this long is waited at shutdown for auto-speech to read the last answer.
CATCH_UP_S = 2.0


class SpeechService:
    """The speaker of one kernel and the task that follows its bus, running in the
    background of the event loop from `start` until `stop`."""

    def __init__(self, kernel: Kernel, speaker: Speaker, progress: Progress,
                 cancel: Callable[[], Awaitable[None]]) -> None:
        self.kernel = kernel
        self.speaker = speaker
        self.progress = progress
        self._cancel = cancel

    @classmethod
    async def start(cls, kernel: Kernel) -> SpeechService:
        import anyio

        from ._auto import follow

        speaker, progress = Speaker(kernel), Progress()

        async def service() -> None:
            async with anyio.create_task_group() as tg:
                tg.start_soon(speaker.serve)
                tg.start_soon(follow, kernel, speaker, progress)

        return cls(kernel, speaker, progress, _spawn(service))

    async def stop(self) -> None:
        import anyio

        # `adjutant run` stops the kernel right after its answer: let auto-speech take
        # the last finished run first, then let what plays on a device end (Ctrl-C
        # stops it)
        with anyio.move_on_after(CATCH_UP_S):
            await self._caught_up()
        with anyio.move_on_after(DRAIN_LIMIT_S):
            await self.speaker.drain()
        self.speaker.stop()
        await self._cancel()

    async def caught_up(self) -> None:
        """Wait (at most `CATCH_UP_S`) until auto-speech has read every finished run so
        far, so what it will say is queued: a prompt shown after an answer knows
        whether that answer is being said."""
        import anyio

        with anyio.move_on_after(CATCH_UP_S):
            await self._caught_up()

    async def _caught_up(self) -> None:
        import anyio

        from ._auto import WATCHED

        last = max((e.seq for e in self.kernel.bus.history(after_seq=self.progress.seen)
                    if isinstance(e.event, WATCHED)), default=0)
        for _ in range(1000):
            if self.progress.seen >= last:
                return
            await anyio.sleep(0.005)


def _spawn(function: Callable[[], Awaitable[None]]) -> Callable[[], Awaitable[None]]:
    from adjutant import spawn_service

    return spawn_service(function, name="adjutant-tts speech service", plugin="tts")
