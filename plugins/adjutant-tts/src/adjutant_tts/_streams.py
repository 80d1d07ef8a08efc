"""Closing an engine's audio stream for sure, whatever kind of async iterator it is."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TypeVar

__all__ = ["closing_stream"]

T = TypeVar("T")


@asynccontextmanager
async def closing_stream(stream: AsyncIterator[T]) -> AsyncIterator[AsyncIterator[T]]:
    """Yield ``stream``; on the way out (a stop, a cancellation, an error) close it, so
    the engine frees its thread, subprocess or connection before this returns."""
    try:
        yield stream
    finally:
        aclose = getattr(stream, "aclose", None)
        if aclose is not None:
            await aclose()
