"""Importing the plugin stays cheap: the kernel imports every installed plugin at start-up."""

import adjutant_system
from adjutant.testing.plugin_checks import assert_cheap_import

#: Imported on first use only, never at plugin import (the sandbox is in `adjutant`).
HEAVY = {"anyio", "httpx", "numpy", "trio", "adjutant", "psutil"}


def test_import_does_not_load_heavy_modules() -> None:
    assert_cheap_import(adjutant_system, HEAVY)
