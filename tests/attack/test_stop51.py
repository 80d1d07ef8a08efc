"""Outsider attacks on stop 51's changes: a request that says it only asks is never
planned as a change, even of a file here (`only_asks`), and a reply to scores kept on
disk goes on from their own batch (`adjutant_llamacpp`'s ``_unscored``). Each attack
was tried; each test fails if it ever works.

Writes from a question: whatever the model scores, a request saying "just asking",
"asking, not doing" or "just your opinion" gets a read or an answer in words. Orders
dressed as questions: the words quoted, or in a file's name, are no such saying, so an
order keeps its write. Kept scores: another prompt's reply is never evaluated from them."""

from __future__ import annotations

import random

import pytest

from adjutant.operator._in_words import _COMMON, only_asks, wants_words_anyway
from adjutant.operator.planner import Planner

packs = [pytest.importorskip(m) for m in ("adjutant_files", "adjutant_git", "adjutant_system")]
TOOLS = {cls.declaration.name: cls.declaration for pack in packs for cls in pack.TOOLS}

SAYINGS = ["just asking", "Asking, not doing.", "only asking, before I do it",
           "just your opinion", "in your opinion", "hypothetically", "I'm not asking you to",
           "merely asking", "opinion only"]
QUESTIONS = ["If I append a line to notes.txt, will the old lines stay?",
             "should notes.txt be committed?", "would deleting notes.old lose anything?",
             "can I zip src into src.zip without the tests?", "is it safe to kill 4242?",
             "what happens if I switch to develop now?"]


def _writes(name: str) -> bool:
    return name in TOOLS and TOOLS[name].safety.level != "read"


def test_a_request_that_says_it_only_asks_is_never_a_change() -> None:
    """3,000 random score vectors (the write often best by far), each saying before or
    after each question, with and without the files it names existing: never a write."""
    planner = Planner(TOOLS, bank_weight=0)
    choices = [*TOOLS, "response"]
    assert any(_writes(c) for c in choices) and any(not _writes(c) for c in choices)
    rng = random.Random(51)
    for _ in range(3000):
        asked = rng.choice([f"{rng.choice(QUESTIONS)} {rng.choice(SAYINGS)}",
                            f"{rng.choice(SAYINGS)}: {rng.choice(QUESTIONS)}"])
        scores = [rng.uniform(-8, 8) + (6 if _writes(c) else 0) for c in choices]
        existing = rng.choice([[], ["notes.txt"], ["notes.old", "notes.txt"]])
        picked = choices[planner.decide(asked, choices, scores, existing=existing)]
        assert not _writes(picked), (asked, picked)


@pytest.mark.parametrize("order", [
    "append 'just asking' to notes.txt",
    'commit everything with the message "asking, not doing"',
    "delete hypothetically.md",
    "write 'in your opinion' into notes.txt",
    "zip the in-theory folder",
])
def test_an_order_that_quotes_the_words_keeps_its_write(order: str) -> None:
    """The saying quoted, or part of a name, says nothing about the request."""
    assert not only_asks(order)
    planner = Planner(TOOLS, bank_weight=0)
    choices = ["fs.append", "fs.read", "response"]
    assert choices[planner.decide(order, choices, [5.0, 0.0, 0.0],
                                  existing=["notes.txt"])] == "fs.append"


@pytest.mark.parametrize("order", [
    "if the tests pass, commit everything",
    "if I may, would you commit notes.txt?",
    "if you can, delete notes.old",
    "Could you zip src if I give you the name src.zip?",
    "delete notes.old if it is empty",
    "would you append 'done' to notes.txt if I ask nicely?",
    'commit everything with the message "just explain the fix"',
    "write 'in general, be kind' to notes.txt",
])
def test_an_order_with_an_if_keeps_its_write(order: str) -> None:
    """A condition on an order, a polite order with an "if", or the words quoted, is no
    question of what would follow nor a wish for words (`wants_words_anyway`)."""
    assert not wants_words_anyway(order)
    planner = Planner(TOOLS, bank_weight=0)
    choices = ["git.commit", "fs.read", "response"]
    assert choices[planner.decide(order, choices, [5.0, 0.0, 0.0],
                                  existing=["notes.txt"])] == "git.commit"


def test_keys_pressed_at_random_are_never_a_change() -> None:
    """2,000 strings of random letters and punctuation (none of English's commonest
    words, none of a tool's), the write scored best by far: never a write; three words
    or more get the answer in words."""
    planner = Planner(TOOLS, bank_weight=0)
    choices = [*TOOLS, "response"]
    rng = random.Random(5151)
    letters = "bcdfghjklmnpqrstvwxzaeiouy"
    for _ in range(2000):
        words = ["".join(rng.choices(letters, k=rng.randint(3, 7)))
                 for _ in range(rng.randint(1, 6))]
        asked = rng.choice([" ", " ;; ", ", ", " ?? "]).join(words)
        if only_asks(asked) or any(dict(planner.rank(w)).get(t, 0) > 0
                                   for w in words for t in TOOLS):
            continue  # a real word by chance: not this attack
        scores = [rng.uniform(-4, 4) + (8 if _writes(c) else 0) for c in choices]
        picked = choices[planner.decide(asked, choices, scores)]
        assert not _writes(picked), (asked, picked)
        if len(asked.split()) >= 3 and not _COMMON.search(asked):
            assert picked == "response", (asked, picked)


@pytest.mark.anyio
async def test_kept_scores_never_shape_another_prompts_reply(tmp_path, monkeypatch) -> None:
    """Scores of prompt A read from disk, then a reply to prompt B: B's reply is the one
    a fresh process gives, and A's batch is not evaluated for it."""
    llamacpp = pytest.importorskip("adjutant_llamacpp")
    from contextlib import aclosing

    from adjutant_hookspecs import CompletionRequest
    from adjutant_llamacpp import _models

    models = _models.cache_dir()
    monkeypatch.setattr("adjutant_llamacpp._provider.cache_dir", lambda: tmp_path)
    monkeypatch.setattr(_models, "cache_dir", lambda: models)
    system = ("You are a terse assistant. Answer with one word. " * 12).strip()
    a = CompletionRequest(system=system, prompt="list the running python processes")
    b = CompletionRequest(system=system, prompt="what colour is a ripe banana?",
                          max_tokens=6, temperature=0.0)
    heads = ['{"type":"plan"', '{"type":"response"']

    async def said(provider: object, request: CompletionRequest) -> str:
        async with aclosing(provider.complete(request)) as stream:  # type: ignore[attr-defined]
            return "".join([c.text async for c in stream])

    fresh = llamacpp.LlamaCpp(context_size=1024)
    try:
        await fresh.score(a, heads)  # kept on disk
        expected = await said(fresh, b)
    finally:
        await fresh.aclose()
    second = llamacpp.LlamaCpp(context_size=1024)
    try:
        await second.score(a, heads)
        assert second.timings["score_prompt_tokens"] == 0  # from disk
        assert await said(second, b) == expected
        assert second._unscored is None  # spent: no later reply evaluates A's batch
    finally:
        await second.aclose()
