"""The harness's own doubles pass the suites they help others pass."""

from __future__ import annotations

import pytest

from adjutant.testing import MemoryKeyValueStore, MemoryLogStore, ScriptedProvider
from adjutant.testing.conformance import (
    KeyValueStoreConformance,
    LogStoreConformance,
    ProviderConformance,
)
from adjutant_hookspecs import Response


class TestMemoryKeyValueStore(KeyValueStoreConformance):
    @pytest.fixture
    def store(self) -> MemoryKeyValueStore:
        return MemoryKeyValueStore()


class TestMemoryLogStore(LogStoreConformance):
    @pytest.fixture
    def store(self) -> MemoryLogStore:
        return MemoryLogStore()


class TestScriptedProvider(ProviderConformance):
    @pytest.fixture
    def provider(self) -> ScriptedProvider:
        return ScriptedProvider(Response(text="hello there"), "one two three")
