"""Test plugins headlessly: ``Harness`` (a kernel with the operator on it, driven as
a client drives it: ``await h.run("request")`` returns a `RunResult`), fake tools, a
scripted provider and approver, recorders, stores.

The scripted provider, the scripted approver and the in-memory stores live in
`adjutant.scripted` (no pytest there: an app can use them for a demo or a dry mode);
they are re-exported here. Opt in from your tests with
``pytest_plugins = ["adjutant.testing"]`` in a ``conftest.py`` (or
``-p adjutant.testing``). That also runs every ``@pytest.mark.anyio`` test on both
asyncio and trio. Conformance suites for each kind of plugin live in
`adjutant.testing.conformance`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from ..scripted import (
    MemoryKeyValueStore,
    MemoryLogStore,
    ScriptedApprover,
    ScriptedProvider,
    ScriptExhaustedError,
)
from ._fakes import FakeRead, FakeWrite, fake_tools
from ._harness import Harness
from ._recorders import EventRecorder, HookRecorder
from ._runs import RunResult, plan
from ._system import SKIP_REASON as _SKIP_REASON
from ._system import missing as _missing
from ._system import needs_sandbox, outliving

if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

__all__ = [
    "EventRecorder",
    "FakeRead",
    "FakeWrite",
    "Harness",
    "HookRecorder",
    "MemoryKeyValueStore",
    "MemoryLogStore",
    "RunResult",
    "ScriptExhaustedError",
    "ScriptedApprover",
    "ScriptedProvider",
    "fake_tools",
    "needs_sandbox",
    "on_terminal",
    "outliving",
    "plan",
]


def on_terminal(command: str, args: Sequence[str] = (), **options: Any) -> Any:
    """``command ARGS`` on a real pseudo-terminal, driven like ``pexpect.spawn`` (pexpect
    must be installed; the options are `adjutant.testing.terminal.spawn`'s). Safe to
    call from a multi-threaded test process, which ``pexpect.spawn`` is not."""
    from .terminal import spawn  # pexpect, a test dependency: imported when used

    return spawn(command, args, **options)


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    """Run each anyio test on asyncio and on trio."""
    return str(request.param)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "needs_sandbox: the test runs a real sandboxed child (bubblewrap, ripgrep); "
        "skipped, and counted at the end, where they are missing")
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


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, exitstatus: int,
                            config: pytest.Config) -> None:
    """Say, at the very end, how many tests could not run for want of the sandbox."""
    skipped = [r for r in terminalreporter.stats.get("skipped", [])
               if _SKIP_REASON in str(getattr(r, "longrepr", ""))]
    if skipped:
        terminalreporter.write_line(
            f"adjutant.testing: {len(skipped)} tests needing the sandbox were skipped: "
            f"{_missing()}", yellow=True, bold=True)
