"""The action log, written by the kernel itself (never through the lossy bus).

Each record is one JSON object: ``kind`` (prompt, context, attempt, plan, decision,
approval, tool_call, result, error, mode, ...), a UTC timestamp, the run it belongs
to, and the fields of that kind. The log store (a `LogStore` plugin; LMDB by
default) makes it durable and tamper-evident.
"""

from __future__ import annotations

import time
from typing import Any

import msgspec

__all__ = ["ActionLog", "NoActionLogError"]


class NoActionLogError(RuntimeError):
    """No log store is registered: nothing may execute without a durable record."""


class ActionLog:
    """Appends records to the chosen log store; ``select`` picks one by name."""

    def __init__(self, stores: Any, name: str | None = None) -> None:
        self._stores = stores
        self._name = name
        self._encoder = msgspec.json.Encoder()
        self._pending: list[bytes] = []

    @property
    def store(self) -> Any:
        logs = {key.split(":", 1)[1]: obj for key, obj in self._stores.items()
                if key.startswith("log:")}
        if self._name is not None:
            if self._name not in logs:
                raise NoActionLogError(f"no log store named {self._name!r} "
                                       f"(registered: {', '.join(logs) or 'none'})")
            return logs[self._name]
        if not logs:
            raise NoActionLogError(
                "no action log store is installed, so nothing can execute; install "
                "adjutant-lmdb (or another LogStore plugin)")
        # prefer a durable store over the in-memory one the test harness registers
        durable = [obj for name, obj in logs.items() if name != "memory"]
        return (durable or list(logs.values()))[0]

    @property
    def available(self) -> bool:
        try:
            _ = self.store
        except NoActionLogError:
            return False
        return True

    def _encode(self, kind: str, run_id: str | None, fields: dict[str, Any]) -> bytes:
        return self._encoder.encode({"kind": kind, "time": time.time(), "run_id": run_id,
                                     **fields})

    def defer(self, kind: str, run_id: str | None = None, **fields: Any) -> None:
        """Queue a record for the next durable write (`record` or `flush`).

        For records that need not be durable before anything else happens (a
        decision before the user is asked, a result before its artifact record):
        they then share one commit with the next record instead of paying their own.
        """
        self._pending.append(self._encode(kind, run_id, fields))

    async def record(self, kind: str, run_id: str | None = None, **fields: Any) -> int:
        """Append one record, and any deferred ones before it, durably in one commit
        where the store can (``append_many``); returns this record's index."""
        self._pending.append(self._encode(kind, run_id, fields))
        return (await self.flush())[-1]

    async def flush(self) -> list[int]:
        """Write the deferred records durably; returns their indexes."""
        batch, self._pending = self._pending, []
        if not batch:
            return []
        store = self.store
        try:
            if len(batch) > 1 and hasattr(store, "append_many"):
                return [int(i) for i in await store.append_many(batch)]
            return [int(await store.append(body)) for body in batch]
        except BaseException:
            self._pending = batch + self._pending  # not written: keep them, fail loudly
            raise

    async def records(self, *, run_id: str | None = None) -> list[dict[str, Any]]:
        """Decoded records (of one run, if given), oldest first."""
        await self.flush()
        out = []
        async for _, raw in self.store.read(0):
            try:
                record = msgspec.json.decode(raw)
            except msgspec.DecodeError:
                continue  # not one of ours (another writer's record)
            if isinstance(record, dict) and (run_id is None or record.get("run_id") == run_id):
                out.append(record)
        return out
