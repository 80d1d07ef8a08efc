"""Session history: each run's snapshot and ordered events, kept in the key/value
store (LMDB where installed), to load again later as a historical view.

Keys (under ``dock/``; a run's keys sort in write order):

- ``dock/run/<threadId>/<runId>/meta``: ``{schemaVersion, threadId, runId,
  parentRunId, clientSessionId, prompt, startedAt, endedAt, status, answer}``; written when
  the run starts (``running``) and again when it ends.
- ``dock/run/<threadId>/<runId>/snapshot``: the dock's state when the run started.
- ``dock/run/<threadId>/<runId>/events/<n:06d>``: the run's envelopes, in order, one
  chunk per flush (at the end of the run, or of an interrupted segment).
- ``dock/index/<startedAt>|<runId>``: one small entry per run for the History view
  (newest first, pins), so a run costs one index write however many are stored;
  ``dock/index/~built`` marks a complete index. Derived: rebuilt from the ``meta``
  records when the marker is missing or an entry is unreadable.
- ``dock/quarantine/<key>``: a record that could not be read, set aside with a
  diagnostic (what was wrong, the raw bytes) instead of breaking the view.
"""

from __future__ import annotations

import base64
import contextlib
from typing import TYPE_CHECKING, Any

import msgspec

if TYPE_CHECKING:
    from adjutant_hookspecs import KeyValueStore

__all__ = ["SCHEMA_VERSION", "History"]

SCHEMA_VERSION = 1
PREFIX = "dock/run/"
INDEX = "dock/index/"
BUILT = INDEX + "~built"  # "~" sorts after every ISO timestamp


class Meta(msgspec.Struct, rename="camel", kw_only=True):
    schema_version: int
    thread_id: str
    run_id: str
    started_at: str
    status: str
    parent_run_id: str | None = None
    client_session_id: str = ""
    prompt: str = ""
    ended_at: str | None = None
    #: on a run an answer started: granted, denied, edited, ... or unanswered
    answer: str | None = None


