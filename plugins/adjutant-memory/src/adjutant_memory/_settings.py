"""adjutant-memory's settings: the profile's ``plugins.memory`` section."""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs
from attrs import validators as v

if TYPE_CHECKING:
    from adjutant_hookspecs import Kernel

__all__ = ["DEFAULT_EMBEDDER", "MemorySettings", "memory_settings"]

#: The embedder used when the settings name none, if registered (adjutant-memory
#: registers it when its ``minilm`` extra is installed: `adjutant_memory._minilm`).
DEFAULT_EMBEDDER = "minilm"


@attrs.frozen
class MemorySettings:
    """Memory and retrieval (profile: ``"plugins": {"memory": {...}}``)."""

    #: A registered embedder by name (``adjutant memory status`` lists them); None:
    #: the static model at ``model2vec_path`` if set, else the default model.
    embedder: str | None = None
    #: With neither set: use the default model (``minilm``: all-MiniLM-L6-v2, the
    #: ``minilm`` extra) when it is installed; False, or not installed: lexical only.
    default_model: bool = True
    #: Recall past sessions: a finished earlier request that matches strongly (and
    #: what it did) joins a question's context, after the project's passages.
    past_sessions: bool = True
    #: The vector index: "exact" (numpy, every vector compared) or "hnsw" (hnswlib's
    #: approximate graph, the ``hnsw`` extra; exact when it is not installed).
    vector_index: str = attrs.field(default="exact", validator=v.in_(("exact", "hnsw")))
    #: A local model2vec model folder (config.json, model.safetensors, tokenizer.json).
    model2vec_path: str | None = None
    #: The longest chunk of a file, in lines (paragraphs are kept whole below it).
    chunk_lines: int = attrs.field(default=40, validator=[v.ge(4), v.le(400)])
    #: Files per ingestion batch (one checkpoint per batch).
    batch_files: int = attrs.field(default=32, validator=[v.ge(1), v.le(10_000)])
    #: Files larger than this are not indexed.
    max_file_bytes: int = attrs.field(default=512_000, validator=[v.ge(1), v.le(50_000_000)])
    #: Files indexed at most per project (a home folder is not a project).
    max_files: int = attrs.field(default=50_000, validator=[v.ge(1), v.le(10_000_000)])
    #: Ingestion work stuck in ``processing`` longer than this (seconds) is ``failed``
    #: at start-up rather than ``paused``.
    stale_after_s: float = attrs.field(default=86_400.0, validator=v.gt(0))
    #: Retrieved passages per request, and the characters the memory context may take
    #: (about 400 tokens: a small local model's prompt pays for every one of them).
    hits: int = attrs.field(default=5, validator=[v.ge(1), v.le(50)])
    budget_chars: int = attrs.field(default=600, validator=[v.ge(200), v.le(200_000)])
    #: A passage is relevant when it holds at least this share of the request's words
    #: (stemmed, stop words aside), or is this similar (cosine) by vectors.
    min_coverage: float = attrs.field(default=0.5, validator=[v.gt(0), v.le(1)])
    min_cosine: float = attrs.field(default=0.75, validator=[v.gt(0), v.le(1)])
    #: The relevance gate (`adjutant_memory._gate`): passages only for a question about
    #: the project, and only its strong hits. False: every request gets every hit that
    #: passes ``min_coverage``/``min_cosine`` (what the plugin did before the gate).
    gate: bool = True


def memory_settings(kernel: Kernel) -> MemorySettings:
    """This kernel's `MemorySettings` (the defaults where adjutant-memory is not loaded)."""
    try:
        return kernel.plugin_settings(MemorySettings)
    except LookupError:
        return MemorySettings()
