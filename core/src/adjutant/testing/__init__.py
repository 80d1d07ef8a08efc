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


def pytest_configure(config: pytest.Config) -> None:
    # httpx iterates a response through nested async generators; when a stream is
    # abandoned early (a cancelled generation, an error event) only the outer one can
    # be closed, and on trio the inner ones are finalised by the garbage collector with
    # a ResourceWarning. The connection itself is closed by `Response.aclose()`, so
    # nothing leaks: the warning is noise in suites that run with `-W error`.
    config.addinivalue_line(
        "filterwarnings",
        "ignore:Exception ignored in. <async_generator object "
        "(Response\\.aiter_|BoundAsyncStream|AsyncResponseStream|PoolByteStream|"
        "HTTP11ConnectionByteStream|AsyncHTTP11Connection):pytest.PytestUnraisableExceptionWarning")
    config.addinivalue_line(
        "filterwarnings",
        "ignore:Async generator 'httpx.*was garbage collected:ResourceWarning")
