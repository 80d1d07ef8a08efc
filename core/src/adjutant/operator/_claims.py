"""Whether an answer in words claims a deed: words change nothing, so "stash my changes"
answered "Stashed your changes." is replaced by the truth (`_prompting.NOTHING_DONE`)."""

from __future__ import annotations

import re

from ._in_words import reaches_people, wants_words
from ._words import is_question

__all__ = ["claims_done"]


#: Words that say an action was taken: "Stashed your changes.", "Done!", "I have
#: deleted the file", "Your changes have been committed".
_DONE = re.compile(r"^\W*(?:done\b|ok(?:ay)?[,!.]?\s+(?:done|i(?:'ve| have))\b|"
                   r"i(?:'ve| have) (?:now |just )?\w+(?:ed|en|ne|de)\b|"
                   r"\w+ed (?:your|the|it|them|all)\b|"
                   r"(?:your|the) [\w ]{1,40}(?:has|have) been \w+(?:ed|en)\b)", re.IGNORECASE)
#: A short answer opening with a past participle ("Stashed changes."): a claim only
#: when it is the request's own verb (`_ordered`), as "Answered here." is not; names
#: of files in it too ("Renamed notes.txt to Notes.txt.").
_PARTICIPLE = re.compile(r"^\W*([a-z]+)ed\b(?:[\w ]|[./-]\w){0,60}[.!]?\s*$", re.IGNORECASE)
#: Orders that words alone carry out: "review this" answered "Reviewed: ..." is no
#: false claim.
_DONE_IN_WORDS = frozenset({"review", "summarize", "summarise", "answer", "explain",
                            "describe", "translate", "draft", "outline", "suggest",
                            "rephrase", "reword", "proofread", "word", "phrase"})


def _ordered(stem: str, request: str) -> bool:
    """Whether a participle's ``stem`` ("stash", "delet", "committ") is a verb of
    ``request`` that words cannot carry out."""
    stems = {stem, stem + "e", stem[:-1] if len(stem) > 3 and stem[-1] == stem[-2] else stem}
    said = set(re.findall(r"[a-z]+", request.lower())) - _DONE_IN_WORDS
    return bool(stems & said)


def claims_done(answer: str, request: str) -> bool:
    """Whether ``answer``, in words, says an order was carried out ("stash my changes"
    answered "Stashed your changes." or "Stashed changes."), or answers an order to
    reach people at all: words do nothing, so that is never true."""
    participle = _PARTICIPLE.match(answer)
    claimed = _DONE.match(answer) or (participle and _ordered(participle[1].lower(), request))
    # an order to reach people, answered in words, reached nobody ("text my volunteers
    # that ..." had been answered "Please text your volunteers that ...")
    return (bool(claimed) and not is_question(request) and not wants_words(request)) \
        or reaches_people(request)
