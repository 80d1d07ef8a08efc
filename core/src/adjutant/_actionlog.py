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

    async def record(self, kind: str, run_id: str | None = None, **fields: Any) -> int:
        """Append one record durably; returns its index in the log."""
        body = {"kind": kind, "time": time.time(), "run_id": run_id, **fields}
        return int(await self.store.append(self._encoder.encode(body)))

    async def records(self, *, run_id: str | None = None) -> list[dict[str, Any]]:
        """Decoded records (of one run, if given), oldest first."""
        out = []
        async for _, raw in self.store.read(0):
            try:
                record = msgspec.json.decode(raw)
            except msgspec.DecodeError:
                continue  # not one of ours (another writer's record)
            if isinstance(record, dict) and (run_id is None or record.get("run_id") == run_id):
                out.append(record)
        return out
