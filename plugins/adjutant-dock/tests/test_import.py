"""Importing the plugin stays cheap: the kernel imports every installed plugin at start-up.
The web stack loads when the dock starts; speech in and out only when they are used."""

import adjutant_dock
from adjutant.testing.plugin_checks import assert_cheap_import

HEAVY = {"starlette", "uvicorn", "sse_starlette", "httpx", "numpy", "adjutant_stt",
         "adjutant_tts", "faster_whisper", "sounddevice", "wave"}


def test_import_does_not_load_heavy_modules() -> None:
    assert_cheap_import(adjutant_dock, HEAVY)
