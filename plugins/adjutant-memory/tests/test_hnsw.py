"""The optional HNSW vector index (hnswlib, the ``hnsw`` extra) behind the same
interface as the exact one: near-exact answers, kept across changes (a changed file
costs its chunks, not a rebuild), exact when it is not installed. Speed: bench/memory.py
(exact against hnswlib at 10k and 100k vectors)."""

from pathlib import Path

import numpy as np
import pytest
from memkit import PARAPHRASES, write_project
from test_vectors import model_folder

from adjutant_memory import ExactIndex, Model2VecEmbedder, ProjectIndex
from adjutant_memory._vectors import HnswIndex

pytestmark = pytest.mark.anyio


def test_hnsw_finds_what_exact_search_finds() -> None:
    rng = np.random.default_rng(5)
    vectors = rng.standard_normal((3000, 64)).astype(np.float32)
    exact = ExactIndex(vectors)
    hnsw = HnswIndex(64)
    hnsw.sync(list(range(3000)), vectors)
    queries = rng.standard_normal((50, 64)).astype(np.float32)
    overlap = 0
    for q in queries:
        want = {i for i, _ in exact.search(q, 10)}
        got = hnsw.search(q, 10)
        overlap += len(want & {i for i, _ in got})
        # the similarities are cosines, as the exact index gives them
        assert all(abs(sim - float(exact.matrix[i] @ (q / np.linalg.norm(q)))) < 1e-4
                   for i, sim in got)
    recall = overlap / (10 * len(queries))
    print(f"hnsw recall@10 against exact (3000 random 64-d vectors): {recall:.3f}")
    assert recall >= 0.95


def test_removed_ids_are_never_answered_and_new_ones_are() -> None:
    rng = np.random.default_rng(6)
    vectors = rng.standard_normal((200, 16)).astype(np.float32)
    hnsw = HnswIndex(16)
    hnsw.sync(list(range(200)), vectors)
    keep = list(range(100, 200))
    hnsw.sync(keep, vectors[100:])
    for q in vectors[:100]:  # each removed vector's own query
        assert all(i >= 100 for i, _ in hnsw.search(q, 5))
    extra = rng.standard_normal((1, 16)).astype(np.float32)
    hnsw.sync([*keep, 5000], np.vstack([vectors[100:], extra]))
    assert hnsw.search(extra[0], 1)[0][0] == 5000


async def test_a_project_searched_through_hnsw(tmp_path: Path) -> None:
    root = write_project(tmp_path / "p")
    embedder = Model2VecEmbedder(model_folder())
    answers = {}
    for kind in ("exact", "hnsw"):
        index = ProjectIndex(tmp_path / f"home-{kind}", str(root), vector_index=kind)
        index.scan()
        await index.ingest()
        await index.sync_vectors(embedder)
        answers[kind] = [[h.path for h in await index.search(q, 5, embedder=embedder)]
                         for q, _ in PARAPHRASES]
        if kind == "hnsw":
            graph = index._vector_index(embedder.model_id, embedder.dimension)[0]
            assert isinstance(graph, HnswIndex)
            (root / "notes.md").write_text("Herons nest by the river.\n")
            (root / "larkspur" / "exif.py").unlink()
            index.scan()
            await index.ingest()
            await index.sync_vectors(embedder)
            hits = await index.search("herons by the river", 5, embedder=embedder)
            assert hits[0].path == "notes.md"
            assert index._vector_index(embedder.model_id, embedder.dimension)[0] is graph
            for question, _ in PARAPHRASES:
                hits = await index.search(question, 5, embedder=embedder)
                assert "larkspur/exif.py" not in [h.path for h in hits]
        index.close()
    assert answers["hnsw"] == answers["exact"]  # 14 chunks: the graph is exact here


async def test_hnsw_asked_for_but_not_installed_is_exact_and_says_so(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from adjutant_memory import _vectors

    monkeypatch.setattr(_vectors, "hnsw_installed", lambda: False)
    index = ProjectIndex(tmp_path / "home", str(write_project(tmp_path / "p")),
                         vector_index="hnsw")
    index.scan()
    await index.ingest()
    embedder = Model2VecEmbedder(model_folder())
    await index.sync_vectors(embedder)
    assert isinstance(index._vector_index(embedder.model_id, embedder.dimension)[0],
                      ExactIndex)
    assert index.vector_note is not None and "not installed" in index.vector_note
    index.close()
