"""Importing the plugin stays cheap: the kernel imports every installed plugin at start-up."""

import adjutant_tts
from adjutant.testing.plugin_checks import assert_cheap_import

#: Imported on first use only, never at plugin import.
HEAVY = {"anyio", "httpx", "numpy", "onnxruntime", "hibari", "sounddevice", "trio", "sniffio"}


def test_import_does_not_load_heavy_modules() -> None:
    assert_cheap_import(adjutant_tts, HEAVY)
