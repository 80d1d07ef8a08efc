"""Vectors: exact cosine search with numpy behind a small index interface, and the
embedders adjutant-memory itself provides (a local model2vec folder)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

__all__ = ["ExactIndex", "HnswIndex", "Model2VecEmbedder", "VectorIndex", "as_matrix",
           "hnsw_installed"]

#: A static model embeds this many texts in the caller's thread (the rest in a worker).
INLINE_TEXTS = 8


class VectorIndex(Protocol):
    """Nearest neighbours by cosine similarity over vectors added in order."""

    def search(self, query: Any, k: int) -> list[tuple[int, float]]:
        """(position, similarity) of the ``k`` nearest, nearest first."""
        ...


def as_matrix(vectors: Any, count: int, dimension: int) -> Any:
    """What an embedder returned as a float32 matrix (``count`` by ``dimension``), or
    `ValueError` naming what is wrong: a model that answers with another shape is
    never stored."""
    import numpy as np

    try:
        matrix = np.asarray(vectors, dtype=np.float32)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"the embedder returned something that is not vectors: {exc}") \
            from None
    if matrix.shape != (count, dimension):
        raise ValueError(f"the embedder returned shape {matrix.shape}, expected "
                         f"({count}, {dimension})")
    if not np.isfinite(matrix).all():
        raise ValueError("the embedder returned NaN or infinite values")
    return matrix


class ExactIndex:
    """Exact search: one matrix product over every vector (normalised once)."""

    def __init__(self, matrix: Any) -> None:
        import numpy as np

        matrix = np.asarray(matrix, dtype=np.float32)
        norms = np.linalg.norm(matrix, axis=1, keepdims=True) if matrix.size else None
        self.matrix = matrix / np.maximum(norms, 1e-12) if norms is not None else matrix

    def search(self, query: Any, k: int) -> list[tuple[int, float]]:
        import numpy as np

        if not self.matrix.size or k < 1:
            return []
        q = np.asarray(query, dtype=np.float32).reshape(-1)
        q = q / max(float(np.linalg.norm(q)), 1e-12)
        # einsum's own loop rather than BLAS: OpenBLAS's threads, woken for one
        # matrix-vector product on a busy machine, cost 10 to 30 ms (measured at 10k
        # by 64 with bench/memory.py); the loop takes under a millisecond there
        scores = np.einsum("ij,j->i", self.matrix, q)
        k = min(k, len(scores))
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.argsort(-scores[top])]
        return [(int(i), float(scores[i])) for i in top]


def hnsw_installed() -> bool:
    """Whether hnswlib (the ``hnsw`` extra) can be imported (found, not imported)."""
    import importlib.util

    return importlib.util.find_spec("hnswlib") is not None


class HnswIndex:
    """Approximate search in an HNSW graph (hnswlib, the ``hnsw`` extra), by cosine.

    Unlike `ExactIndex` it is kept across changes: vectors are added and removed by
    chunk id (``sync``), so a changed file costs its own chunks, not a rebuild.
    `search` answers chunk ids (the positions of an identity list)."""

    #: graph degree, build and search breadth (hnswlib's recommended range)
    M = 16
    EF_CONSTRUCTION = 200
    EF_SEARCH = 64

    def __init__(self, dimension: int, threads: int = 1) -> None:
        import hnswlib  # type: ignore[import-not-found,import-untyped,unused-ignore]

        self.dimension = dimension
        self.threads = threads
        self._index = hnswlib.Index(space="cosine", dim=dimension)
        self._index.init_index(max_elements=1024, ef_construction=self.EF_CONSTRUCTION,
                               M=self.M, allow_replace_deleted=True)
        self._index.set_num_threads(threads)
        self.ids: set[int] = set()

    def sync(self, ids: Sequence[int], vectors: Any) -> None:
        """Make the index hold exactly ``ids`` (chunk ids) with their ``vectors``
        (rows, in the same order): new ones added, gone ones marked deleted."""
        import numpy as np

        wanted = {int(i): n for n, i in enumerate(ids)}
        for gone in self.ids - wanted.keys():
            self._index.mark_deleted(gone)
        self.ids -= self.ids - wanted.keys()
        new = [i for i in wanted if i not in self.ids]
        if new:
            need = len(self.ids) + len(new)
            if need > self._index.get_max_elements():
                self._index.resize_index(max(need, 2 * self._index.get_max_elements()))
            rows = np.asarray(vectors, dtype=np.float32)[[wanted[i] for i in new]]
            self._index.add_items(rows, np.asarray(new, dtype=np.int64),
                                  num_threads=self.threads, replace_deleted=True)
            self.ids.update(new)

    def search(self, query: Any, k: int) -> list[tuple[int, float]]:
        import numpy as np

        k = min(k, len(self.ids))
        if k < 1:
            return []
        self._index.set_ef(max(self.EF_SEARCH, k))
        labels, distances = self._index.knn_query(
            np.asarray(query, dtype=np.float32).reshape(1, -1), k=k, num_threads=1)
        return [(int(i), 1.0 - float(d)) for i, d in zip(labels[0], distances[0], strict=True)]


class _Identity:
    """Positions that are their own chunk ids (what `HnswIndex.search` answers)."""

    def __init__(self, size: int) -> None:
        self.size = size

    def __getitem__(self, i: int) -> int:
        return i

    def __len__(self) -> int:
        return self.size


class Model2VecEmbedder:
    """A static embedding model in a local folder, run by ``model2vec`` (no network:
    the folder is read, nothing is fetched)."""

    remote = False
    destination = "this machine"
    description = "a local static model (model2vec)"

    def __init__(self, path: str, *, name: str = "model2vec") -> None:
        import hashlib
        import json
        import os

        self.name = name
        self.path = os.path.realpath(path)
        try:
            with open(os.path.join(self.path, "config.json"), "rb") as handle:
                config = json.load(handle)
            st = os.stat(os.path.join(self.path, "model.safetensors"))
        except (OSError, ValueError) as exc:
            from adjutant_hookspecs import EmbeddingError

            raise EmbeddingError(f"{path} is not a model2vec model folder ({exc})",
                                 hint="point plugins.memory.model2vec_path at a folder with "
                                      "config.json and model.safetensors") from None
        # the id names the exact weights: another file is another model
        digest = hashlib.sha256(f"{self.path}\x00{st.st_size}\x00{st.st_mtime_ns}".encode())
        self.model_id = f"model2vec:{os.path.basename(self.path)}:{digest.hexdigest()[:12]}"
        self._config = config
        self._model: Any = None
        self.dimension = self._load().dim

    def _load(self) -> Any:
        if self._model is None:
            from model2vec import StaticModel

            self._model = StaticModel.from_pretrained(self.path)
        return self._model

    async def embed(self, texts: Sequence[str]) -> Any:
        import anyio

        model = self._load()
        if len(texts) <= INLINE_TEXTS:  # a query: well under a millisecond, and a hop
            return model.encode(list(texts))  # to a worker thread costs more when busy
        return await anyio.to_thread.run_sync(lambda: model.encode(list(texts)))
