"""The sentences of a transcript that say, in the ordinary words of a meeting, that
something was decided, that someone will do something, or that a question is open;
and a check of the model's items against them.

A small model (the embedded 0.5B) notes the gist of a meeting but files its items
badly: a decision among the action items, a statement among the questions, a greeting
as a decision, and items left out. These cues are the common English phrasings of a
decision ("we decided", "agreed", "let's go with", "settled"), of a commitment ("I
will", "you'll", "is going to", "needs to", "can you") and of a question (Whisper
writes its question mark); they are not the words of any one meeting. The sentence so
found is an item, in the words said (its evidence is exact), unless the model's items
in that list already say it (the model's words are kept first); the model's question
that is not one is dropped.

What is heard stays data: a cued sentence is only ever text in a list.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from adjutant_hookspecs import CopilotCycleResult

from ._state import words_in

__all__ = ["classify", "with_cues"]

_DECISION = re.compile(
    r"\b(?:decided|decide|decision|agreed|agree on|agreement|settled|we(?:'ll| will) go "
    r"with|let(?:'s| us) go with|going with|approved|the plan is|final answer|we chose|"
    r"we(?:'ve| have) chosen)\b", re.IGNORECASE)
_ACTION = re.compile(
    r"\b(?:I|you|he|she|we|they|[A-Z][a-z]+)(?:'ll| will| shall| is going to| am going to|"
    r"'m going to| are going to|'re going to| needs? to| has to| have to| must)"
    r"\s+(?!be\b)(?!not\b)\w+"
    r"|\b(?:can|could|would) you (?:please )?\w+|\bplease \w+|\baction item\b"
    r"|\b(?:take care of|follow up|in charge of)\b", re.IGNORECASE)
#: What a sentence with the cues of a commitment may still be: small talk.
_NOT_ACTION = re.compile(r"\b(?:will see|will be|meet again|talk to you|see you)\b",
                         re.IGNORECASE)
_WH = re.compile(r"^(?:who|what|when|where|why|how|which|whose|do|does|did|is|are|can|"
                 r"could|should|will|would|shall)\b", re.IGNORECASE)


def classify(sentence: str) -> str:
    """``decisions``, ``action_items``, ``open_questions`` or ``""`` (none of them)."""
    text = sentence.strip()
    if len(words_in(text)) < 2:
        return ""
    if text.endswith("?"):
        return "open_questions"
    if _DECISION.search(text):
        return "decisions"
    if _ACTION.search(text) and not _NOT_ACTION.search(text):
        return "action_items"
    return ""


def _repeats(item: str, sentence: str) -> bool:
    """Whether the model's ``item`` says what ``sentence`` says (most of its content
    words are the sentence's)."""
    mine, theirs = words_in(item), words_in(sentence)
    return bool(mine) and len(mine & theirs) * 3 >= len(mine) * 2


def _is_question(text: str) -> bool:
    return text.rstrip().endswith("?") or bool(_WH.match(text.strip()))


def with_cues(result: CopilotCycleResult, lines: Sequence[str]) -> CopilotCycleResult:
    """``result`` with the cued sentences of ``lines`` added to their lists, after the
    model's items and unless one of those already says it; the model's one-word items
    and "open questions" that are no questions dropped."""
    import msgspec

    cued: dict[str, list[str]] = {"decisions": [], "action_items": [], "open_questions": []}
    for line in lines:
        kind = classify(line)
        if kind:
            cued[kind].append(line.strip())

    def merged(name: str, model: tuple[str, ...]) -> tuple[str, ...]:
        kept = [t for t in model if len(words_in(t)) >= 2
                and (name != "open_questions" or _is_question(t))]
        return tuple(kept + [s for s in cued[name]
                             if not any(_repeats(t, s) for t in kept)])

    return msgspec.structs.replace(
        result, decisions=merged("decisions", result.decisions),
        action_items=merged("action_items", result.action_items),
        open_questions=merged("open_questions", result.open_questions),
        key_points=tuple(t for t in result.key_points if len(words_in(t)) >= 2))
