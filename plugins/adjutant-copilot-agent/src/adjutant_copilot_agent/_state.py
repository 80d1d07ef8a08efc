"""The agent's running understanding of a conversation, and how each cycle's result is
merged into it (the design's merge rules, each item keeping its evidence).

- the summary is replaced (an answer without one keeps the one before);
- key points, decisions, action items and open questions are appended without
  duplicates, near-duplicates included (same words once case and punctuation are set
  aside);
- suggested questions are replaced, at most 5, a question that comes back keeping its
  dismissed flag;
- key concepts are merged case-insensitively: ``mention_count`` + 1, latest context;
- cycle metadata: number, last update, processing, failed cycles, total audio seconds.

Every item carries the span of the recording (seconds from its start) whose transcript
it came from, and the transcript itself is kept, so ``state`` can show the words.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from typing import Any

import msgspec

from adjutant_hookspecs import CopilotCycleResult, TranscriptSegment

__all__ = [
    "MAX_SUGGESTED",
    "CopilotState",
    "CycleMetadata",
    "Evidence",
    "Item",
    "KeyConcept",
    "SuggestedQuestion",
    "decode_state",
    "dismiss",
    "encode_state",
    "evidence_for",
    "failed",
    "merge",
    "normalize",
    "to_builtins",
    "words_in",
]

#: At most this many suggested questions are kept.
MAX_SUGGESTED = 5


class Evidence(msgspec.Struct, frozen=True, kw_only=True):
    """Where in the recording an item came from: seconds from the recording's start."""

    start_s: float
    end_s: float


class Item(msgspec.Struct, frozen=True, kw_only=True):
    """A key point, decision, action item or open question, with its evidence."""

    text: str
    evidence: Evidence
    cycle_added: int


class SuggestedQuestion(msgspec.Struct, frozen=True, kw_only=True):
    question: str
    reason: str
    cycle_added: int
    dismissed: bool = False


class KeyConcept(msgspec.Struct, frozen=True, kw_only=True):
    term: str
    context: str
    cycle_added: int
    mention_count: int = 1


class CycleMetadata(msgspec.Struct, frozen=True, kw_only=True):
    cycle_number: int = 0
    #: ISO 8601, UTC ("" before the first cycle).
    last_updated_at: str = ""
    processing: bool = False
    failed_cycles: int = 0
    total_audio_seconds: float = 0.0


class CopilotState(msgspec.Struct, frozen=True, kw_only=True):
    """The state of one recording's agent (a new recording starts from ``CopilotState()``)."""

    running_summary: str = ""
    key_points: tuple[Item, ...] = ()
    decisions: tuple[Item, ...] = ()
    action_items: tuple[Item, ...] = ()
    open_questions: tuple[Item, ...] = ()
    suggested_questions: tuple[SuggestedQuestion, ...] = ()
    key_concepts: tuple[KeyConcept, ...] = ()
    cycle_metadata: CycleMetadata = CycleMetadata()
    #: The raw transcript: segments in recording time, oldest first.
    transcript: tuple[TranscriptSegment, ...] = ()

    def words(self, evidence: Evidence) -> str:
        """The transcript's words within ``evidence``'s span."""
        return " ".join(s.text for s in self.transcript
                        if s.end_s > evidence.start_s and s.start_s < evidence.end_s).strip()


_PUNCT = re.compile(r"[^\w\s]", re.UNICODE)
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}\b)")
_SPACE = re.compile(r"\s+")


def normalize(text: str) -> str:
    """``text`` with case, punctuation and spacing set aside: the key of near-duplicates
    ("12,000" is one number, 12000)."""
    folded = _THOUSANDS.sub("", unicodedata.normalize("NFKC", text).casefold())
    return _SPACE.sub(" ", _PUNCT.sub(" ", folded)).strip()


def words_in(text: str) -> set[str]:
    """The content words of ``text`` (three letters or more), for matching evidence."""
    return {w for w in normalize(text).split() if len(w) >= 3}


def evidence_for(text: str, segments: Sequence[TranscriptSegment],
                 whole: Evidence) -> Evidence:
    """The span of the transcript ``text`` most likely came from: the segment sharing the
    most content words with it, widened to a neighbour that shares nearly as many (a
    sentence cut between two windows); ``whole`` (the cycle's audio) when none shares
    any."""
    wanted = words_in(text)
    scores = [len(wanted & words_in(s.text)) for s in segments]
    if not wanted or not scores or max(scores) == 0:
        return whole
    best = scores.index(max(scores))
    start, end = segments[best].start_s, segments[best].end_s
    for near in (best - 1, best + 1):
        if 0 <= near < len(segments) and scores[near] * 2 >= scores[best]:
            start, end = min(start, segments[near].start_s), max(end, segments[near].end_s)
    return Evidence(start_s=start, end_s=end)


