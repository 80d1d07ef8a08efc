"""Importing the plugin stays cheap: the kernel imports every installed plugin at start-up."""

import adjutant_guard
from adjutant.testing.plugin_checks import assert_cheap_import

#: Imported on first use only, never at plugin import. The guard has no heavy
#: dependencies; URL parsing and address checks load only for tools that take URLs.
HEAVY = {"anyio", "httpx", "numpy", "trio", "ipaddress", "shlex"}


def test_import_does_not_load_heavy_modules() -> None:
    assert_cheap_import(adjutant_guard, HEAVY)
