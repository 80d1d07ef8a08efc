"""The project index: files, their chunks and vectors, in one SQLite file per project,
and ingestion as a resumable state machine.

Each file is a unit of work: ``pending`` (new or changed) → ``processing`` → ``done``,
or ``failed`` (the error kept); ``paused`` is work a stopped process left in
``processing``. Work goes in batches: a batch is marked ``processing`` and committed,
then its files are read, chunked (and embedded) and the whole batch committed as
``done`` in one transaction: the checkpoint. A process killed mid-batch leaves that
batch ``processing``; the next start (`ProjectIndex.recover`) turns it ``paused``, or
``failed`` when it has been stuck longer than the settings allow, and ingestion goes on
from there, the batches committed before untouched. No model is called: reading and
chunking, and embedding when an embedder is set.

Deny rules: every file is admitted by core's prompt-file check (`PromptFiles`) before
a byte of it is read, when the tree is scanned and again when it is read: it must lie
in the project once resolved, match no protected name or pattern (``.env``, keys, the
data home...) and have exactly one hard link, so a second name of a protected file
(same device and inode) is never read. A refused file is never stored, and one that
becomes refused is removed from the index at the next scan.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sqlite3
import stat
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import msgspec

from ._chunking import chunk_text, search_words

__all__ = ["STATES", "Hit", "IngestReport", "ProjectIndex", "ScanReport", "index_path"]

#: The states of a file's ingestion.
STATES = ("pending", "processing", "done", "paused", "failed")
#: Folders never walked: version control, dependencies, caches.
SKIP_DIRS = frozenset({".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", "venv",
                       ".tox", ".nox", ".mypy_cache", ".ruff_cache", ".pytest_cache",
                       ".cache", "dist", "build", ".idea", ".vscode"})
#: Hidden folders that are walked all the same (every other ``.name`` folder is not).
SHOWN_DIRS = frozenset({".github", ".gitlab", ".circleci"})
#: The delta index (chunks added, and removed, since the main BM25 index was built) is
#: folded into a rebuilt main index when it passes this share of it, or this many.
DELTA_SHARE = 0.1
DELTA_MIN = 500
#: Vectors are embedded this many chunks at a time.
EMBED_BATCH = 256

_SCHEMA = """
CREATE TABLE IF NOT EXISTS files (
    path TEXT PRIMARY KEY, size INTEGER, mtime_ns INTEGER, sha256 TEXT,
    state TEXT NOT NULL, changed_at REAL NOT NULL, updated_at REAL NOT NULL,
    error TEXT);
