"""Importing the plugin stays cheap: the kernel imports every installed plugin at start-up."""

import adjutant_template
from adjutant.testing.plugin_checks import assert_cheap_import

#: Imported on first use only, never at plugin import (add your plugin's heavy ones).
HEAVY = {"anyio", "httpx", "numpy", "trio"}


def test_import_does_not_load_heavy_modules() -> None:
    assert_cheap_import(adjutant_template, HEAVY)
