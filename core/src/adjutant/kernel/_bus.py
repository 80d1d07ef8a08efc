"""The event bus: one shared ring, a cursor per subscriber.

anyio memory streams do not broadcast, and one stream per subscriber makes every
publish cost O(subscribers). Here a publish writes one `Envelope` into a ring and
wakes whoever is waiting, whatever the number of subscribers; each subscriber
reads the ring at its own cursor. The ring doubles as the replay window: a
consumer that reconnects resumes with ``subscribe(after_seq=N)``.

A subscriber that falls further behind than its bound (``max_lag``, at most the
ring's capacity) never blocks the publisher and never loses events silently: its
next read is a `BusGap` marker naming the missed ``seq`` range, after which it
continues from the oldest event still in its view. The marker's envelope carries
``seq = last_missed``, so "I have handled up to seq" stays true for a resume.

Single event loop: call `publish` from the loop's thread (from elsewhere use
``anyio.from_thread.run_sync(bus.publish, event)``). Runs on asyncio and trio.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import anyio

    from adjutant_hookspecs import Envelope, Event

__all__ = ["BusClosedError", "EventBus", "Subscription", "UndeclaredEventError"]

DEFAULT_CAPACITY = 1 << 16


class UndeclaredEventError(TypeError):
    """An event was published whose type no plugin declared."""


class BusClosedError(RuntimeError):
    """The bus was closed; nothing more can be published."""


class EventBus:
    """Typed publish/subscribe with per-subscriber bounded views and replay.

    :param capacity: Size of the ring, i.e. the replay window (rounded up to a power
        of two).
    :param declared: The event classes that may be published; ``None`` admits any
        `Event`. The kernel passes its event registry.
    """

    def __init__(
        self,
        *,
        capacity: int = DEFAULT_CAPACITY,
        declared: Collection[type[Event]] | None = None,
        clock: Callable[[], int] = time.time_ns,
    ) -> None:
        if capacity < 1:
            raise ValueError("capacity must be positive")
        size = 1 << (capacity - 1).bit_length()
        self.capacity = size
        self._mask = size - 1
        self._ring: list[Envelope | None] = [None] * size
        self._next = 1  # seq of the next event
        self._run_seqs: dict[str, int] = {}
        self._declared = declared
        self._clock = clock
        self._wakeup: anyio.Event | None = None
        self._closed = False

    # -- publishing ----------------------------------------------------------------------

    def publish(
        self, event: Event, *, run_id: str | None = None, thread_id: str | None = None
    ) -> Envelope:
        """Append one event and wake the subscribers; never blocks, never awaits.

        :raises UndeclaredEventError: the event's type was not declared.
        :raises BusClosedError: the bus is closed.
        """
        # The contracts are msgspec structs, imported on the first publish (after the
        # first, a dictionary lookup): a kernel made for `adjutant --help` never pays.
        from adjutant_hookspecs import Envelope, RunError, RunFinished

        cls = type(event)
        declared = self._declared
        if declared is not None and cls not in declared:
            raise UndeclaredEventError(
                f"event type {_name(cls)} is not declared; a plugin declares its events "
                "in the register_events hook"
            )
        if self._closed:
            raise BusClosedError("the event bus is closed")
        seq = self._next
        self._next = seq + 1
        run_seq = 0
        if run_id is not None:
            run_seq = self._run_seqs.get(run_id, 0) + 1
            if cls is RunFinished or cls is RunError:
                self._run_seqs.pop(run_id, None)  # the run is over; keep the map small
            else:
                self._run_seqs[run_id] = run_seq
        envelope = Envelope(
            seq=seq,
            run_seq=run_seq,
            run_id=run_id,
            thread_id=thread_id,
            timestamp=self._clock() // 1_000_000,
            event=event,
        )
        self._ring[seq & self._mask] = envelope
        wakeup = self._wakeup
        if wakeup is not None:
            self._wakeup = None
            wakeup.set()
        return envelope

    def close(self) -> None:
        """Stop publishing; subscribers drain what is left, then their iteration ends."""
        self._closed = True
        wakeup, self._wakeup = self._wakeup, None
        if wakeup is not None:
            wakeup.set()

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def last_seq(self) -> int:
        """The seq of the newest event (0 before the first)."""
        return self._next - 1

    @property
    def oldest_seq(self) -> int:
        """The oldest seq still in the replay window (``last_seq + 1`` when empty)."""
        return max(1, self._next - self.capacity)

    # -- reading ------------------------------------------------------------------------

    def subscribe(
        self,
        *,
        after_seq: int | None = None,
        max_lag: int | None = None,
        types: Collection[type[Event]] | None = None,
    ) -> Subscription:
        """A new view of the event sequence.

        :param after_seq: Resume after this seq (replay); default: only new events.
        :param max_lag: How far behind this subscriber may fall before it gets a
            `BusGap` marker; default and maximum: the ring's capacity.
        :param types: Deliver only these event classes (gap markers always arrive).
        """
        start = self._next if after_seq is None else max(after_seq + 1, 1)
        if start > self._next:
            raise ValueError(f"after_seq={after_seq} is in the future (last seq {self.last_seq})")
        lag = self.capacity if max_lag is None else min(max(max_lag, 1), self.capacity)
        return Subscription(self, start, lag, frozenset(types) if types is not None else None)

    def history(self, *, after_seq: int = 0) -> Iterator[Envelope]:
        """The events still in the replay window after ``after_seq``, oldest first."""
        ring, mask = self._ring, self._mask
        for seq in range(max(after_seq + 1, self.oldest_seq), self._next):
            envelope = ring[seq & mask]
            assert envelope is not None
            yield envelope

    async def _wait(self) -> None:
        wakeup = self._wakeup
        if wakeup is None:
            wakeup = self._wakeup = _new_event()
        await wakeup.wait()


class Subscription:
    """One subscriber's cursor over the bus; iterate it with ``async for``."""

    __slots__ = ("_bus", "_cursor", "_lag", "_types", "gaps")

    def __init__(
        self, bus: EventBus, start: int, lag: int, types: frozenset[type[Event]] | None
    ) -> None:
        self._bus = bus
        self._cursor = start
        self._lag = lag
        self._types = types
        #: How many gap markers this subscriber has received.
        self.gaps = 0

    @property
    def position(self) -> int:
        """The seq of the last event consumed (resume with ``after_seq=position``)."""
        return self._cursor - 1

    def __aiter__(self) -> Subscription:
        return self

    async def __anext__(self) -> Envelope:
        bus = self._bus
        yielded = False
        while True:
            # Fast path (the common case): the next event is in view and unfiltered.
            cursor, head = self._cursor, bus._next
            if self._types is None and head - self._lag <= cursor < head:
                if not cursor & 0xFF and not yielded:
                    # Let other tasks run (and cancellation in) while draining a
                    # backlog; before moving the cursor, so a cancel loses nothing.
                    await _checkpoint()
                    yielded = True
                    continue
                self._cursor = cursor + 1
                return bus._ring[cursor & bus._mask]  # type: ignore[return-value]
            batch = self._take(1)
            if batch:
                return batch[0]
            if bus._closed:
                raise StopAsyncIteration
            await bus._wait()

    async def next_batch(self, limit: int = 1024) -> list[Envelope]:
        """Wait for events and return up to ``limit`` of them ([] once the bus is closed
        and drained). Cheaper per event than ``async for`` when events arrive in bursts."""
        bus = self._bus
        while True:
            batch = self._take(limit)
            if batch or bus._closed:
                return batch
            await bus._wait()

    def take_nowait(self, limit: int = 1024) -> list[Envelope]:
        """Return up to ``limit`` pending events without waiting."""
        return self._take(limit)

    def _take(self, limit: int) -> list[Envelope]:
        bus = self._bus
        head = bus._next
        cursor = self._cursor
        if cursor >= head:
            return []
        oldest = max(head - self._lag, 1)  # lag <= capacity: the ring still holds it
        if cursor < oldest:
            self._cursor = oldest
            self.gaps += 1
            return [_gap(cursor, oldest - 1, bus._clock)]
        ring, mask, types = bus._ring, bus._mask, self._types
        if types is None:  # slice the ring (in at most two pieces where it wraps)
            end = min(head, cursor + limit)
            self._cursor = end
            lo, hi = cursor & mask, end & mask
            if lo < hi or end - cursor == 0:
                return ring[lo:hi]  # type: ignore[return-value]
            return ring[lo:] + ring[:hi]  # type: ignore[return-value]
        out: list[Any] = []
        while cursor < head:
            envelope = ring[cursor & mask]
            cursor += 1
            if type(envelope.event) in types:  # type: ignore[union-attr]
                out.append(envelope)
                if len(out) >= limit:
                    break
        self._cursor = cursor
        return out


def _gap(first: int, last: int, clock: Callable[[], int]) -> Envelope:
    from adjutant_hookspecs import BusGap, Envelope

    return Envelope(
        seq=last,
        run_seq=0,
        run_id=None,
        thread_id=None,
        timestamp=clock() // 1_000_000,
        event=BusGap(first_missed=first, last_missed=last),
    )


def _name(cls: type) -> str:
    from adjutant_hookspecs import event_name

    try:
        return event_name(cls)
    except (TypeError, AttributeError):
        return cls.__qualname__


async def _checkpoint() -> None:
    import anyio.lowlevel

    await anyio.lowlevel.checkpoint()


def _new_event() -> anyio.Event:
    # anyio is imported on first wait, not at kernel load: `adjutant --help` stays cheap.
    import anyio

    return anyio.Event()
