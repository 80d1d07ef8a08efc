"""Sessions: a snapshot plus ordered RFC 6902 deltas, rehydratable to the same state.

Stored in a `KeyValueStore` under ``session/<id>/snapshot`` and
``session/<id>/delta/<seq:012d>`` (zero-padded so key order is delta order). The
operator's STATE_SNAPSHOT and STATE_DELTA events are exactly these, so a frontend
that reconnects after a gap can re-sync from ``load`` instead of the bus.
"""

from __future__ import annotations

import re
from typing import Any

import jsonpatch
import msgspec

__all__ = ["SessionError", "SessionStore"]

SESSION_ID = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")


class SessionError(ValueError):
    """A session is missing, or a delta does not apply to its state."""


class SessionStore:
    """Snapshots and deltas of JSON state in a key/value store."""

    def __init__(self, kv: Any) -> None:
        self.kv = kv

    @staticmethod
    def _prefix(session_id: str) -> str:
        if not SESSION_ID.match(session_id):
            raise SessionError(f"invalid session id {session_id!r}")
        return f"session/{session_id}/"

    async def start(self, session_id: str, snapshot: Any) -> None:
        """Begin (or restart) a session from a snapshot; earlier deltas are dropped."""
        prefix = self._prefix(session_id)
        stale = [key async for key, _ in self.kv.scan(prefix + "delta/")]
        for key in stale:
            await self.kv.delete(key)
        await self.kv.put(prefix + "snapshot", msgspec.json.encode(snapshot))

    async def apply(self, session_id: str, delta: list[dict[str, Any]]) -> int:
        """Check the delta applies to the current state, then store it; returns its seq."""
        state, seq = await self._state(session_id)
        try:
            jsonpatch.apply_patch(state, delta)
        except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException) as exc:
            raise SessionError(f"delta does not apply to session {session_id!r}: {exc}") from None
        key = f"{self._prefix(session_id)}delta/{seq + 1:012d}"
        await self.kv.put(key, msgspec.json.encode(delta))
        return seq + 1

    async def load(self, session_id: str) -> Any:
        """The snapshot with every delta applied, in order."""
        return (await self._state(session_id))[0]

    async def _state(self, session_id: str) -> tuple[Any, int]:
        prefix = self._prefix(session_id)
        raw = await self.kv.get(prefix + "snapshot")
        if raw is None:
            raise SessionError(f"no session {session_id!r}")
        state = msgspec.json.decode(raw)
        seq = 0
        async for key, value in self.kv.scan(prefix + "delta/"):
            state = jsonpatch.apply_patch(state, msgspec.json.decode(value))
            seq = int(key.rsplit("/", 1)[1])
        return state, seq
