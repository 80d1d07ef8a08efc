"""Vectors: exact cosine search with numpy behind a small index interface, and the
embedders adjutant-memory itself provides (a local model2vec folder)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

__all__ = ["ExactIndex", "Model2VecEmbedder", "VectorIndex", "as_matrix"]

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
