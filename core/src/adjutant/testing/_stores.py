"""In-memory stores implementing the store protocols, for tests."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Literal

__all__ = ["MemoryKeyValueStore", "MemoryLogStore"]


class MemoryKeyValueStore:
    """A dict behind the `KeyValueStore` protocol; ``scan`` yields keys in order."""

    kind: Literal["kv"] = "kv"

    def __init__(self, name: str = "memory") -> None:
        self.name = name
        self.data: dict[str, bytes] = {}

    async def get(self, key: str) -> bytes | None:
        return self.data.get(key)

    async def put(self, key: str, value: bytes) -> None:
        if not isinstance(value, bytes | bytearray | memoryview):
            raise TypeError(f"value must be bytes, got {type(value).__name__}")
        self.data[key] = bytes(value)

    async def delete(self, key: str) -> bool:
        return self.data.pop(key, None) is not None

    async def scan(self, prefix: str = "") -> AsyncIterator[tuple[str, bytes]]:
        for key in sorted(k for k in self.data if k.startswith(prefix)):
            yield key, self.data[key]

    async def aclose(self) -> None:
        pass


class MemoryLogStore:
    """A list behind the `LogStore` protocol: append-only, records kept as given."""

    kind: Literal["log"] = "log"

    def __init__(self, name: str = "memory") -> None:
        self.name = name
        self.records: list[bytes] = []

    async def append(self, record: bytes) -> int:
        if not isinstance(record, bytes | bytearray | memoryview):
            raise TypeError(f"record must be bytes, got {type(record).__name__}")
        self.records.append(bytes(record))
        return len(self.records) - 1

    async def append_many(self, records: list[bytes]) -> list[int]:
        """Several records at once (all land or none), as durable stores do in one commit."""
        bodies = []
        for record in records:
            if not isinstance(record, bytes | bytearray | memoryview):
                raise TypeError(f"record must be bytes, got {type(record).__name__}")
            bodies.append(bytes(record))
        start = len(self.records)
        self.records.extend(bodies)
        return list(range(start, len(self.records)))

    async def read(self, start: int = 0) -> AsyncIterator[tuple[int, bytes]]:
        for index in range(max(start, 0), len(self.records)):
            yield index, self.records[index]

    async def aclose(self) -> None:
        pass
