"""The bank of worked examples: requests as people word them, each with the plan it
wants (``bank.jsonl`` beside this module, written for the bundled tools apart from
every test set), plus each offered tool's own declared requests.

A small model follows meaning badly and shared words too well ("which branch am I
on?" became ``git.branch``). The nearest requests in the bank say what similar words
meant before: their plans vote for the first step (`Bank.votes`), and the nearest few
are shown to the model as worked examples (`Bank.nearest`). Pure Python; the index is
built once per set of offered tools."""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

__all__ = ["BM25", "Bank", "Example", "bundled"]

RESPONSE = "response"
#: How fast a neighbour's vote fades with its distance from the nearest (BM25 points):
#: the nearest few decide, a long tail of half-matches does not.
SOFTNESS = 2.0


@dataclass(frozen=True, eq=False)
class Example:
    """One request and the plan it wants (no steps: an answer in words)."""

    request: str
    steps: tuple[tuple[str, Mapping[str, Any]], ...] = ()

    @property
    def label(self) -> str:
        """The plan's first tool, or ``response``."""
        return self.steps[0][0] if self.steps else RESPONSE

    def reply(self, answer: str = "") -> dict[str, Any]:
        """The reply a model would write for it."""
        if not self.steps:
            return {"type": "response", "text": answer or "..."}
        return {"type": "plan", "steps": [{"tool": t, "args": dict(a)} for t, a in self.steps]}


class BM25:
    """Okapi BM25 over documents given as term counts (the planner's own tokens, with
    its stems and synonyms, so a library's tokenizer would not fit)."""

    def __init__(self, docs: Sequence[Counter[str]], *, k1: float = 1.2,
                 b: float = 0.75) -> None:
        self.docs = list(docs)
        self.lengths = [sum(d.values()) for d in self.docs]
        self.average = (sum(self.lengths) / len(self.lengths)) if self.docs else 1.0
        frequency: Counter[str] = Counter()
        for doc in self.docs:
            frequency.update(doc.keys())
        total = len(self.docs)
        self.idf = {t: math.log(1 + (total - n + 0.5) / (n + 0.5)) for t, n in frequency.items()}
        self.k1, self.b = k1, b

    def scores(self, query: Iterable[str]) -> list[float]:
        terms = set(query)
        out = []
        for doc, length in zip(self.docs, self.lengths, strict=True):
            score = 0.0
            for term in terms:
                tf = doc.get(term, 0)
                if tf:
                    norm = tf + self.k1 * (1 - self.b + self.b * length / self.average)
                    score += self.idf[term] * tf * (self.k1 + 1) / norm
            out.append(score)
        return out


@lru_cache(maxsize=1)
def bundled() -> tuple[Example, ...]:
    """The bank shipped with core (read once per process)."""
    text = resources.files(__package__).joinpath("bank.jsonl").read_text(encoding="utf-8")
    examples = []
    for line in text.splitlines():
        if line.strip():
            entry = json.loads(line)
            steps = tuple((s["tool"], s.get("args") or {}) for s in entry.get("steps") or ())
            examples.append(Example(entry["request"], steps))
    return tuple(examples)


class Bank:
    """The examples whose every step is an offered tool, searchable by request."""

    def __init__(self, examples: Iterable[Example], tokens: Callable[[str], list[str]]) -> None:
        unique: dict[str, Example] = {}
        for example in examples:  # the first of two alike wins (the bundled bank's)
            unique.setdefault(" ".join(example.request.lower().split()), example)
        self.examples = list(unique.values())
        self.tokens = tokens
        self.index = BM25([Counter(tokens(e.request)) for e in self.examples])

    @classmethod
    def for_tools(cls, names: Iterable[str], own: Iterable[Example],
                  tokens: Callable[[str], list[str]]) -> Bank:
        own = tuple(own)
        key = (frozenset(names), tokens, json.dumps([(e.request, e.steps) for e in own],
                                                    sort_keys=True, default=str))
        if key not in _BANKS:
            if len(_BANKS) >= 8:
                _BANKS.pop(next(iter(_BANKS)))
            kept = [e for e in (*bundled(), *own) if all(t in key[0] for t, _ in e.steps)]
            _BANKS[key] = cls(kept, tokens)
        return _BANKS[key]

    def nearest(self, request: str, count: int) -> list[tuple[float, Example]]:
        """The ``count`` examples nearest to ``request``, nearest first (none that
        shares no word with it)."""
        if not self.examples or count <= 0:
            return []
        scores = self.index.scores(self.tokens(request))
        order = sorted(range(len(scores)), key=lambda i: (-scores[i], i))[:count]
        return [(scores[i], self.examples[i]) for i in order if scores[i] > 0]

    def nearest_of(self, request: str, label: str, count: int) -> list[Example]:
        """The ``count`` one-step examples of ``label`` nearest to ``request``, nearest
        first (all of that tool's, however far, when fewer are near). Those that state
        values come first: the nearest example was often one without ("list my
        processes" for "list python processes"), and the model copied its empty
        arguments; a value copied from an example is dropped later unless the request
        states it (`adjutant.operator._values`)."""
        scores = self.index.scores(self.tokens(request)) if self.examples else []
        mine = [i for i, e in enumerate(self.examples) if len(e.steps) == 1 and e.label == label]
        mine.sort(key=lambda i: (not self.examples[i].steps[0][1], -scores[i], i))
        return [self.examples[i] for i in mine[:count]]

    def votes(self, request: str, count: int = 8) -> dict[str, float]:
        """How the ``count`` nearest examples start, each weighted by its nearness
        relative to the nearest (``exp((score - best) / SOFTNESS)``): each first step's
        (or ``response``'s) share, summing to 1; empty when nothing is near."""
        near = self.nearest(request, count)
        if not near:
            return {}
        best = near[0][0]
        weights = [(math.exp((score - best) / SOFTNESS), e.label) for score, e in near]
        total = sum(w for w, _ in weights)
        shares: dict[str, float] = {}
        for weight, label in weights:
            shares[label] = shares.get(label, 0.0) + weight / total
        return shares


#: Banks by offered tools and their own examples: built once, a request only searches.
_BANKS: dict[Any, Bank] = {}
