"""Recall over past sessions: the action log's runs (each request, the steps it ran
with their tools and arguments, how it ended, the answer given), searched like the
project (BM25, fused with vectors when an embedder is set).

Read from the log incrementally (the records after the last one read). What it keeps
of a run is redacted (`adjutant.safety.redaction.redact_text`), and a run is left out
entirely when a step's argument names a path the deny rules protect (``.env``, keys,
the data home...): a recalled run never carries a protected path or its content.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import Any

import msgspec

__all__ = ["History", "PastRun"]

#: What a run's document keeps of its answer (characters).
ANSWER_CHARS = 300


class PastRun(msgspec.Struct, kw_only=True):
    """One request and what came of it."""

    run_id: str
    request: str = ""
    thread_id: str | None = None
    time: float = 0.0
    cwd: str = ""
    steps: list[dict[str, Any]] = msgspec.field(default_factory=list)
    results: list[str] = msgspec.field(default_factory=list)
    status: str | None = None
    answer: str = ""
    #: why it is left out (a protected path), else None
    refused: str | None = None

    @property
    def succeeded(self) -> bool:
        """Ran to the end, every step ok: a plan worth showing again."""
        return (self.status == "executed" and bool(self.steps)
                and len(self.results) >= len(self.steps)
                and all(r == "ok" for r in self.results))

    def document(self) -> str:
        did = "; ".join(f"{s.get('tool')} {_short(s.get('args'))}" for s in self.steps)
        parts = [f"request: {self.request}"]
        if did:
            parts.append(f"did: {did} ({self.status or 'unfinished'})")
        if self.answer:
            parts.append(f"answered: {self.answer[:ANSWER_CHARS]}")
        return "\n".join(parts)

    def plan_json(self) -> str:
        return json.dumps({"steps": self.steps}, ensure_ascii=False, sort_keys=True)


def _short(args: Any) -> str:
    text = json.dumps(args, ensure_ascii=False, sort_keys=True) if args else ""
    return text if len(text) <= 160 else text[:159] + "…"


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list | tuple):
        return [s for v in value for s in _strings(v)]
    return []


class History:
    """The runs read from one action log, and their search."""

    def __init__(self, *, user_home: str, data_home: str) -> None:
        from adjutant.safety.protection import protection

        self._protection = protection((user_home,), (data_home,))
        self.runs: dict[str, PastRun] = {}
        #: the next log record to read
        self.next = 0
        self._lexical: Any = None
        self._order: list[str] = []
        #: run id -> vector, with the model id they were made by
        self.vectors: dict[str, Any] = {}
        self.vector_model: str | None = None

    # -- reading -------------------------------------------------------------------------

    def take(self, record: dict[str, Any]) -> None:
        """Fold one decoded log record into the run it belongs to."""
        from adjutant.safety.redaction import redact_text

        run_id = record.get("run_id")
        kind = record.get("kind")
        if not isinstance(run_id, str) or not isinstance(kind, str):
            return
        run = self.runs.get(run_id)
        if run is None:
            if kind != "prompt":
                return  # a run started by a direct call or a replay: no request
            run = self.runs[run_id] = PastRun(run_id=run_id)
        if kind == "prompt":
            run.request = redact_text(str(record.get("text", "")))
            run.thread_id = record.get("thread_id")
            run.time = float(record.get("time") or 0.0)
        elif kind == "plan":
            steps = record.get("steps")
            if isinstance(steps, list):
                run.steps = [s for s in steps if isinstance(s, dict)]
                self._judge(run, run.steps)
        elif kind == "tool_call":
            run.cwd = str(record.get("cwd") or run.cwd)
            self._judge(run, [record])
        elif kind == "result":
            run.results.append(str(record.get("status")))
            self._judge(run, [record])
        elif kind == "response":
            run.answer = redact_text(str(record.get("text", "")))
        elif kind == "outcome":
            run.status = str(record.get("status"))
        self._lexical = None

    def _judge(self, run: PastRun, steps: Sequence[dict[str, Any]]) -> None:
        """Leave the run out if an argument names a protected path (as given, and
        joined to the step's folder)."""
        if run.refused is not None:
            return
        names: list[str] = []
        for step in steps:
            for value in _strings(step.get("args")):
                if not value or len(value) > 4096 or "\x00" in value:
                    continue
                expanded = os.path.expanduser(value)
                names.append(os.path.normpath(os.path.join(run.cwd or "/", expanded)))
        if names and (found := self._protection.match(names, write=False)) is not None:
            rule, name = found
            run.refused = f"{name}: {rule.label}"

    async def read(self, store: Any) -> int:
        """Read the log's records not read yet; the runs they add or change."""
        before = self.next
        async for index, raw in store.read(self.next):
            self.next = index + 1
            try:
                record = msgspec.json.decode(raw)
            except msgspec.DecodeError:
                continue
            if isinstance(record, dict):
                self.take(record)
        return self.next - before

    # -- search --------------------------------------------------------------------------

    def usable(self) -> list[PastRun]:
        return [r for r in self.runs.values() if r.refused is None and r.request]

    def _index(self) -> tuple[Any, list[str]]:
        from ._chunking import search_words
        from ._lexical import LexicalIndex

        if self._lexical is None:
            runs = self.usable()
            self._order = [r.run_id for r in runs]
            self._lexical = LexicalIndex([search_words(r.request) for r in runs])
        return self._lexical, self._order

    def missing_vectors(self, model_id: str) -> list[PastRun]:
        if self.vector_model != model_id:
            self.vectors.clear()
            self.vector_model = model_id
        return [r for r in self.usable() if r.run_id not in self.vectors]

    def search(self, query: str, k: int, *, query_vector: Any = None,
               only: Any = None) -> list[tuple[PastRun, float, float | None]]:
        """The ``k`` past runs whose requests are nearest ``query``: (run, share of the
        query's words its request holds, cosine or None), best first (reciprocal
        rank fusion of BM25 and cosine). ``only``: a filter on the runs."""
        from ._chunking import search_words
        from ._lexical import query_terms

        lexical, order = self._index()
        pool = max(4 * k, 20)
        scores: dict[str, float] = {}
        for rank, (i, _) in enumerate(lexical.search(search_words(query), pool)):
            scores[order[i]] = scores.get(order[i], 0.0) + 1.0 / (60 + rank)
        cosine: dict[str, float] = {}
        if query_vector is not None and self.vectors:
            import numpy as np

            ids = list(self.vectors)
            matrix = np.stack([self.vectors[i] for i in ids])
            q = np.asarray(query_vector, dtype=np.float32).reshape(-1)
            sims = matrix @ (q / max(float(np.linalg.norm(q)), 1e-12))
            for rank, j in enumerate(np.argsort(-sims)[:pool]):
                cosine[ids[j]] = float(sims[j])
                scores[ids[j]] = scores.get(ids[j], 0.0) + 1.0 / (60 + rank)
        terms = set(query_terms(search_words(query)))
        out = []
        for run_id in sorted(scores, key=lambda r: -scores[r]):
            run = self.runs[run_id]
            if run.refused is not None or (only is not None and not only(run)):
                continue
            held = set(query_terms(search_words(run.request)))
            coverage = len(terms & held) / len(terms) if terms else 0.0
            out.append((run, coverage, cosine.get(run_id)))
            if len(out) == k:
                break
        return out
