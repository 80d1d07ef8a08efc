"""Opt in to the Adjutant test harness (`adjutant.testing`: asyncio and trio)."""

import pytest


def pytest_configure(config: pytest.Config) -> None:
    # Rather than `pytest_plugins = ["adjutant.testing"]`, which pytest rejects in a
    # conftest that is not top-level (`pytest examples/` from the repository root).
    # A no-op when `-p adjutant.testing` (the repository's root config) loaded it.
    config.pluginmanager.import_plugin("adjutant.testing")
