"""Opt in to the Adjutant test harness (`adjutant.testing`: asyncio and trio).

The default embedding model (the ``minilm`` extra, installed here) is left out of the
tests' kernels unless a test is marked ``default_model``: it is a real model that takes
seconds per test, and most tests are about something else. Left out the way a user
leaves it out (no embedder is used by default), so what they test is the same."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # memkit: the fixture project, beside this file


def pytest_configure(config: pytest.Config) -> None:
    # Rather than `pytest_plugins = ["adjutant.testing"]`, which pytest rejects in a
    # conftest that is not top-level (as when the repository's root runs every plugin's
    # tests at once). A no-op when `-p adjutant.testing` (the root config) loaded it.
    config.pluginmanager.import_plugin("adjutant.testing")
    config.addinivalue_line("markers", "default_model: the kernel uses the default "
                            "embedding model (all-MiniLM-L6-v2) when none is set")


@pytest.fixture(autouse=True)
def _default_model(request: pytest.FixtureRequest,
                   monkeypatch: pytest.MonkeyPatch) -> None:
    if request.node.get_closest_marker("default_model") is None:
        from adjutant_memory import _settings

        monkeypatch.setattr(_settings, "DEFAULT_EMBEDDER", "(no default model in this test)")
