"""Opt in to the Adjutant test harness (`adjutant.testing`: asyncio and trio), and
fixtures that open LMDB stores in a temporary directory and close them after."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

import pytest

from adjutant_lmdb import LmdbLogStore


def pytest_configure(config: pytest.Config) -> None:
    # Rather than `pytest_plugins = ["adjutant.testing"]`, which pytest rejects in a
    # conftest that is not top-level (as when the repository's root runs every plugin's
    # tests at once). A no-op when `-p adjutant.testing` (the root config) loaded it.
    config.pluginmanager.import_plugin("adjutant.testing")


@pytest.fixture
def lmdb_dir(tmp_path: Path) -> Path:
    return tmp_path / "lmdb"


@pytest.fixture
def open_log(lmdb_dir: Path) -> Iterator[Callable[..., LmdbLogStore]]:
    """``open_log(**options)``: a log store opened in ``lmdb_dir``, closed at the end."""
    opened: list[LmdbLogStore] = []

    def open_(**options: Any) -> LmdbLogStore:
        store = LmdbLogStore(**options)
        store.open(lmdb_dir, exports=lmdb_dir.parent / "logs")
        opened.append(store)
        return store

    yield open_
    for store in opened:
        store.close()


@pytest.fixture
def raw_log(lmdb_dir: Path) -> Callable[[], AbstractContextManager[Any]]:
    """``with raw_log() as (txn, key):`` a write transaction on the log database through
    the raw lmdb API, as someone editing the files would have (close the store first)."""

    @contextmanager
    def raw() -> Iterator[Any]:
        import lmdb

        env = lmdb.open(str(lmdb_dir), max_dbs=4, map_size=1 << 30)
        try:
            with env.begin(write=True, db=env.open_db(b"log")) as txn:
                yield txn, lambda index: index.to_bytes(8, "big")
        finally:
            env.close()

    return raw
