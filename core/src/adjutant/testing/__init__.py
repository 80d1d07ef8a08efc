"""Test plugins headlessly: ``Harness``, a scripted provider, recorders, stores.

Opt in from your tests with ``pytest_plugins = ["adjutant.testing"]`` in a
``conftest.py`` (or ``-p adjutant.testing``). That also runs every
``@pytest.mark.anyio`` test on both asyncio and trio. Conformance suites for each
kind of plugin live in `adjutant.testing.conformance`.
"""

from __future__ import annotations

import pytest

from ._approver import ScriptedApprover
from ._harness import Harness
from ._provider import ScriptedProvider, ScriptExhaustedError
from ._recorders import EventRecorder, HookRecorder
from ._stores import MemoryKeyValueStore, MemoryLogStore

__all__ = [
    "EventRecorder",
    "Harness",
    "HookRecorder",
    "MemoryKeyValueStore",
    "MemoryLogStore",
    "ScriptExhaustedError",
    "ScriptedApprover",
    "ScriptedProvider",
]


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    """Run each anyio test on asyncio and on trio."""
    return str(request.param)
