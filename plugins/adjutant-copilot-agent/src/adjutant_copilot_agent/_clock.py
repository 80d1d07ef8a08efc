"""The agent's and the recorder's sense of time, injectable so tests and benchmarks run
a meeting faster than it was spoken: `Clock` (real time) and `FastClock` (every sleep
``factor`` times shorter, ``now`` counting the time it stands for)."""

from __future__ import annotations

import time

__all__ = ["Clock", "FastClock"]


class Clock:
    """Real time."""

    factor = 1.0

    def now(self) -> float:
        return time.monotonic()

    async def sleep(self, seconds: float) -> None:
        import anyio

        await anyio.sleep(max(0.0, seconds) / self.factor)


class FastClock(Clock):
    """Time ``factor`` times faster: a 60 s sleep takes 60 / factor real seconds."""

    def __init__(self, factor: float) -> None:
        if factor <= 0:
            raise ValueError(f"factor must be positive, got {factor}")
        self.factor = factor
        self._start = time.monotonic()

    def now(self) -> float:
        return self._start + (time.monotonic() - self._start) * self.factor
