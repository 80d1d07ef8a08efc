"""The streamable HTTP app of ``adjutant mcp serve --http``: resumable, one store a session.

A tools/call may wait minutes for its user's approval on the terminal; a connection
held that long is fragile. So streams are resumable (SEP-1699, protocol 2025-11-25):
every SSE event gets an id, each stream starts with a priming event carrying a
``retry`` hint, and a client that lost its stream (or whose call outlived
``close_streams_after`` seconds, see `adjutant_mcp._serve`) resumes with a GET and
``Last-Event-ID``, receiving what it missed.

The SDK shares one event store among all sessions, and its stream ids are request
ids, which every client numbers alike from 1: a shared store would replay one
client's results to another. Here each session gets a store of its own.
"""

from __future__ import annotations

import secrets
from collections import OrderedDict
from typing import Any

__all__ = ["EVENTS_PER_SESSION", "RETRY_MS", "SessionEvents", "http_app"]

#: The client's wait before it reconnects a closed stream (the priming event's ``retry``).
RETRY_MS = 1000
#: Events kept per session for resumption; the oldest go first (a client that was
#: away for that many events starts again).
EVENTS_PER_SESSION = 1000


class SessionEvents:
    """One session's SSE events, for replay after ``Last-Event-ID`` (bounded, in memory).

    Event ids are random, so a client cannot guess its way into a stream."""

    def __init__(self, limit: int = EVENTS_PER_SESSION) -> None:
        self._limit = limit
        #: event id -> (stream id, message or None for a priming event)
        self._events: OrderedDict[str, tuple[str, Any]] = OrderedDict()

    async def store_event(self, stream_id: str, message: Any) -> str:
        event_id = secrets.token_urlsafe(12)
        self._events[event_id] = (stream_id, message)
        while len(self._events) > self._limit:
            self._events.popitem(last=False)
        return event_id

    async def replay_events_after(self, last_event_id: str, send_callback: Any) -> str | None:
        """Send the events of ``last_event_id``'s stream that came after it; that
        stream's id, or None for an id this session never gave (or has forgotten)."""
        from mcp.server.streamable_http import EventMessage

        if last_event_id not in self._events:
            return None
        stream_id, _ = self._events[last_event_id]
        after = False
        for event_id, (stream, message) in list(self._events.items()):
            if after and stream == stream_id and message is not None:
                await send_callback(EventMessage(message, event_id))
            after = after or event_id == last_event_id
        return stream_id


def _manager_class() -> type:
    from mcp.server.streamable_http import EventStore
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

    EventStore.register(SessionEvents)

    class PerSessionEvents(StreamableHTTPSessionManager):
        """Reads ``event_store`` once for each new session: a fresh store each time."""

        @property  # type: ignore[override]
        def event_store(self) -> SessionEvents:
            return SessionEvents()

        @event_store.setter
        def event_store(self, value: Any) -> None:
            pass  # always resumable

    return PerSessionEvents


def http_app(server: Any, *, path: str) -> Any:
    """The Starlette app serving ``server`` at ``path``: stateful sessions, each with
    its own event store, and the SDK's DNS-rebinding protection for loopback (a
    foreign ``Host`` or ``Origin`` is refused)."""
    from mcp.server.streamable_http_manager import StreamableHTTPASGIApp
    from mcp.server.transport_security import TransportSecuritySettings
    from starlette.applications import Starlette
    from starlette.routing import Route

    hosts = ["127.0.0.1:*", "localhost:*", "[::1]:*"]
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=hosts,
        allowed_origins=[f"http://{h}" for h in hosts])
    manager = _manager_class()(app=server, security_settings=security,
                               retry_interval=RETRY_MS)
    return Starlette(routes=[Route(path, endpoint=StreamableHTTPASGIApp(manager))],
                     lifespan=lambda app: manager.run())
