"""The event bus on asyncio and trio: fan-out, bounded views, gaps, replay."""

from __future__ import annotations

import anyio
import anyio.lowlevel
import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from adjutant import BusClosedError, EventBus, UndeclaredEventError
from adjutant.testing import Harness
from adjutant_hookspecs import (
    AG_UI_EVENTS,
    BusGap,
    CustomEvent,
    RunFinished,
    RunStarted,
    TextMessageContent,
)

DECLARED = {*AG_UI_EVENTS, BusGap}


def text(i: int) -> TextMessageContent:
    return TextMessageContent(message_id="m", delta=str(i))


def bus(capacity: int = 1024) -> EventBus:
    return EventBus(capacity=capacity, declared=DECLARED)


@pytest.mark.anyio
async def test_fan_out_in_order_with_global_and_run_seq() -> None:
    b = bus()
    subs = [b.subscribe() for _ in range(3)]
    got: list[list[tuple[int, int, str]]] = [[] for _ in subs]

    async def read(i: int) -> None:
        async for env in subs[i]:
            got[i].append((env.seq, env.run_seq, env.run_id or ""))

    async with anyio.create_task_group() as tg:
        for i in range(len(subs)):
            tg.start_soon(read, i)
        await anyio.sleep(0.01)  # all three are now waiting: publish must wake them
        b.publish(RunStarted(), run_id="r1", thread_id="t")
        b.publish(text(1), run_id="r1", thread_id="t")
        b.publish(text(2))
        b.publish(RunFinished(), run_id="r1", thread_id="t")
        b.publish(RunStarted(), run_id="r1", thread_id="t")  # a finished run starts over
        b.close()
    expected = [(1, 1, "r1"), (2, 2, "r1"), (3, 0, ""), (4, 3, "r1"), (5, 1, "r1")]
    assert got == [expected] * 3


@pytest.mark.anyio
async def test_slow_subscriber_gets_a_gap_and_never_blocks_the_publisher() -> None:
    b = bus(capacity=64)
    fast, slow, stuck = b.subscribe(), b.subscribe(max_lag=8), b.subscribe()
    seen: list[int] = []

    async def read_fast() -> None:
        async for env in fast:
            seen.append(env.seq)

    async with anyio.create_task_group() as tg:
        tg.start_soon(read_fast)
        for i in range(1, 201):
            b.publish(text(i))  # sync: no await, so it cannot be blocked
            if i % 16 == 0:
                await anyio.lowlevel.checkpoint()
        with anyio.fail_after(5):
            while len(seen) < 200:
                await anyio.lowlevel.checkpoint()
        b.close()
    assert seen == list(range(1, 201))

    gap = await slow.__anext__()
    assert isinstance(gap.event, BusGap)
    assert (gap.event.first_missed, gap.event.last_missed, gap.seq) == (1, 192, 192)
    assert [e.seq async for e in slow] == list(range(193, 201))
    assert slow.gaps == 1
    # the subscriber that never read is bounded by the ring, not the whole history
    first = stuck.take_nowait(1)[0]
    assert (first.event.first_missed, first.event.last_missed) == (1, 136)
    assert len(stuck.take_nowait(1000)) == 64


@pytest.mark.anyio
async def test_draining_a_backlog_yields_and_a_cancel_loses_nothing() -> None:
    b = bus(capacity=4096)
    sub = b.subscribe()
    for i in range(3000):
        b.publish(text(i))
    ticks = 0
    got: list[int] = []

    async def drain() -> None:
        async for env in sub:
            got.append(env.seq)
            if len(got) == 2000:
                break

    async def tick() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await anyio.lowlevel.checkpoint()

    async with anyio.create_task_group() as tg:
        tg.start_soon(tick)
        await drain()
        tg.cancel_scope.cancel()
    assert ticks >= 3  # without checkpoints the drain would never let it run
    assert got == list(range(1, len(got) + 1))  # in order, no holes
    rest = [env.seq async for env in _closing(b, sub)]
    assert got + rest == list(range(1, 3001))  # the cancel dropped nothing


async def _closing(b: EventBus, sub):  # type: ignore[no-untyped-def]
    b.close()
    async for env in sub:
        yield env


