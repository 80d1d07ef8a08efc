"""Run a service in the background of the event loop, on asyncio or trio."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

__all__ = ["spawn"]


def spawn(function: Callable[[], Awaitable[None]], name: str) -> Callable[[], Awaitable[None]]:
    """Run ``function`` in the background (an asyncio task, or a trio system task: a
    service that belongs to no caller's nursery); return an awaitable canceller that
    returns once it has stopped. A failure is logged, never raised into the loop."""
    import sniffio

    async def guarded() -> None:
        try:
            await function()
        except Exception as exc:
            from adjutant import get_logger

            get_logger(plugin="tasks").error(f"{name} stopped", error=repr(exc))

    if sniffio.current_async_library() == "trio":
        import trio

        scope, finished = trio.CancelScope(), trio.Event()

        async def runner() -> None:
            try:
                with scope:
                    await guarded()
            finally:
                finished.set()

        trio.lowlevel.spawn_system_task(runner, name=name)

        async def cancel_trio() -> None:
            scope.cancel()
            await finished.wait()
        return cancel_trio

    import asyncio

    task = asyncio.get_running_loop().create_task(guarded(), name=name)

    async def cancel_asyncio() -> None:
        task.cancel()
        await asyncio.wait([task])
    return cancel_asyncio
