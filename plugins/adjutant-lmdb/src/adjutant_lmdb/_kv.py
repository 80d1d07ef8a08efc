"""`LmdbKeyValueStore`: settings, mode and session state in LMDB's ``kv`` database.

Keys are stored as their UTF-8 bytes, so LMDB's byte order is Python's string
order (UTF-8 preserves code point order) and ``scan`` comes out sorted for free.

Where the calls run: a ``put`` or ``delete`` is a write transaction whose commit
fsyncs (0.5-1 ms on a fast SSD, tens of ms on a busy or slow disk), so it runs in a
worker thread and the event loop never waits for the disk. A ``get`` reads the
memory map directly (a few microseconds, less than a thread hop costs), so it
stays inline. ``scan`` reads in batches, each in a worker thread.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from ._env import DEFAULT_MAP_SIZE, NotOpenError, SharedEnv, acquire, close_in_thread, in_thread

if TYPE_CHECKING:
    import lmdb

__all__ = ["LmdbKeyValueStore"]

_SCAN_BATCH = 512
_SCAN_BATCH_BYTES = 4 << 20


class LmdbKeyValueStore:
    """The ``kv:lmdb`` store. Open it with `open` (the plugin does, in ``startup``)."""

    kind: Literal["kv"] = "kv"

    def __init__(self, name: str = "lmdb", *, map_size: int = DEFAULT_MAP_SIZE) -> None:
        self.name = name
        self.map_size = map_size
        self.path: Path | None = None
        self._shared: SharedEnv | None = None
        self._db: lmdb._Database | None = None
        self._max_key = 511

    @property
    def opened(self) -> bool:
        return self._shared is not None

    def open(self, path: str | os.PathLike[str]) -> None:
        """Open (creating) the store in directory ``path``. Blocking; call at start-up."""
        if self.opened:
            raise RuntimeError(f"kv store {self.name!r} is already open at {self.path}")
        self.path = Path(path)
        shared = acquire(self.path, self.map_size)
        try:
            with shared.use("open") as env:
                self._db = env.open_db(b"kv")
                self._max_key = env.max_key_size()
        except BaseException:
            shared.release()
            raise
        self._shared = shared

    def close(self) -> None:
        """Release the environment (idempotent, blocking)."""
        shared, self._shared = self._shared, None
        if shared is not None:
            shared.release()

    async def aclose(self) -> None:
        if self.opened:
            await close_in_thread(self.close)

    def _env(self, what: str) -> SharedEnv:
        if self._shared is None:
            raise NotOpenError(
                f"{what}: LMDB key/value store {self.name!r} is not open; the adjutant-lmdb "
                "plugin opens it when the kernel starts (`async with Kernel()`), or call "
                "store.open(directory)")
        return self._shared

    def _key(self, key: str) -> bytes:
        if not isinstance(key, str):
            raise TypeError(f"key must be str, got {type(key).__name__}")
        raw = key.encode("utf-8")
        if not 0 < len(raw) <= self._max_key:
            raise ValueError(f"key must be 1 to {self._max_key} bytes of UTF-8, got {len(raw)}")
        return raw

    # -- the KeyValueStore protocol ---------------------------------------------------------

    async def get(self, key: str) -> bytes | None:
        raw = self._key(key)
        with self._env("get").use("get") as env, env.begin(db=self._db) as txn:
            return txn.get(raw)

    async def put(self, key: str, value: bytes) -> None:
        if not isinstance(value, bytes | bytearray | memoryview):
            raise TypeError(f"value must be bytes, got {type(value).__name__}")
        await in_thread(self._put, self._key(key), bytes(value))

    def _put(self, key: bytes, value: bytes) -> None:
        with self._env("put").use("put") as env, env.begin(write=True, db=self._db) as txn:
            txn.put(key, value)

    async def put_many(self, items: Sequence[tuple[str, bytes | None]]) -> None:
        """Several puts (a value of None deletes the key) in one transaction: one
        commit, one fsync, all or nothing. Not in the `KeyValueStore` protocol: a
        caller that groups writes (adjutant-tasks' queue) uses it where present."""
        batch = []
        for key, value in items:
            if value is not None and not isinstance(value, bytes | bytearray | memoryview):
                raise TypeError(f"value must be bytes or None, got {type(value).__name__}")
            batch.append((self._key(key), None if value is None else bytes(value)))
        if batch:
            await in_thread(self._put_many, batch)

    def _put_many(self, batch: list[tuple[bytes, bytes | None]]) -> None:
        with self._env("put").use("put") as env, env.begin(write=True, db=self._db) as txn:
            for key, value in batch:
                if value is None:
                    txn.delete(key)
                else:
                    txn.put(key, value)

    async def delete(self, key: str) -> bool:
        return await in_thread(self._delete, self._key(key))

    def _delete(self, key: bytes) -> bool:
        with self._env("delete").use("delete") as env, env.begin(write=True, db=self._db) as txn:
            return txn.delete(key)

    async def scan(self, prefix: str = "") -> AsyncIterator[tuple[str, bytes]]:
        """``(key, value)`` for every key starting with ``prefix``, in key order. Each
        batch is one read transaction: writes made during a long scan may show in
        later batches."""
        start = raw_prefix = prefix.encode("utf-8")
        more = True
        while more:
            batch, more = await in_thread(self._scan_batch, raw_prefix, start)
            for key, value in batch:
                yield key.decode("utf-8"), value
            if batch:
                start = batch[-1][0] + b"\x00"  # the smallest key after the last one

    def _scan_batch(self, prefix: bytes, start: bytes) -> tuple[list[tuple[bytes, bytes]], bool]:
        out: list[tuple[bytes, bytes]] = []
        size = 0
        with self._env("scan").use("scan") as env, env.begin(db=self._db) as txn:
            cursor = txn.cursor()
            if not cursor.set_range(start):
                return out, False
            for key, value in cursor:
                if not key.startswith(prefix):
                    return out, False
                out.append((key, value))
                size += len(value)
                if len(out) >= _SCAN_BATCH or size >= _SCAN_BATCH_BYTES:
                    return out, True
        return out, False
