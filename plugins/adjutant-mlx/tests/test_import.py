"""Importing the plugin stays cheap: the kernel imports every installed plugin at start-up."""

import adjutant_mlx
from adjutant.testing.plugin_checks import assert_cheap_import

#: Imported on first use only, never at plugin import (the shared client's base
#: class comes from `adjutant.providers`, which imports none of these).
HEAVY = {"anyio", "httpx", "numpy", "trio", "psutil", "structlog"}


def test_import_does_not_load_heavy_modules() -> None:
    assert_cheap_import(adjutant_mlx, HEAVY)
