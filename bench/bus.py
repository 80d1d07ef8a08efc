"""Event-bus throughput: one publisher fanned out to 1, 4 and 16 subscribers.

For each async backend (asyncio, trio) and subscriber count, a publisher task
publishes N events on an `EventBus`, yielding to the loop every K events so the
subscribers run; each subscriber is a task that reads until the bus is closed,
either with ``async for`` or with ``await sub.next_batch(1024)``. Every subscriber
must receive all N events without a gap marker (checked and reported).

The in-run baseline is the naive design the bus replaces: one
``anyio.create_memory_object_stream`` per subscriber, fed with ``send_nowait``
(buffer of N, so it never blocks), read with ``async for`` or with ``receive()``
plus a ``receive_nowait()`` drain. The bus also builds an `Envelope` (seq,
run_seq, timestamp) per event, which the baseline does not.

Why: every token a model streams is an event, and a UI, the action log and the
copilot all subscribe; publishing must stay cheap and fan-out must not cost
O(subscribers) per publish. Goal: at least 200,000 events/s to 4 subscribers.

Run: ``.venv/bin/python bench/bus.py [--quick] [--events N]``.
"""

from __future__ import annotations

import argparse
import gc
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import anyio
import anyio.lowlevel
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from adjutant.kernel._bus import EventBus, Subscription
from adjutant_hookspecs import AG_UI_EVENTS, BusGap, Event, TextMessageContent

GOAL_EVENTS_PER_S = 200_000
GOAL_SUBSCRIBERS = 4
YIELD_EVERY = 256  # publisher checkpoints every K events
BATCH = 1024
BACKENDS = ("asyncio", "trio")
SUBSCRIBERS = (1, 4, 16)
EVENT = TextMessageContent(message_id="m", delta="x")
RUN_ID = "bench-run"


@dataclass
class Result:
    backend: str
    subscribers: int
    style: str
    events: int
    seconds: float
    received: list[int]  # events per subscriber (gap markers excluded)
    gaps: list[int]  # gap markers per subscriber

    @property
    def events_per_s(self) -> float:
        return self.events / self.seconds

    @property
    def deliveries_per_s(self) -> float:
        return sum(self.received) / self.seconds

    @property
    def complete(self) -> bool:
        return not any(self.gaps) and all(r == self.events for r in self.received)


# -- bus readers ----------------------------------------------------------------------------


async def read_iter(sub: Subscription, counts: list[int], i: int) -> None:
    n = 0
    async for _ in sub:
        n += 1
    counts[i] = n


async def read_batch(sub: Subscription, counts: list[int], i: int) -> None:
    n = 0
    while batch := await sub.next_batch(BATCH):
        n += len(batch)
    counts[i] = n


async def run_bus(style: str, subscribers: int, events: int) -> tuple[float, list[int], list[int]]:
    declared: set[type[Event]] = {*AG_UI_EVENTS, BusGap}  # as the kernel declares them
    bus = EventBus(declared=declared)
    subs = [bus.subscribe() for _ in range(subscribers)]
    counts = [0] * subscribers
    reader = read_iter if style == "async for" else read_batch
    publish = bus.publish
    checkpoint = anyio.lowlevel.checkpoint
    async with anyio.create_task_group() as tg:
        for i, sub in enumerate(subs):
            tg.start_soon(reader, sub, counts, i)
        start = time.perf_counter()
        for n in range(1, events + 1):
            publish(EVENT, run_id=RUN_ID)
            if n % YIELD_EVERY == 0:
                await checkpoint()
        bus.close()
    seconds = time.perf_counter() - start
    gaps = [sub.gaps for sub in subs]
    return seconds, [c - g for c, g in zip(counts, gaps, strict=True)], gaps


# -- baseline: one memory object stream per subscriber --------------------------------------


async def stream_iter(recv: MemoryObjectReceiveStream[Event], counts: list[int], i: int) -> None:
    n = 0
    async with recv:
        async for _ in recv:
            n += 1
    counts[i] = n


async def stream_batch(recv: MemoryObjectReceiveStream[Event], counts: list[int], i: int) -> None:
    n = 0
    async with recv:
        while True:
            try:
                await recv.receive()
            except anyio.EndOfStream:
                break
            n += 1
            try:
                while True:
                    recv.receive_nowait()
                    n += 1
            except anyio.WouldBlock:
                continue
            except anyio.EndOfStream:
                break
    counts[i] = n


