"""The number a request says of an argument: "port 8080", "the last 5 commits", "three
entries is enough"; never one counting something else ("the first 10 lines" of a read
taking bytes). Pure; no model."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ._words import terms

__all__ = ["NUMBER", "SMALL", "stated_number"]

NUMBER = re.compile(r"(?<![\w./:-])\d{1,9}(?![\w./:-]|\.\d)")
SMALL = {w: n for n, w in enumerate(("one", "two", "three", "four", "five", "six", "seven",
                                     "eight", "nine", "ten", "eleven", "twelve"), 1)}
#: How far a number may stand from the word that says what it counts ("the last 5
#: commits", "at most 20 rows").
_REACH = 2
#: An argument that counts what a tool lists ("How many commits to list", "At most this
#: many rows"), and the words that say a count of a list's head: "the last 3", "top 5".
_COUNT = re.compile(r"\bhow many\b|\bthis many\b|\bat most\b|\btop n\b", re.IGNORECASE)
_COUNTING = frozenset({"last", "latest", "first", "top", "recent", "newest", "just", "only",
                       "entries", "items", "results"})  # "three entries is enough" (h43)
#: What a number may count that an argument does not ("the first 10 lines" of a read
#: taking bytes).
_OTHER_UNITS = frozenset({"line", "lines", "word", "words", "character", "characters",
                          "chars", "page", "pages", "minute", "minutes", "second", "seconds",
                          "hour", "hours", "day", "days", "percent"})
#: ... and of a ranked list's head, where the argument counts one ("the top N
#: processes"): "the 10 biggest memory hogs" (not "How many levels to descend").
_RANKING = frozenset({"biggest", "largest", "heaviest", "hungriest", "busiest", "worst"})


def stated_number(key: str, spec: Mapping[str, Any], words: list[str],
                  used: set[str] = frozenset()) -> int | None:  # type: ignore[assignment]
    """The one number among a request's lowered ``words`` said of the argument ``key``
    (its name or description's words within `_REACH`: "port 8080", "the last 5
    commits"), not one another argument holds (``used``); None for none or two."""
    described = str(spec.get("description", ""))
    counted = set(terms(f"{key.replace('_', ' ')} {described}"))
    if _COUNT.search(described):  # "git log for develop, last 3"
        counted |= _COUNTING | (_RANKING if re.search(r"\btop\b", described) else set())
    out = []
    for index, word in enumerate(words):
        value = int(word) if NUMBER.fullmatch(word) else SMALL.get(word)
        if value is None or str(value) in used:
            continue
        unit = words[index + 1] if index + 1 < len(words) else ""
        if unit in _OTHER_UNITS and not set(terms(unit)) & counted:
            continue  # "the first 10 lines" counts no bytes
        near = words[max(0, index - _REACH):index] + words[index + 1:index + 1 + _REACH]
        if counted & {*terms(" ".join(near)), *(w.strip(".,;:") for w in near)}:  # "just 20"
            out.append(value)
    found = list(dict.fromkeys(out))
    return found[0] if len(found) == 1 else None