CREATE INDEX IF NOT EXISTS files_state ON files(state, changed_at);
CREATE TABLE IF NOT EXISTS chunks (
    id INTEGER PRIMARY KEY AUTOINCREMENT, path TEXT NOT NULL, start INTEGER NOT NULL,
    "end" INTEGER NOT NULL, text TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS chunks_path ON chunks(path);
CREATE TABLE IF NOT EXISTS vectors (
    chunk_id INTEGER PRIMARY KEY, model TEXT NOT NULL, dim INTEGER NOT NULL,
    data BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


class Hit(msgspec.Struct, frozen=True, kw_only=True):
    """A retrieved passage: lines ``start``..``end`` of ``path`` (relative to the
    project), its text, its fused rank score, and the lexical and vector scores."""

    chunk_id: int
    path: str
    start: int
    end: int
    text: str
    score: float
    bm25: float = 0.0
    cosine: float | None = None
    #: The share of the query's words (stemmed, stop words aside) the passage holds.
    coverage: float = 0.0


class ScanReport(msgspec.Struct, kw_only=True):
    """What a scan found: files queued (new or changed), removed, unchanged, refused by
    the deny rules (path and reason), and skipped (too large)."""

    queued: int = 0
    removed: int = 0
    unchanged: int = 0
    refused: list[tuple[str, str]] = msgspec.field(default_factory=list)
    skipped: list[tuple[str, str]] = msgspec.field(default_factory=list)
    #: The time budget ran out before the walk ended (nothing was dropped).
    partial: bool = False


class IngestReport(msgspec.Struct, kw_only=True):
    """What ingestion did: batches committed, files done and failed, chunks written,
    vectors embedded."""

    batches: int = 0
    done: int = 0
    failed: int = 0
    chunks: int = 0
    vectors: int = 0


def index_path(home: str | os.PathLike[str], root: str) -> Path:
    """Where the index of the project at ``root`` lives in the data home."""
    key = hashlib.sha256(os.path.realpath(root).encode()).hexdigest()[:16]
    return Path(home) / "memory" / "index" / f"{key}.sqlite"


class ProjectIndex:
    """The index of one project (``root``) in one data home.

    :param home: The data home (the index lives under ``memory/index/``).
    :param root: The project's folder: only files inside it once resolved are indexed.
    :param user_home: The user's home, for the deny rules.
    """

    def __init__(self, home: str | os.PathLike[str], root: str, *, user_home: str = "",
                 chunk_lines: int = 40, max_file_bytes: int = 512_000,
                 max_files: int = 50_000, vector_index: str = "exact") -> None:
        from adjutant.safety.protection import PromptFiles

        self.root = os.path.realpath(root)
        if not os.path.isdir(self.root):
            raise NotADirectoryError(f"{root} is not a folder")
        self.home = os.fspath(home)
        self.chunk_lines = chunk_lines
        self.max_file_bytes = max_file_bytes
        self.max_files = max_files
        self.files = PromptFiles([self.root], home=user_home, data_home=self.home)
        self.path = index_path(home, self.root)
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        self.db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False,
                                  timeout=30.0)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=FULL")  # a committed batch survives a crash
        self.db.executescript(_SCHEMA)
        self._set_meta("root", self.root)
        self._lexical: tuple[int, list[tuple[Any, list[int]]], set[int]] | None = None
        self._vectors: tuple[int, str, Any, Any] | None = None
        #: "exact" (numpy, the default) or "hnsw" (hnswlib, when installed: else exact,
        #: and `vector_note` says so)
        self.vector_kind = vector_index
        self.vector_note: str | None = None
        self._hnsw: Any = None

    def close(self) -> None:
        self.db.close()

    # -- bookkeeping --------------------------------------------------------------------

    @contextlib.contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield self.db
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")

    def _meta(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def _set_meta(self, key: str, value: str) -> None:
        self.db.execute("INSERT INTO meta(key, value) VALUES(?, ?) ON CONFLICT(key) "
                        "DO UPDATE SET value=excluded.value", (key, value))

    @property
    def generation(self) -> int:
        """A number that changes whenever the chunks do (caches key on it)."""
        return int(self._meta("generation") or 0)

    def _bump(self) -> None:
        self._set_meta("generation", str(self.generation + 1))

    def counts(self) -> dict[str, int]:
        """Files per state, and the number of chunks and vectors."""
        out = dict.fromkeys(STATES, 0)
        for state, n in self.db.execute("SELECT state, COUNT(*) FROM files GROUP BY state"):
            out[str(state)] = int(n)
        out["chunks"] = int(self.db.execute("SELECT COUNT(*) FROM chunks").fetchone()[0])
        out["vectors"] = int(self.db.execute("SELECT COUNT(*) FROM vectors").fetchone()[0])
        return out

    def states(self) -> dict[str, str]:
        """Each file's state, by path."""
        return {str(p): str(s) for p, s in self.db.execute("SELECT path, state FROM files")}

    def errors(self) -> dict[str, str]:
        """Why each failed file failed, by path."""
        return {str(p): str(e) for p, e in self.db.execute(
            "SELECT path, error FROM files WHERE state='failed'")}

    def unindexed(self, limit: int = 20) -> list[str]:
        """Files changed since they were indexed (or new), newest change first."""
        return [str(r[0]) for r in self.db.execute(
            "SELECT path FROM files WHERE state IN ('pending','paused','processing') "
            "ORDER BY changed_at DESC LIMIT ?", (limit,))]

    # -- scanning -----------------------------------------------------------------------

    def walk(self) -> Iterator[str]:
        """Paths (relative to the root) of the regular-looking files under it, links
        not followed, version control, caches and hidden folders skipped."""
        for folder, dirs, names in os.walk(self.root, followlinks=False):
            # hidden folders are tools' state (.hypothesis, .coverage ...), not the
            # project's text; .github is the exception people read
            dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS
                             and (not d.startswith(".") or d in SHOWN_DIRS))
            for name in sorted(names):
                yield os.path.relpath(os.path.join(folder, name), self.root)

    def scan(self, budget_s: float | None = None) -> ScanReport:
        """Queue what is new or changed (size, mtime, then content hash), drop what is
        gone or now refused. Reads only files the deny rules admit. With ``budget_s``,
        the walk stops after that long (``partial``: nothing is dropped then, and the
        next scan, quick over the files it already knows, goes further)."""
        report = ScanReport()
        deadline = None if budget_s is None else time.monotonic() + budget_s
        known = {str(r[0]): (r[1], r[2], r[3], r[4]) for r in self.db.execute(
            "SELECT path, size, mtime_ns, sha256, state FROM files")}
        seen: set[str] = set()
        now = time.time()
        queue: list[str] = []
        restat: list[tuple[int, int, str]] = []
        for rel in self.walk():
            if deadline is not None and time.monotonic() > deadline:
                report.partial = True
                break
            if len(seen) >= self.max_files:
                report.skipped.append((rel, f"the project has more than {self.max_files:,} "
                                            "files: the rest is not indexed"))
                break
            path = os.path.join(self.root, rel)
            row = known.get(rel)
            if row is not None and self._same(path, row[0], row[1]):
                seen.add(rel)
                report.unchanged += 1
                continue
            if (reason := self.files.refusal(path)) is not None:
                report.refused.append((rel, reason))
                continue
            try:
                st = os.stat(path)
            except OSError as exc:
                report.skipped.append((rel, f"cannot be read: {exc.strerror or exc}"))
                continue
            if st.st_size > self.max_file_bytes:
                report.skipped.append((rel, f"larger than {self.max_file_bytes:,} bytes"))
                continue
            seen.add(rel)
            if row is not None and row[3] == "done" and row[2] is not None:
                digest = self._digest(path)
                if digest == row[2]:  # touched, not changed
                    restat.append((st.st_size, st.st_mtime_ns, rel))
                    report.unchanged += 1
                    continue
            queue.append(rel)
        gone = [] if report.partial else [p for p in known if p not in seen]
        with self._tx() as db:
            db.executemany("UPDATE files SET size=?, mtime_ns=? WHERE path=?", restat)
            for rel in queue:
                db.execute("INSERT INTO files(path, state, changed_at, updated_at) "
                           "VALUES(?, 'pending', ?, ?) ON CONFLICT(path) DO UPDATE SET "
                           "state='pending', changed_at=excluded.changed_at, "
                           "updated_at=excluded.updated_at, error=NULL, size=NULL, "
                           "mtime_ns=NULL", (rel, now, now))
            for rel in gone:
                self._drop(db, rel)
                db.execute("DELETE FROM files WHERE path=?", (rel,))
            if gone:
                self._bump()
        report.queued, report.removed = len(queue), len(gone)
        return report

    @staticmethod
    def _same(path: str, size: int | None, mtime_ns: int | None) -> bool:
        """Whether the file at ``path`` is still the one indexed: a regular file (not a
        link), one name only, the same size and time. Anything else (a new link to it,
        a symbolic link put in its place) goes through the deny rules again."""
        try:
            st = os.lstat(path)
        except OSError:
            return False
        return (stat.S_ISREG(st.st_mode) and st.st_nlink == 1
                and (st.st_size, st.st_mtime_ns) == (size, mtime_ns))

    def _digest(self, path: str) -> str | None:
        from adjutant.safety.protection import PromptFileRefused

        try:
            return hashlib.sha256(self.files.read(path, self.max_file_bytes).data).hexdigest()
        except (PromptFileRefused, OSError):
            return None

    @staticmethod
    def _drop(db: sqlite3.Connection, rel: str) -> None:
        db.execute("DELETE FROM vectors WHERE chunk_id IN (SELECT id FROM chunks "
                   "WHERE path=?)", (rel,))
        db.execute("DELETE FROM chunks WHERE path=?", (rel,))

    # -- ingestion ----------------------------------------------------------------------

    def recover(self, stale_after_s: float, now: float | None = None) -> tuple[int, int]:
        """After a start: work left ``processing`` by a stopped process becomes
        ``paused`` (resumed by the next `ingest`), or ``failed`` when it has been stuck
        longer than ``stale_after_s``. Returns (paused, failed)."""
        now = time.time() if now is None else now
        with self._tx() as db:
            failed = db.execute(
                "UPDATE files SET state='failed', updated_at=?, error=? WHERE "
                "state='processing' AND updated_at < ?",
                (now, f"stuck in processing for more than {stale_after_s:.0f} s",
                 now - stale_after_s)).rowcount
            paused = db.execute("UPDATE files SET state='paused', updated_at=? WHERE "
                                "state='processing'", (now,)).rowcount
        return paused, failed

    def retry_failed(self) -> int:
        """Queue the failed files again; returns how many."""
        now = time.time()
        with self._tx() as db:
            return db.execute("UPDATE files SET state='pending', updated_at=?, error=NULL "
                              "WHERE state='failed'", (now,)).rowcount

    async def ingest(self, batch_files: int = 32, *, embedder: Any = None,
                     max_batches: int | None = None,
                     on_batch: Callable[[int, list[str]], None] | None = None) -> IngestReport:
        """Index the queued files (``pending`` and ``paused``), ``batch_files`` at a
        time, each batch one checkpoint; with ``embedder``, embed the new chunks (and
        re-embed everything first if its model is not the one the vectors were made
        with). ``on_batch(n, paths)`` is called once a batch is marked processing."""
        import anyio

        report = IngestReport()
        number = 0
        while max_batches is None or number < max_batches:
            paths = [str(r[0]) for r in self.db.execute(
                "SELECT path FROM files WHERE state IN ('pending','paused') "
                "ORDER BY changed_at, path LIMIT ?", (batch_files,))]
            if not paths:
                break
            number += 1
            now = time.time()
            with self._tx() as db:
                db.executemany("UPDATE files SET state='processing', updated_at=? "
                               "WHERE path=?", [(now, p) for p in paths])
            try:
                if on_batch is not None:
                    on_batch(number, paths)
                prepared = await anyio.to_thread.run_sync(self._prepare, paths)
            except BaseException:  # cancelled or failed before the checkpoint: the batch
                with self._tx() as db:  # is paused, resumed by the next run (no await here)
                    db.executemany("UPDATE files SET state='paused' WHERE path=? AND "
                                   "state='processing'", [(p,) for p in paths])
                raise
            with self._tx() as db:
                for rel, outcome in prepared:
                    if isinstance(outcome, str):
                        self._drop(db, rel)
                        db.execute("UPDATE files SET state='failed', error=?, updated_at=? "
                                   "WHERE path=?", (outcome, time.time(), rel))
                        report.failed += 1
                        continue
                    size, mtime_ns, digest, chunks = outcome
                    self._drop(db, rel)
                    db.executemany('INSERT INTO chunks(path, start, "end", text) '
                                   "VALUES(?, ?, ?, ?)",
                                   [(rel, c.start, c.end, c.text) for c in chunks])
                    db.execute("UPDATE files SET state='done', size=?, mtime_ns=?, sha256=?, "
                               "error=NULL, updated_at=? WHERE path=?",
                               (size, mtime_ns, digest, time.time(), rel))
                    report.done += 1
                    report.chunks += len(chunks)
                self._bump()
            report.batches += 1
        if embedder is not None:
            report.vectors = await self.sync_vectors(embedder)
        return report

    def _prepare(self, paths: Sequence[str]) -> list[tuple[str, Any]]:
        """Each file read through the deny rules and chunked: (path, (size, mtime_ns,
        sha256, chunks)), or (path, why it failed)."""
        from adjutant.safety.protection import PromptFileRefused

        out: list[tuple[str, Any]] = []
        for rel in paths:
            path = os.path.join(self.root, rel)
            try:
                st = os.stat(path)
                data = self.files.read(path, self.max_file_bytes).data
            except PromptFileRefused as exc:
                out.append((rel, f"refused: {exc.reason}"))
                continue
            except OSError as exc:
                out.append((rel, f"cannot be read: {exc.strerror or exc}"))
                continue
            if b"\x00" in data[:8192]:
                out.append((rel, "binary file (not indexed)"))
                continue
            text = data.decode("utf-8", errors="replace")
            out.append((rel, (st.st_size, st.st_mtime_ns, hashlib.sha256(data).hexdigest(),
                              chunk_text(text, self.chunk_lines))))
        return out

    # -- vectors ------------------------------------------------------------------------

    def vector_model(self) -> tuple[str, int] | None:
        """The model id and dimension the stored vectors were made with."""
        model, dim = self._meta("vector_model"), self._meta("vector_dim")
        return None if model is None or dim is None else (model, int(dim))

    def missing_vectors(self) -> int:
        """Chunks without a vector (of the model the stored vectors belong to)."""
        return int(self.db.execute(
            "SELECT COUNT(*) FROM chunks c LEFT JOIN vectors v ON v.chunk_id = c.id "
            "WHERE v.chunk_id IS NULL").fetchone()[0])

    async def sync_vectors(self, embedder: Any,
                           on_reembed: Callable[[str, int, int], Any] | None = None,
                           limit: int | None = None) -> int:
        """Embed every chunk that has no vector of ``embedder``'s model (``limit``: at
        most that many), in batches of its ``batch_size`` (`EMBED_BATCH` without one),
        each committed. If the stored
        vectors were made by another model or dimension, they are all dropped first and
        ``on_reembed(old_model, old_dimension, chunks)`` is called: vectors of two models
        are never mixed. Returns the vectors written."""
        from ._vectors import as_matrix

        model, dim = str(embedder.model_id), int(embedder.dimension)
        old = self.vector_model()
        if old is not None and old != (model, dim):
            with self._tx() as db:
                db.execute("DELETE FROM vectors")
                self._set_meta("vector_model", model)
                self._set_meta("vector_dim", str(dim))
            total = int(self.db.execute("SELECT COUNT(*) FROM chunks").fetchone()[0])
            if on_reembed is not None:
                await on_reembed(old[0], old[1], total)
        elif old is None:
            with self._tx():
                self._set_meta("vector_model", model)
                self._set_meta("vector_dim", str(dim))
        written = 0
        batch = max(1, int(getattr(embedder, "batch_size", EMBED_BATCH)))
        while limit is None or written < limit:
            rows = self.db.execute(
                "SELECT c.id, c.path, c.text FROM chunks c LEFT JOIN vectors v "
                "ON v.chunk_id = c.id WHERE v.chunk_id IS NULL ORDER BY c.id LIMIT ?",
                (batch if limit is None else min(batch, limit - written),)).fetchall()
            if not rows:
                break
            texts = [f"{r[1]}\n{r[2]}" for r in rows]
            matrix = as_matrix(await embedder.embed(texts), len(texts), dim)
            with self._tx() as db:
                db.executemany("INSERT OR REPLACE INTO vectors(chunk_id, model, dim, data) "
                               "VALUES(?, ?, ?, ?)",
                               [(int(r[0]), model, dim, matrix[i].tobytes())
                                for i, r in enumerate(rows)])
                self._bump()
            written += len(rows)
        return written

    # -- search -------------------------------------------------------------------------

    def _lexical_parts(self) -> tuple[list[tuple[Any, list[int]]], set[int]]:
        """The BM25 indexes to search, with the chunk ids of their rows, and the ids in
        them that are gone. A change does not rebuild the main index: chunks added
        since (their ids are larger) go to a small delta index and removed ones are
        skipped, until the two together pass `DELTA_SHARE` of the main one."""
        from ._lexical import LexicalIndex

        generation = self.generation
        if self._lexical is not None and self._lexical[0] == generation:
            return self._lexical[1], self._lexical[2]

        def build(rows: list[Any]) -> tuple[Any, list[int]]:
            texts = [search_words(f"{r[1].replace('/', ' ')}\n{r[2]}") for r in rows]
            return LexicalIndex(texts), [int(r[0]) for r in rows]

        main = self._lexical[1][0] if self._lexical is not None else None
        parts: list[tuple[Any, list[int]]]
        dead: set[int] = set()
        if main is not None:
            main_ids = main[1]
            newest = main_ids[-1] if main_ids else 0
            delta = self.db.execute("SELECT id, path, text FROM chunks WHERE id > ? "
                                    "ORDER BY id", (newest,)).fetchall()
            live = {int(r[0]) for r in self.db.execute(
                "SELECT id FROM chunks WHERE id <= ?", (newest,))}
            dead = set(main_ids) - live
            if len(delta) + len(dead) <= max(DELTA_MIN, DELTA_SHARE * len(main_ids)):
                parts = [main, build(delta)] if delta else [main]
                self._lexical = (generation, parts, dead)
                return parts, dead
        rows = self.db.execute("SELECT id, path, text FROM chunks ORDER BY id").fetchall()
        parts = [build(rows)]
        self._lexical = (generation, parts, set())
        return parts, set()

    def _vector_index(self, model: str, dim: int) -> tuple[Any, Any]:
        """The vector index of ``model``'s vectors and what maps its positions to chunk
        ids: exact (rebuilt when the vectors change: one matrix) or HNSW (kept, and
        changed by the chunks that changed)."""
        import numpy as np

        from ._vectors import ExactIndex, HnswIndex, _Identity, hnsw_installed

        generation = self.generation
        if self._vectors is None or self._vectors[:2] != (generation, model):
            rows = self.db.execute("SELECT chunk_id, data FROM vectors WHERE model=? AND "
                                   "dim=? ORDER BY chunk_id", (model, dim)).fetchall()
            matrix = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32)
            matrix = matrix.reshape(len(rows), dim)
            ids = [int(r[0]) for r in rows]
            use_hnsw = self.vector_kind == "hnsw" and hnsw_installed()
            if self.vector_kind == "hnsw" and not use_hnsw:
                self.vector_note = ("hnswlib is not installed (pip install "
                                    "'adjutant-memory[hnsw]'): exact search instead")
            if use_hnsw:
                if self._hnsw is None or self._hnsw[0] != (model, dim):
                    self._hnsw = ((model, dim), HnswIndex(dim))
                self._hnsw[1].sync(ids, matrix)
                self._vectors = (generation, model, self._hnsw[1], _Identity(len(ids)))
            else:
                self._vectors = (generation, model, ExactIndex(matrix), ids)
        return self._vectors[2], self._vectors[3]

    def lexical_hits(self, query: str, k: int) -> list[tuple[int, float]]:
        """(chunk id, BM25 score), best first."""
        parts, dead = self._lexical_parts()
        found = [(ids[i], score) for index, ids in parts
                 for i, score in index.search(query, k + min(len(dead), 200))
                 if ids[i] not in dead]
        return sorted(found, key=lambda hit: -hit[1])[:k]

    async def search(self, query: str, k: int = 5, *, embedder: Any = None) -> list[Hit]:
        """The ``k`` best passages for ``query``: BM25, fused with vector similarity
        (reciprocal rank fusion) when ``embedder`` is given and its vectors exist."""
        from ._vectors import as_matrix

        pool = max(k * 4, 20)
        lexical = self.lexical_hits(query, pool)
        scores: dict[int, float] = {}
        bm25 = dict(lexical)
        cosine: dict[int, float] = {}
        for rank, (cid, _) in enumerate(lexical):
            scores[cid] = scores.get(cid, 0.0) + 1.0 / (60 + rank)
        if embedder is not None and self.vector_model() == (embedder.model_id,
                                                            int(embedder.dimension)):
            index, ids = self._vector_index(embedder.model_id, int(embedder.dimension))
            if ids:
                vector = as_matrix(await embedder.embed([query]), 1, int(embedder.dimension))
                for rank, (i, sim) in enumerate(index.search(vector[0], pool)):
                    cid = ids[i]
                    cosine[cid] = sim
                    scores[cid] = scores.get(cid, 0.0) + 1.0 / (60 + rank)
        from ._lexical import query_terms

        terms = set(query_terms(query))
        best = sorted(scores, key=lambda c: -scores[c])[:k]
        hits = []
        for cid in best:
            if (row := self.chunk(cid)) is None:
                continue
            held = set(query_terms(search_words(f"{row[0].replace('/', ' ')}\n{row[3]}")))
            hits.append(Hit(chunk_id=cid, path=row[0], start=row[1], end=row[2], text=row[3],
                            score=scores[cid], bm25=bm25.get(cid, 0.0),
                            cosine=cosine.get(cid),
                            coverage=len(terms & held) / len(terms) if terms else 0.0))
        return hits

    def chunk(self, chunk_id: int) -> tuple[str, int, int, str] | None:
        row = self.db.execute('SELECT path, start, "end", text FROM chunks WHERE id=?',
                              (chunk_id,)).fetchone()
        return None if row is None else (str(row[0]), int(row[1]), int(row[2]), str(row[3]))