async def run_streams(
    style: str, subscribers: int, events: int
) -> tuple[float, list[int], list[int]]:
    pairs: list[tuple[MemoryObjectSendStream[Event], MemoryObjectReceiveStream[Event]]] = [
        anyio.create_memory_object_stream[Event](max_buffer_size=events)
        for _ in range(subscribers)
    ]
    sends = [send.send_nowait for send, _ in pairs]
    counts = [0] * subscribers
    reader = stream_iter if style == "async for" else stream_batch
    checkpoint = anyio.lowlevel.checkpoint
    async with anyio.create_task_group() as tg:
        for i, (_, recv) in enumerate(pairs):
            tg.start_soon(reader, recv, counts, i)
        start = time.perf_counter()
        for n in range(1, events + 1):
            for send in sends:
                send(EVENT)
            if n % YIELD_EVERY == 0:
                await checkpoint()
        for send_stream, _ in pairs:
            send_stream.close()
    seconds = time.perf_counter() - start
    return seconds, counts, [0] * subscribers


def publish_only(events: int) -> tuple[float, float]:
    """ns per publish with nobody subscribed: while the ring first fills (every
    envelope is a new allocation), then in steady state (each replaces the oldest)."""
    bus = EventBus(declared={*AG_UI_EVENTS, BusGap})
    publish = bus.publish
    fill = bus.capacity
    gc.collect()
    start = time.perf_counter()
    for _ in range(fill):
        publish(EVENT, run_id=RUN_ID)
    middle = time.perf_counter()
    for _ in range(events):
        publish(EVENT, run_id=RUN_ID)
    end = time.perf_counter()
    return (middle - start) / fill * 1e9, (end - middle) / events * 1e9


Runner = Callable[[str, int, int], Awaitable[tuple[float, list[int], list[int]]]]
KINDS: tuple[tuple[str, str, Runner], ...] = (
    ("bus", "async for", run_bus),
    ("bus", "next_batch", run_bus),
    ("streams", "async for", run_streams),
    ("streams", "batch", run_streams),
)


def measure(backend: str, kind: str, style: str, runner: Runner, subscribers: int,
            events: int, repeat: int) -> Result:
    best: Result | None = None
    for _ in range(repeat):
        gc.collect()
        seconds, received, gaps = anyio.run(runner, style, subscribers, events, backend=backend)
        result = Result(backend, subscribers, f"{kind} {style}", events, seconds, received, gaps)
        if best is None or result.seconds < best.seconds:
            best = result
    assert best is not None
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="few events (CI smoke test)")
    parser.add_argument("--events", type=int, help="events per run (default 150000; 5000 quick)")
    parser.add_argument("--repeat", type=int, help="runs per figure, best kept (default 1)")
    opts = parser.parse_args()
    events = opts.events or (5_000 if opts.quick else 150_000)
    repeat = opts.repeat or 1

    print(f"bus: {events:,} events per run, publisher yields every {YIELD_EVERY}, "
          f"best of {repeat}; events/s = published events / wall time until every "
          "subscriber is done")
    print(f"goal: >= {GOAL_EVENTS_PER_S:,} events/s to {GOAL_SUBSCRIBERS} subscribers\n")
    runs = [publish_only(events) for _ in range(1 if opts.quick else 3)]
    fill_ns, steady_ns = min(r[0] for r in runs), min(r[1] for r in runs)
    print(f"publish, no subscriber: {steady_ns:,.0f} ns/event in steady state "
          f"({1e9 / steady_ns:,.0f} events/s); {fill_ns:,.0f} ns/event while the "
          f"{EventBus().capacity:,}-slot ring first fills\n")

    header = (f"{'backend':<8} {'subs':>4}  {'reader':<22} {'events/s':>11} "
              f"{'deliveries/s':>13} {'vs streams':>10}  check")
    print(header)
    print("-" * len(header))
    all_complete = True
    for backend in BACKENDS:
        for subscribers in SUBSCRIBERS:
            results = {
                (kind, style): measure(backend, kind, style, runner, subscribers, events, repeat)
                for kind, style, runner in KINDS
            }
            baseline = {"async for": results[("streams", "async for")],
                        "next_batch": results[("streams", "batch")]}
            for (kind, style), r in results.items():
                ratio = ""
                if kind == "bus":
                    ratio = f"{r.events_per_s / baseline[style].events_per_s:.2f}x"
                check = "ok" if r.complete else (
                    f"INCOMPLETE received={r.received} gaps={r.gaps}")
                all_complete = all_complete and r.complete
                goal = ""
                if kind == "bus" and subscribers == GOAL_SUBSCRIBERS:
                    goal = "  goal met" if r.events_per_s >= GOAL_EVENTS_PER_S else "  GOAL MISSED"
                print(f"{backend:<8} {subscribers:>4}  {r.style:<22} {r.events_per_s:>11,.0f} "
                      f"{r.deliveries_per_s:>13,.0f} {ratio:>10}  {check}{goal}")
            print()
    print("every subscriber got every event, no gap markers" if all_complete
          else "SOME SUBSCRIBERS MISSED EVENTS (see check column)")
    print("vs streams: bus events/s over the matching baseline "
          "(async for vs async for; next_batch vs receive + receive_nowait drain)")


if __name__ == "__main__":
    main()
