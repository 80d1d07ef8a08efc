"""Vectors: a real static model (model2vec), exact search, every vector stored with
its model id and dimension, and a change of model re-embeds instead of mixing."""

import hashlib
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from memkit import QUESTIONS, write_project

from adjutant_memory import ExactIndex, Model2VecEmbedder, ProjectIndex

pytestmark = pytest.mark.anyio


def model_folder() -> str:
    """The static model inside ``tokenlearn-static-model`` (a test fixture only: its
    package states no licence, so it is never a default)."""
    import importlib.util

    spec = importlib.util.find_spec("static_model")
    assert spec is not None and spec.submodule_search_locations
    return str(Path(next(iter(spec.submodule_search_locations))) / "model")


class HashingEmbedder:
    """A third party's embedder: hashed word counts (deterministic, another model)."""

    name = "hashing"
    model_id = "hashing-words-32"
    dimension = 32
    remote = False
    destination = "this machine"

    async def embed(self, texts: Sequence[str]) -> Any:
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for i, text in enumerate(texts):
            for word in text.lower().split():
                out[i, hashlib.sha256(word.encode()).digest()[0] % self.dimension] += 1
        return out


def stored_models(index: ProjectIndex) -> set[tuple[str, int, int]]:
    db = sqlite3.connect(index.path)
    rows = {(str(m), int(d), len(b)) for m, d, b in db.execute(
        "SELECT model, dim, data FROM vectors")}
    db.close()
    return rows


async def test_a_model_change_re_embeds_instead_of_mixing(tmp_path: Path) -> None:
    index = ProjectIndex(tmp_path / "home", str(write_project(tmp_path / "p")))
    index.scan()
    static = Model2VecEmbedder(model_folder())
    report = await index.ingest(embedder=static)
    chunks = index.counts()["chunks"]
    assert report.vectors == chunks
    assert static.dimension == 64
    assert stored_models(index) == {(static.model_id, 64, 64 * 4)}
    assert index.vector_model() == (static.model_id, 64)

    reembedded: list[tuple[str, int, int]] = []

    async def on_reembed(model: str, dim: int, n: int) -> None:
        reembedded.append((model, dim, n))

    other = HashingEmbedder()
    written = await index.sync_vectors(other, on_reembed=on_reembed)
    assert written == chunks
    assert reembedded == [(static.model_id, 64, chunks)]
    assert stored_models(index) == {("hashing-words-32", 32, 32 * 4)}  # none of the old
    hits = await index.search("duplicate photos digest", 5, embedder=other)
    assert hits and all(h.cosine is not None or h.bm25 > 0 for h in hits)
    # the old model's vectors are not searched with the new one (and vice versa)
    assert all(h.cosine is None for h in await index.search("photos", 5, embedder=static))


async def test_hybrid_recall_at_5(tmp_path: Path) -> None:
    index = ProjectIndex(tmp_path / "home", str(write_project(tmp_path / "p")))
    index.scan()
    static = Model2VecEmbedder(model_folder())
    await index.ingest(embedder=static)
    found = 0
    for question, expected in QUESTIONS:
        paths = [h.path for h in await index.search(question, 5, embedder=static)]
        found += expected in paths
    recall = found / len(QUESTIONS)
    print(f"recall@5 (hybrid, model2vec static 64d, {len(QUESTIONS)} questions): {recall:.2f}")
    assert recall >= 0.75


async def test_an_embedder_answering_with_the_wrong_shape_stores_nothing(tmp_path: Path) -> None:
    class Broken(HashingEmbedder):
        model_id = "broken"

        async def embed(self, texts: Sequence[str]) -> Any:
            return np.zeros((len(texts), 3), dtype=np.float32)

    index = ProjectIndex(tmp_path / "home", str(write_project(tmp_path / "p")))
    index.scan()
    await index.ingest()
    with pytest.raises(ValueError, match=r"shape \(\d+, 3\), expected"):
        await index.sync_vectors(Broken())
    assert stored_models(index) == set()
    assert index.counts()["done"] > 0  # the lexical index is intact


def test_exact_search_finds_the_nearest() -> None:
    rng = np.random.default_rng(7)
    matrix = rng.normal(size=(500, 16)).astype(np.float32)
    index = ExactIndex(matrix)
    hits = index.search(matrix[123] * 3.0, 3)
    assert hits[0][0] == 123 and hits[0][1] == pytest.approx(1.0, abs=1e-5)
    assert [s for _, s in hits] == sorted((s for _, s in hits), reverse=True)
