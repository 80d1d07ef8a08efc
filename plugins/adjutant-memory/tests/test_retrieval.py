"""Retrieval on a fixture project: recall@5 (printed and bounded), the config question,
refusal when nothing is relevant, re-indexing when a file changes."""

from pathlib import Path

import pytest
from memkit import QUESTIONS, write_project

from adjutant_memory import NOTHING_FOUND, ProjectIndex, assemble
from adjutant_memory._assemble import is_question

pytestmark = pytest.mark.anyio


def recall_at_5(hits_by_question: list[list[str]]) -> float:
    found = sum(expected in paths[:5] for (_, expected), paths in
                zip(QUESTIONS, hits_by_question, strict=True))
    return found / len(QUESTIONS)


async def test_recall_at_5_lexical(tmp_path: Path) -> None:
    index = ProjectIndex(tmp_path / "home", str(write_project(tmp_path / "p")))
    index.scan()
    await index.ingest()
    paths = [[h.path for h in await index.search(q, 5)] for q, _ in QUESTIONS]
    recall = recall_at_5(paths)
    print(f"recall@5 (lexical, {len(QUESTIONS)} questions): {recall:.2f}")
    assert recall >= 0.8, list(zip(QUESTIONS, paths, strict=True))


async def test_where_do_we_parse_the_config(tmp_path: Path) -> None:
    index = ProjectIndex(tmp_path / "home", str(write_project(tmp_path / "p")))
    index.scan()
    await index.ingest()
    hits = await index.search("where do we parse the config?", 5)
    assert hits[0].path == "larkspur/settings.py"
    assert "def parse_config" in hits[0].text
    assert hits[0].start >= 1 and hits[0].end >= hits[0].start
    assert hits[0].coverage == 1.0


async def test_a_question_with_nothing_relevant_gets_the_refusal_marker(tmp_path: Path) -> None:
    index = ProjectIndex(tmp_path / "home", str(write_project(tmp_path / "p")))
    index.scan()
    await index.ingest()
    question = "what is the capital of Mongolia?"
    hits = [h for h in await index.search(question, 5) if h.coverage >= 0.5]
    assert hits == []
    memory = assemble(pinned=[], hits=hits, question=is_question(question))
    assert memory["answer"] == NOTHING_FOUND
    assert NOTHING_FOUND in memory["text"] and memory["sources"] == []
    # a statement that is not a question gets no marker
    assert "answer" not in assemble(pinned=[], hits=[], question=is_question("tidy up"))


async def test_a_changed_file_is_indexed_again_and_a_deleted_one_dropped(tmp_path: Path) -> None:
    root = write_project(tmp_path / "p")
    index = ProjectIndex(tmp_path / "home", str(root))
    index.scan()
    await index.ingest()
    assert index.scan().queued == 0  # nothing changed
    (root / "larkspur" / "exif.py").write_text('"""Reading GPS coordinates."""\n')
    (root / "larkspur" / "scheduler.py").unlink()
    report = index.scan()
    assert (report.queued, report.removed) == (1, 1)
    assert index.unindexed() == ["larkspur/exif.py"]
    await index.ingest()
    assert index.states()["larkspur/exif.py"] == "done"
    assert "larkspur/scheduler.py" not in index.states()
    hits = await index.search("GPS coordinates", 5)
    assert hits[0].path == "larkspur/exif.py"
    assert not any(h.path == "larkspur/scheduler.py" for h in
                   await index.search("nightly schedule cron", 5))


async def test_touching_a_file_without_changing_it_queues_nothing(tmp_path: Path) -> None:
    import os

    root = write_project(tmp_path / "p")
    index = ProjectIndex(tmp_path / "home", str(root))
    index.scan()
    await index.ingest()
    os.utime(root / "README.md", ns=(1, 1))
    assert index.scan().queued == 0  # the hash is the same


async def test_a_project_larger_than_the_limit_is_indexed_up_to_it_and_says_so(
        tmp_path: Path) -> None:
    index = ProjectIndex(tmp_path / "home", str(write_project(tmp_path / "p")), max_files=5)
    report = index.scan()
    await index.ingest()
    assert index.counts()["done"] == 5
    assert "more than 5 files" in report.skipped[-1][1]


async def test_a_scan_out_of_time_drops_nothing_and_the_next_goes_further(
        tmp_path: Path) -> None:
    root = write_project(tmp_path / "p")
    index = ProjectIndex(tmp_path / "home", str(root))
    index.scan()
    await index.ingest()
    known = len(index.states())
    partial = index.scan(budget_s=0.0)
    assert partial.partial and partial.removed == 0
    assert len(index.states()) == known
    (root / "zzz.md").write_text("new notes about herons\n")
    assert index.scan(budget_s=10.0).queued == 1


async def test_a_change_goes_to_a_delta_index_not_a_rebuild(tmp_path: Path) -> None:
    root = write_project(tmp_path / "p")
    index = ProjectIndex(tmp_path / "home", str(root))
    index.scan()
    await index.ingest()
    index.lexical_hits("config", 5)
    assert index._lexical is not None
    main = index._lexical[1][0]
    (root / "larkspur" / "exif.py").write_text('"""Reading GPS coordinates."""\n')
    (root / "notes.md").write_text("Herons nest by the river.\n")
    index.scan()
    await index.ingest()
    assert (await index.search("GPS coordinates", 5))[0].path == "larkspur/exif.py"
    assert (await index.search("herons river", 5))[0].path == "notes.md"
    old = await index.search("DateTimeOriginal taken_at", 5)  # the old exif text
    assert "larkspur/exif.py" not in [h.path for h in old]
    assert index._lexical[1][0] is main  # the main index was not rebuilt
    assert len(index._lexical[1]) == 2 and index._lexical[2]  # a delta, dead ids skipped
