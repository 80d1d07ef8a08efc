"""`LmdbKeyValueStore.put_many`: several puts and deletes in one transaction, durable
across a reopen, all or nothing when one item is bad."""

from __future__ import annotations

from pathlib import Path

import pytest

from adjutant_lmdb import LmdbKeyValueStore

pytestmark = pytest.mark.anyio


async def test_puts_and_deletes_commit_together_and_survive_a_reopen(tmp_path: Path) -> None:
    store = LmdbKeyValueStore()
    store.open(tmp_path)
    try:
        await store.put("a", b"1")
        await store.put_many([("b", b"2"), ("a", None), ("c", b"3"), ("b", b"4")])
    finally:
        await store.aclose()
    again = LmdbKeyValueStore()
    again.open(tmp_path)
    try:
        assert [kv async for kv in again.scan()] == [("b", b"4"), ("c", b"3")]
        with pytest.raises(TypeError, match="bytes or None"):
            await again.put_many([("d", b"5"), ("e", "text")])  # type: ignore[list-item]
        assert await again.get("d") is None  # nothing of a bad batch is written
        await again.put_many([])
    finally:
        await again.aclose()
