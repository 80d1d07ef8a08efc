"""Opt in to the Adjutant test harness (`adjutant.testing`: asyncio and trio)."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # llama_tools, beside this file


def pytest_configure(config: pytest.Config) -> None:
    # Rather than `pytest_plugins = ["adjutant.testing"]`, which pytest rejects in a
    # conftest that is not top-level (as when the repository's root runs every plugin's
    # tests at once). A no-op when `-p adjutant.testing` (the root config) loaded it.
    config.pluginmanager.import_plugin("adjutant.testing")
