"""Context assembly: the design's priority order, trimmed to the budget, labelled."""

from adjutant_memory import NOTHING_FOUND, Entry, Hit, assemble
from adjutant_memory._assemble import UNTRUSTED
from adjutant_memory._working import Source


def entry(i: int, text: str) -> Entry:
    return Entry(id=f"e{i}", text=text, source=Source(by="user", at=0.0))


def hit(i: int, path: str, text: str) -> Hit:
    return Hit(chunk_id=i, path=path, start=1, end=3, text=text, score=1.0, coverage=1.0)


def test_priority_order_pinned_changes_hits_then_backfill() -> None:
    memory = assemble(pinned=[entry(1, "I prefer pytest -q")], unindexed=["new.py"],
                      hits=[hit(1, "a.py", "alpha")], cited=[hit(2, "b.py", "beta")],
                      budget=3000)
    text = memory["text"]
    order = [text.index(s) for s in (UNTRUSTED, "I prefer pytest -q", "new.py", "[a.py:1-3]",
                                      "[b.py:1-3]")]
    assert order == sorted(order)
    assert memory["sources"] == ["a.py:1-3", "b.py:1-3"]
    assert memory["pinned"] == ["e1"] and memory["changed"] == ["new.py"]
    assert memory["trimmed"] == 0 and "answer" not in memory


def test_the_budget_trims_the_lowest_priority_first() -> None:
    hits = [hit(i, f"f{i}.py", "x" * 400) for i in range(10)]
    memory = assemble(pinned=[entry(1, "I prefer pytest -q")], hits=hits,
                      cited=[hit(99, "old.py", "y" * 400)], budget=1200)
    assert len(memory["text"]) <= 1200
    assert "I prefer pytest -q" in memory["text"]
    assert "old.py:1-3" not in memory["sources"]  # backfill goes first
    assert memory["sources"] and memory["trimmed"] >= 8


def test_a_chunk_both_hit_and_cited_appears_once() -> None:
    same = hit(5, "a.py", "alpha")
    memory = assemble(pinned=[], hits=[same], cited=[same])
    assert memory["sources"] == ["a.py:1-3"] and memory["text"].count("[a.py:1-3]") == 1


def test_nothing_to_say_is_empty_and_a_bare_question_gets_the_marker() -> None:
    assert assemble(pinned=[])["text"] == ""
    memory = assemble(pinned=[], question=True)
    assert memory["answer"] == NOTHING_FOUND and NOTHING_FOUND in memory["text"]
    # passages cited earlier in the thread answer a follow-up: no marker then
    assert "answer" not in assemble(pinned=[], cited=[hit(1, "a.py", "alpha")], question=True)
