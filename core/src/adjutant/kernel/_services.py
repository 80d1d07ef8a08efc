"""A plugin's background service on the kernel's own event loop (a speech queue, a task
runner): started from a hook, stopped when the kernel closes, on asyncio and trio."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

__all__ = ["spawn_service"]


def spawn_service(function: Callable[[], Awaitable[None]], *, name: str,
                  plugin: str) -> Callable[[], Awaitable[None]]:
    """Run ``function`` in the background of the running event loop; return an awaitable
    that cancels it and returns once it has stopped. A failure is logged under
    ``plugin``, never raised into the loop (on trio a system task's exception would end
    the whole program)."""
    import sniffio

    guarded = _logged(function, name, plugin)
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


def _logged(function: Callable[[], Awaitable[None]], name: str,
            plugin: str) -> Callable[[], Coroutine[Any, Any, None]]:
    async def run() -> None:
        try:
            await function()
        except Exception as exc:
            from .._logging import get_logger

            get_logger(plugin=plugin).error(f"{name} stopped", error=repr(exc))
    return run
