"""The action-log records adjutant-memory writes: typed, built at the call site."""

from __future__ import annotations

import msgspec

from adjutant_hookspecs.records import ActionRecord

__all__ = [
    "MemoryEditedRecord",
    "MemoryExtractionFailedRecord",
    "MemoryForgotRecord",
    "MemoryNotedRecord",
    "MemoryReembedRecord",
    "MemoryRememberedRecord",
]


class MemoryRememberedRecord(ActionRecord, frozen=True, kw_only=True, tag="memory_remembered"):
    """An entry joined working memory (``added`` False: an identical one was kept)."""

    entry_id: str
    text: str
    entry_kind: str
    by: str
    added: bool = True


class MemoryForgotRecord(ActionRecord, frozen=True, kw_only=True, tag="memory_forgot"):
    """The user forgot an entry: what it said is kept here, so forgetting is visible."""

    entry_id: str
    text: str
    entry_kind: str
    by: str


class MemoryEditedRecord(ActionRecord, frozen=True, kw_only=True, tag="memory_edited"):
    """The user edited working memory: the entries added, changed and removed."""

    added: list[str] = msgspec.field(default_factory=list)
    changed: list[str] = msgspec.field(default_factory=list)
    removed: list[str] = msgspec.field(default_factory=list)
    by: str


class MemoryExtractionFailedRecord(ActionRecord, frozen=True, kw_only=True,
                                   tag="memory_extraction_failed"):
    """A model's proposed memories could not be parsed: kept as raw text, reported."""

    error: str
    raw: str
    entry_id: str


class MemoryReembedRecord(ActionRecord, frozen=True, kw_only=True, tag="memory_reembed"):
    """The embedding model changed: the old vectors were dropped and the chunks
    re-embedded with the new one (never mixed)."""

    project: str
    old_model: str
    old_dimension: int
    new_model: str
    new_dimension: int
    chunks: int


class MemoryNotedRecord(ActionRecord, frozen=True, kw_only=True, tag="memory_noted"):
    """The operator updated a project's notes (approved): what they said before and
    after."""

    project: str
    before: str
    after: str
