"""Resumable HTTP streams of ``mcp serve``: what a client resuming with
``Last-Event-ID`` is sent. End to end (a stream closed mid-call, resumed, the result
delivered) in `test_conformance.py` (server-sse-polling)."""

from __future__ import annotations

from typing import Any

import pytest

from adjutant_mcp._http import SessionEvents, _manager_class

pytestmark = pytest.mark.anyio


async def replay(store: SessionEvents, after: str) -> tuple[str | None, list[Any]]:
    sent: list[Any] = []

    async def send(event: Any) -> None:
        sent.append(event.message)
    return await store.replay_events_after(after, send), sent


async def test_a_resumed_stream_gets_what_came_after_on_that_stream_only() -> None:
    store = SessionEvents()
    prime = await store.store_event("1", None)
    first = await store.store_event("1", "progress")
    await store.store_event("2", "another request's result")
    await store.store_event("1", "result")
    assert await replay(store, prime) == ("1", ["progress", "result"])
    assert await replay(store, first) == ("1", ["result"])


async def test_an_unknown_or_forgotten_event_id_replays_nothing() -> None:
    store = SessionEvents(limit=2)
    old = await store.store_event("1", "a")
    await store.store_event("1", "b")
    await store.store_event("1", "c")
    assert await replay(store, old) == (None, [])
    assert await replay(store, "guessed") == (None, [])


def test_each_session_gets_a_store_of_its_own() -> None:
    # the SDK reads `event_store` once for each new session; every client numbers its
    # requests from 1, so one shared store would replay one client's results to another
    # (two sessions admitted the SDK's way: a check that it still reads it per session)
    manager = _manager_class()(app=object())
    one, two = manager._admit_session(None), manager._admit_session(None)
    assert isinstance(one._event_store, SessionEvents)
    assert isinstance(two._event_store, SessionEvents)
    assert one._event_store is not two._event_store