@pytest.mark.anyio
async def test_replay_from_seq_and_from_beyond_the_window() -> None:
    b = bus(capacity=16)
    for i in range(1, 41):
        b.publish(text(i))
    assert b.oldest_seq == 25
    assert b.last_seq == 40
    resumed = b.subscribe(after_seq=30)
    assert [e.seq for e in resumed.take_nowait()] == list(range(31, 41))
    assert resumed.position == 40
    late = b.subscribe(after_seq=3)
    [gap] = late.take_nowait()  # a gap marker always comes on its own
    assert (gap.event.first_missed, gap.event.last_missed) == (4, 24)
    assert [e.seq for e in late.take_nowait()] == list(range(25, 41))
    assert [e.seq for e in b.history(after_seq=38)] == [39, 40]
    with pytest.raises(ValueError, match="in the future"):
        b.subscribe(after_seq=41 + 1)


@pytest.mark.anyio
async def test_batches_and_type_filters() -> None:
    b = bus()
    runs = b.subscribe(types={RunStarted, RunFinished})
    batched = b.subscribe()
    b.publish(RunStarted(), run_id="r")
    for i in range(10):
        b.publish(text(i), run_id="r")
    b.publish(RunFinished(), run_id="r")
    b.close()
    assert [type(e.event) async for e in runs] == [RunStarted, RunFinished]
    sizes = []
    while batch := await batched.next_batch(5):
        sizes.append(len(batch))
    assert sizes == [5, 5, 2]


def test_undeclared_events_and_closed_bus_are_refused() -> None:
    class Unknown(CustomEvent, frozen=True, tag="nobody.declared"):
        pass

    b = bus()
    with pytest.raises(UndeclaredEventError, match=r"nobody\.declared is not declared"):
        b.publish(Unknown())
    b.close()
    with pytest.raises(BusClosedError):
        b.publish(text(1))


def test_events_are_immutable() -> None:
    event = text(1)
    with pytest.raises(AttributeError):
        event.delta = "changed"  # type: ignore[misc]
    env = bus().publish(event)
    with pytest.raises(AttributeError):
        env.seq = 99  # type: ignore[misc]


@pytest.mark.anyio
async def test_kernel_bus_admits_declared_plugin_events() -> None:
    from adjutant_hookspecs import hookimpl

    class Progress(CustomEvent, frozen=True, tag="demo.progress"):
        percent: int

    class Plugin:
        @hookimpl
        def register_events(self, register) -> None:  # type: ignore[no-untyped-def]
            register(Progress)

    async with Harness(Plugin()) as h:
        h.kernel.bus.publish(Progress(percent=50), run_id="r")
        assert h.events.of_type(Progress) == [Progress(percent=50)]
        assert h.events.names() == ["demo.progress"]
        wire = msgspec.json.decode(msgspec.json.encode(h.events.envelopes[0]))
        assert wire["event"] == {"type": "demo.progress", "percent": 50, "metadata": None}
        assert (wire["runId"], wire["runSeq"]) == ("r", 1)


@settings(max_examples=200, deadline=None)
@given(
    capacity=st.sampled_from([1, 2, 8, 32]),
    lag=st.integers(min_value=1, max_value=40),
    script=st.lists(st.tuples(st.integers(0, 50), st.integers(1, 20)), max_size=30),
)
def test_each_seq_is_delivered_once_or_reported_missing(capacity, lag, script) -> None:
    """Whatever the interleaving, a subscriber sees every seq exactly once, either as an
    event or inside a gap marker, in order; nothing is lost silently."""
    b = bus(capacity)
    sub = b.subscribe(max_lag=lag)
    covered: list[int] = []
    for publish, read in script:
        for _ in range(publish):
            b.publish(text(0))
        for env in sub.take_nowait(read):
            if isinstance(env.event, BusGap):
                covered.extend(range(env.event.first_missed, env.event.last_missed + 1))
                assert env.seq == env.event.last_missed
            else:
                covered.append(env.seq)
    for env in sub.take_nowait(10**6):
        if isinstance(env.event, BusGap):
            covered.extend(range(env.event.first_missed, env.event.last_missed + 1))
        else:
            covered.append(env.seq)
    assert covered == list(range(1, b.last_seq + 1))