class History:
    """Runs as stored; ``kv`` None: nothing is kept (and the view says so)."""

    def __init__(self, kv: KeyValueStore | None) -> None:
        self.kv = kv
        self.quarantined: list[dict[str, Any]] = []

    @property
    def available(self) -> bool:
        return self.kv is not None

    @property
    def _store(self) -> KeyValueStore:
        assert self.kv is not None, "reached only where a store keeps the history"
        return self.kv

    def _key(self, thread_id: str, run_id: str, part: str) -> str:
        return f"{PREFIX}{thread_id}/{run_id}/{part}"

    async def started(self, meta: dict[str, Any], snapshot: Any) -> None:
        if self.kv is None:
            return
        meta = {"schemaVersion": SCHEMA_VERSION, "status": "running", **meta}
        await self._store.put(self._key(meta["threadId"], meta["runId"], "snapshot"),
                          msgspec.json.encode(snapshot))
        await self._store.put(self._key(meta["threadId"], meta["runId"], "meta"),
                          msgspec.json.encode(meta))
        await self._index_add(meta)

    async def append(self, thread_id: str, run_id: str, envelopes: list[dict[str, Any]],
                     chunk: int) -> None:
        if self.kv is None or not envelopes:
            return
        await self._store.put(self._key(thread_id, run_id, f"events/{chunk:06d}"),
                          msgspec.json.encode(envelopes))

    async def ended(self, thread_id: str, run_id: str, status: str, ended_at: str) -> None:
        if self.kv is None:
            return
        key = self._key(thread_id, run_id, "meta")
        raw = await self._store.get(key)
        meta = msgspec.json.decode(raw) if raw is not None else {}
        meta.update(status=status, endedAt=ended_at)
        await self._store.put(key, msgspec.json.encode(meta))
        await self._index_add(meta)

    # -- reading -------------------------------------------------------------------------

    async def index(self) -> list[dict[str, Any]]:
        """Runs newest first; rebuilt from the records when the index is incomplete or
        an entry is unreadable."""
        if self.kv is None:
            return []
        if await self._store.get(BUILT) is None:
            return await self.rebuild()
        entries = []
        async for key, value in self._store.scan(INDEX):
            if key == BUILT:
                continue
            try:
                entry = msgspec.json.decode(value, type=dict[str, Any])
                if not isinstance(entry.get("runId"), str):
                    raise msgspec.ValidationError("no runId")
            except (msgspec.DecodeError, msgspec.ValidationError):
                await self._quarantine(key, value, "an index entry is unreadable: the index "
                                       "was rebuilt from the run records")
                return await self.rebuild()
            entries.append(entry)
        return entries[::-1]

    async def rebuild(self) -> list[dict[str, Any]]:
        """The index from every readable ``meta`` record (pins kept where readable)."""
        pinned = set()
        old = [(k, v) async for k, v in self._store.scan(INDEX)]
        for key, value in old:
            try:
                entry = msgspec.json.decode(value)
                if isinstance(entry, dict) and entry.get("pinned"):
                    pinned.add(entry.get("runId"))
            except msgspec.DecodeError:
                pass
            await self._store.delete(key)
        entries = []
        metas = [(k, v) async for k, v in self._store.scan(PREFIX) if k.endswith("/meta")]
        for key, value in metas:
            meta = await self._read_meta(key, value)
            if meta is not None:
                entry = _entry(meta)
                entry["pinned"] = meta["runId"] in pinned
                await self._store.put(_index_key(entry), msgspec.json.encode(entry))
                entries.append(entry)
        await self._store.put(BUILT, b"1")
        entries.sort(key=lambda e: (e["startedAt"], e["runId"]), reverse=True)
        return entries

    async def _read_meta(self, key: str, value: bytes) -> dict[str, Any] | None:
        try:
            meta = msgspec.json.decode(value, type=Meta)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            await self._quarantine(key, value, f"unreadable run record: {exc}")
            return None
        if meta.schema_version > SCHEMA_VERSION:
            await self._quarantine(key, value, f"schema version {meta.schema_version} is "
                                   f"newer than this dock's ({SCHEMA_VERSION})")
            return None
        return msgspec.to_builtins(meta)  # type: ignore[no-any-return]

    async def load(self, thread_id: str) -> list[dict[str, Any]]:
        """Every stored run of a thread, oldest first: meta, snapshot, envelopes."""
        if self.kv is None:
            return []
        runs: dict[str, dict[str, Any]] = {}
        async for key, value in self._store.scan(f"{PREFIX}{thread_id}/"):
            run_id, _, part = key[len(PREFIX) + len(thread_id) + 1:].partition("/")
            run = runs.setdefault(run_id, {"events": []})
            try:
                if part == "meta":
                    meta = await self._read_meta(key, value)
                    if meta is None:
                        runs.pop(run_id, None)
                        continue
                    run["meta"] = meta
                elif part == "snapshot":
                    run["snapshot"] = msgspec.json.decode(value)
                elif part.startswith("events/"):
                    run["events"].extend(msgspec.json.decode(value, type=list[dict[str, Any]]))
            except (msgspec.DecodeError, msgspec.ValidationError) as exc:
                await self._quarantine(key, value, f"unreadable run record: {exc}")
                run["incomplete"] = True
        out = [r for r in runs.values() if "meta" in r]
        out.sort(key=lambda r: r["meta"]["startedAt"])
        return out

    async def pin(self, run_id: str, pinned: bool) -> bool:
        for entry in await self.index():
            if entry["runId"] == run_id:
                entry["pinned"] = pinned
                await self._store.put(_index_key(entry), msgspec.json.encode(entry))
                return True
        return False

    async def _index_add(self, meta: dict[str, Any]) -> None:
        if await self._store.get(BUILT) is None:
            await self.rebuild()  # the meta record is written: this run is in it
            return
        entry = _entry(meta)
        old = await self._store.get(_index_key(entry))
        if old is not None:
            with contextlib.suppress(msgspec.DecodeError, AttributeError):
                entry["pinned"] = bool(msgspec.json.decode(old).get("pinned"))
        await self._store.put(_index_key(entry), msgspec.json.encode(entry))

    async def _quarantine(self, key: str, raw: bytes, why: str) -> None:
        """Set a record aside with a diagnostic; the view goes on without it."""
        note = {"key": key, "error": why, "raw": base64.b64encode(raw).decode()}
        await self._store.put(f"dock/quarantine/{key}", msgspec.json.encode(note))
        await self._store.delete(key)
        self.quarantined.append({"key": key, "error": why})


def _index_key(entry: dict[str, Any]) -> str:
    return f"{INDEX}{entry['startedAt']}|{entry['runId']}"


def _entry(meta: dict[str, Any]) -> dict[str, Any]:
    kept = ("threadId", "runId", "parentRunId", "prompt", "startedAt", "endedAt", "status",
            "answer")
    return {k: meta.get(k) for k in kept} | {"pinned": False,
                                             "prompt": (meta.get("prompt") or "")[:200]}
