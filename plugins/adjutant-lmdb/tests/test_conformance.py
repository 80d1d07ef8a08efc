"""The standard store checks, run against the LMDB key/value store and action log."""

from collections.abc import Iterator
from pathlib import Path

import pytest

from adjutant.testing.conformance import KeyValueStoreConformance, LogStoreConformance
from adjutant_lmdb import LmdbKeyValueStore, LmdbLogStore


class TestLmdbKeyValueStore(KeyValueStoreConformance):
    @pytest.fixture
    def store(self, tmp_path: Path) -> Iterator[LmdbKeyValueStore]:
        store = LmdbKeyValueStore()
        store.open(tmp_path / "lmdb")
        yield store
        store.close()


class TestLmdbLogStore(LogStoreConformance):
    @pytest.fixture
    def store(self, tmp_path: Path) -> Iterator[LmdbLogStore]:
        store = LmdbLogStore()
        store.open(tmp_path / "lmdb")
        yield store
        store.close()