def _append(items: tuple[Item, ...], new: Iterable[str], segments: Sequence[TranscriptSegment],
            whole: Evidence, cycle: int) -> tuple[Item, ...]:
    seen = {normalize(i.text) for i in items}
    out = list(items)
    for text in new:
        text = text.strip()
        key = normalize(text)
        if not key or key in seen:
            continue
        seen.add(key)
        out.append(Item(text=text, evidence=evidence_for(text, segments, whole),
                        cycle_added=cycle))
    return tuple(out)


def _transcript(kept: tuple[TranscriptSegment, ...], new: Sequence[TranscriptSegment],
                whole: Evidence) -> tuple[TranscriptSegment, ...]:
    """The transcript with this cycle's segments: what the overlap heard again replaces
    the earlier hearing of it."""
    if not new:
        return kept
    return tuple(s for s in kept if s.start_s < whole.start_s) + tuple(new)


def merge(state: CopilotState, result: CopilotCycleResult, *, chunk_start_s: float,
          chunk_seconds: float, now_iso: str) -> CopilotState:
    """``state`` with one cycle's ``result`` merged in. ``chunk_start_s`` is where the
    cycle's audio began in the recording (its transcript's times are relative to it),
    ``chunk_seconds`` how long it was."""
    cycle = state.cycle_metadata.cycle_number + 1
    whole = Evidence(start_s=chunk_start_s, end_s=chunk_start_s + chunk_seconds)
    segments = [TranscriptSegment(start_s=chunk_start_s + s.start_s,
                                  end_s=chunk_start_s + s.end_s, text=s.text)
                for s in result.transcript if s.text.strip()]
    dismissed = {normalize(q.question) for q in state.suggested_questions if q.dismissed}
    questions: list[SuggestedQuestion] = []
    asked: set[str] = set()
    for q in result.suggested_questions:
        key = normalize(q.question)
        if not key or key in asked:
            continue
        asked.add(key)
        questions.append(SuggestedQuestion(question=q.question.strip(), reason=q.reason,
                                           cycle_added=cycle, dismissed=key in dismissed))
    concepts = list(state.key_concepts)
    for c in result.key_concepts:
        term = c.term.strip()
        if not term:
            continue
        for i, old in enumerate(concepts):
            if old.term.casefold() == term.casefold():
                concepts[i] = msgspec.structs.replace(
                    old, context=c.context, mention_count=old.mention_count + 1)
                break
        else:
            concepts.append(KeyConcept(term=term, context=c.context, cycle_added=cycle))
    meta = state.cycle_metadata
    return msgspec.structs.replace(
        state,
        running_summary=result.updated_summary or state.running_summary,
        key_points=_append(state.key_points, result.key_points, segments, whole, cycle),
        decisions=_append(state.decisions, result.decisions, segments, whole, cycle),
        action_items=_append(state.action_items, result.action_items, segments, whole, cycle),
        open_questions=_append(state.open_questions, result.open_questions, segments, whole,
                               cycle),
        suggested_questions=tuple(questions[:MAX_SUGGESTED]),
        key_concepts=tuple(concepts),
        cycle_metadata=msgspec.structs.replace(
            meta, cycle_number=cycle, last_updated_at=now_iso, processing=False,
            total_audio_seconds=meta.total_audio_seconds + chunk_seconds),
        transcript=_transcript(state.transcript, segments, whole))


def failed(state: CopilotState, now_iso: str) -> CopilotState:
    """``state`` after a failed cycle: the context kept, ``failed_cycles`` + 1."""
    meta = state.cycle_metadata
    return msgspec.structs.replace(state, cycle_metadata=msgspec.structs.replace(
        meta, failed_cycles=meta.failed_cycles + 1, processing=False,
        last_updated_at=now_iso))


def dismiss(state: CopilotState, index: int) -> CopilotState:
    """``state`` with suggested question ``index`` (0-based) dismissed."""
    if not 0 <= index < len(state.suggested_questions):
        raise IndexError(f"no suggested question {index + 1} (there are "
                         f"{len(state.suggested_questions)})")
    questions = list(state.suggested_questions)
    questions[index] = msgspec.structs.replace(questions[index], dismissed=True)
    return msgspec.structs.replace(state, suggested_questions=tuple(questions))


def encode_state(state: CopilotState) -> bytes:
    return msgspec.json.encode(state)


def decode_state(data: bytes) -> CopilotState:
    return msgspec.json.decode(data, type=CopilotState)


def to_builtins(state: CopilotState) -> dict[str, Any]:
    out: dict[str, Any] = msgspec.to_builtins(state)
    return out
