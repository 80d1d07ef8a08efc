"""Recorders a test reads after the fact: events from the bus, hook calls."""

from __future__ import annotations

from typing import Any, TypeVar

from adjutant_hookspecs import Envelope, Event, event_name

from ..kernel._bus import EventBus
from ..kernel._kernel import HookCall

__all__ = ["EventRecorder", "EventView", "HookRecorder"]

E = TypeVar("E", bound=Event)


class EventView:
    """Reading a sequence of envelopes (``self.envelopes``) as events."""

    envelopes: Any

    @property
    def events(self) -> list[Event]:
        return [e.event for e in self.envelopes]

    def names(self) -> list[str]:
        """Event type names in order (``RUN_STARTED``, ``copilot.plan``, ...)."""
        return [event_name(type(e)) for e in self.events]

    def of_type(self, cls: type[E]) -> list[E]:
        return [e for e in self.events if type(e) is cls]


class EventRecorder(EventView):
    """Everything published on a bus since the recorder was made (or cleared).

    It reads the bus's replay window, so it needs no task and misses nothing while
    fewer events than the bus capacity were published.
    """

    def __init__(self, bus: EventBus) -> None:
        self._bus = bus
        self._start = bus.last_seq

    @property
    def envelopes(self) -> list[Envelope]:
        first = self._bus.oldest_seq
        if first > self._start + 1:
            raise AssertionError(
                f"events {self._start + 1}..{first - 1} left the bus's replay window; "
                "give the Harness a larger bus_capacity"
            )
        return list(self._bus.history(after_seq=self._start))

    def clear(self) -> None:
        self._start = self._bus.last_seq


class HookRecorder:
    """Every hook implementation call the kernel made, attributed to its plugin."""

    def __init__(self) -> None:
        self.calls: list[HookCall] = []

    def __call__(self, call: HookCall) -> None:
        self.calls.append(call)

    def of(self, hook: str) -> list[HookCall]:
        return [c for c in self.calls if c.hook == hook]

    def plugins(self, hook: str) -> list[str]:
        """Which plugins implemented ``hook``, in call order."""
        return [c.plugin for c in self.of(hook)]

    def results(self, hook: str) -> list[Any]:
        return [c.result for c in self.of(hook)]
