"""Importing the plugin stays cheap: the kernel imports every installed plugin at start-up."""

import adjutant_lmdb
from adjutant.testing.plugin_checks import assert_cheap_import

#: Imported on first use only, never at plugin import: lmdb when a store is opened,
#: anyio on the first call that needs a worker thread.
HEAVY = {"anyio", "httpx", "lmdb", "numpy", "trio"}


def test_import_does_not_load_heavy_modules() -> None:
    assert_cheap_import(adjutant_lmdb, HEAVY)


def test_public_names_resolve() -> None:
    assert all(hasattr(adjutant_lmdb, name) for name in adjutant_lmdb.__all__)
    assert adjutant_lmdb.__all__ == sorted(adjutant_lmdb.__all__)
