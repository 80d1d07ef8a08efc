"""Memory for Adjutant: working memory, a hybrid index of the project, retrieved context.

The plugin is `MemoryPlugin` (the entry point names the class: one instance per kernel,
holding that kernel's `MemoryService`). Working memory: the user's preferences and
project facts, each with its source, in ``<data home>/memory/working.json``
(`WorkingMemory`), shown and edited with ``adjutant memory``, added by the operator only
through the ``memory.remember`` tool (a write: previewed and approved). The project
index (`ProjectIndex`): chunks of the project's files admitted by core's deny rules, in
BM25 (``bm25s``) and, with an embedder (the ``register_embedders`` hook, or a local
model2vec folder: `Model2VecEmbedder`), vectors searched exactly with numpy; ingestion
is a resumable state machine. The ``memory`` context provider adds working memory and
the relevant passages to the bulletin, labelled untrusted. Settings: the profile's
``plugins.memory`` section (`MemorySettings`). Cheap to import: bm25s, numpy and
model2vec load on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from adjutant_hookspecs import lazy_exports

from ._plugin import MemoryPlugin

if TYPE_CHECKING:  # imported on first use (`lazy_exports`): start-up stays cheap
    from ._assemble import NOTHING_FOUND, assemble
    from ._index import Hit, ProjectIndex
    from ._service import MemoryService
    from ._settings import MemorySettings, memory_settings
    from ._vectors import ExactIndex, Model2VecEmbedder
    from ._working import Entry, WorkingMemory

__all__ = ["NOTHING_FOUND", "Entry", "ExactIndex", "Hit", "MemoryPlugin", "MemoryService",
           "MemorySettings", "Model2VecEmbedder", "ProjectIndex", "WorkingMemory", "assemble",
           "memory_settings"]

__getattr__ = lazy_exports(__name__, {
    "NOTHING_FOUND": "._assemble", "assemble": "._assemble", "Hit": "._index",
    "ProjectIndex": "._index", "MemoryService": "._service", "MemorySettings": "._settings",
    "memory_settings": "._settings", "ExactIndex": "._vectors",
    "Model2VecEmbedder": "._vectors", "Entry": "._working", "WorkingMemory": "._working"})
