"""The speech service's life: started with the kernel, stopped with it.

The kernel's ``startup`` hook is awaited and returns, so the service runs as a
background task of the event loop: an asyncio task, or a trio system task (trio's
way for a service that belongs to no caller's nursery). It says queued utterances
and follows the bus for auto-speech. At shutdown it lets what is being said to a
device finish (``adjutant run`` speaks its answer before it exits; Ctrl-C stops it),
then stops and frees the device.
"""

from __future__ import annotations

import weakref
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from ._auto import Progress
from ._speaker import Speaker

__all__ = ["DRAIN_LIMIT_S", "caught_up", "speaker_for", "start", "stop"]

#: At most this long is waited at shutdown for speech still playing.
DRAIN_LIMIT_S = 120.0

_SERVICES: weakref.WeakKeyDictionary[
    Any, tuple[Speaker, Progress, Callable[[], Awaitable[None]]]] = weakref.WeakKeyDictionary()
#: At most this long is waited at shutdown for auto-speech to read the last answer.
CATCH_UP_S = 2.0


def speaker_for(kernel: Any) -> Speaker:
    """The running `Speaker` of a started kernel with the adjutant-tts plugin."""
    try:
        return _SERVICES[kernel][0]
    except KeyError:
        raise LookupError("no speech service in this kernel: load the adjutant-tts plugin "
                          "and enter the kernel (async with kernel)") from None


async def start(kernel: Any) -> None:
    import anyio

    from ._auto import Progress, follow

    speaker, progress = Speaker(kernel), Progress()

    async def service() -> None:
        async with anyio.create_task_group() as tg:
            tg.start_soon(speaker.serve)
            tg.start_soon(follow, kernel, speaker, progress)

    _SERVICES[kernel] = (speaker, progress, _spawn(service))


async def stop(kernel: Any) -> None:
    import anyio

    found = _SERVICES.pop(kernel, None)
    if found is None:
        return
    speaker, progress, cancel = found
    # `adjutant run` stops the kernel right after its answer: let auto-speech take the
    # last finished run first, then let what plays on a device end (Ctrl-C stops it)
    with anyio.move_on_after(CATCH_UP_S):
        await _caught_up(kernel, progress)
    with anyio.move_on_after(DRAIN_LIMIT_S):
        await speaker.drain()
    speaker.stop()
    await cancel()


async def caught_up(kernel: Any) -> None:
    """Wait (at most `CATCH_UP_S`) until auto-speech has read every finished run so
    far, so what it will say is queued: a prompt shown after an answer knows whether
    that answer is being said."""
    import anyio

    found = _SERVICES.get(kernel)
    if found is not None:
        with anyio.move_on_after(CATCH_UP_S):
            await _caught_up(kernel, found[1])


async def _caught_up(kernel: Any, progress: Progress) -> None:
    import anyio

    from ._auto import WATCHED

    last = max((e.seq for e in kernel.bus.history(after_seq=progress.seen)
                if isinstance(e.event, WATCHED)), default=0)
    for _ in range(1000):
        if progress.seen >= last:
            return
        await anyio.sleep(0.005)


def _spawn(function: Callable[[], Awaitable[None]]) -> Callable[[], Awaitable[None]]:
    """Run ``function`` in the background of the current event loop; return an
    awaitable canceller that returns once it has stopped."""
    import sniffio

    guarded = _logged(function)
    if sniffio.current_async_library() == "trio":
        import trio

        scope, finished = trio.CancelScope(), trio.Event()

        async def runner() -> None:
            try:
                with scope:
                    await guarded()
            finally:
                finished.set()

        trio.lowlevel.spawn_system_task(runner, name="adjutant-tts speech service")

        async def cancel_trio() -> None:
            scope.cancel()
            await finished.wait()
        return cancel_trio

    import asyncio

    task = asyncio.get_running_loop().create_task(guarded(), name="adjutant-tts speech")

    async def cancel_asyncio() -> None:
        task.cancel()
        await asyncio.wait([task])
    return cancel_asyncio


def _logged(function: Callable[[], Awaitable[None]]
            ) -> Callable[[], Coroutine[Any, Any, None]]:
    """A service failure is logged, never raised into the event loop (on trio a system
    task's exception would end the whole program)."""

    async def run() -> None:
        try:
            await function()
        except Exception as exc:
            from adjutant import get_logger

            get_logger(plugin="tts").error("speech service stopped", error=repr(exc))
    return run
