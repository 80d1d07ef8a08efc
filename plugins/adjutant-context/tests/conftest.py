"""Opt in to the Adjutant test harness (`adjutant.testing`: asyncio and trio), and give
every test a clean environment: a temporary HOME and ADJUTANT_HOME, no display."""

from pathlib import Path

import pytest


def pytest_configure(config: pytest.Config) -> None:
    # Rather than `pytest_plugins = ["adjutant.testing"]`, which pytest rejects in a
    # conftest that is not top-level (as when the repository's root runs every plugin's
    # tests at once). A no-op when `-p adjutant.testing` (the root config) loaded it.
    config.pluginmanager.import_plugin("adjutant.testing")


@pytest.fixture(autouse=True)
def clean_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing of the developer's machine leaks in: HOME, ADJUTANT_HOME, no display."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("ADJUTANT_HOME", str(tmp_path / "adjutant"))
    for name in ("HISTFILE", "DISPLAY", "WAYLAND_DISPLAY", "XDG_DATA_HOME"):
        monkeypatch.delenv(name, raising=False)
