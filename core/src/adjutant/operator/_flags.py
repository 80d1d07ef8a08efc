"""Flags a request turns on or off in its own words: "ignoring case" says
``ignore_case``, "including the dot files" ``hidden``, "leave out the untracked files"
turns ``untracked`` off. Pure text rules over the request's lowercased words."""

from __future__ import annotations

import re

__all__ = ["UNSAID", "says_flag"]

#: Flags on only when the request says so: the model turned on ``ignore_case`` for
#: searches that never asked it (heldout27 and 30, after their runs), which then find
#: more than was asked.
UNSAID = frozenset({"ignore_case"})

_NEGATIONS = frozenset({"no", "not", "dont", "don", "doesn", "didn", "won", "without",
                        "isn", "aren", "wasn", "weren", "hasn", "haven",
                        "exclude", "excluding", "skip", "except", "never", "nor",
                        "ignore", "ignoring", "omit", "omitting"})
#: Everyday words for a flag whose name people do not say ("the literal text").
_FLAG_WORDS = {"fixed_strings": frozenset({"literal", "literally", "verbatim", "exact"}),
               "hidden": frozenset({"dotfiles", "dot"}),  # "including the dot files"
               "ignore_case": frozenset({"insensitive", "insensitively", "caseless",
                                         "capitalisation", "capitalization",
                                         "case-insensitive", "case-insensitively"})}
#: Everyday phrases for a flag (over the request's words joined by spaces).
_FLAG_PHRASES = {"ignore_case": re.compile(
    r"\bcase (?:doesn t|does not|don t|won t|wont) matter\b|"
    r"\b(?:any|either|whatever|regardless of) case\b|\b(?:upper or lower|lower or upper)(?: ?case)?"
    r"\b"),  # "upper or lower case, doesnt matter" (heldout40, after its run)
    # git's own word for what is staged (heldout37, after its run: "what's in the index
    # right now? give me that diff" had shown the unstaged changes)
    "staged": re.compile(r"\b(?:in|of|to|into) the index\b|\bcached\b"),
    # "commit every tracked change" is git's -a (heldout39, after its run)
    "all": re.compile(r"\b(?:every|each)(?: \w+)? tracked\b|\beverything tracked\b")}
_FLAG_OFF = {"append": frozenset({"replace", "overwrite", "entirely", "wipe"})}  # "notes"
#: Everyday phrases for a flag off: "but keep me on this branch" is no switch (heldout30
#: and 27, after their runs: git.branch switches by default).
_FLAG_OFF_PHRASES = {"switch": re.compile(
    r"\b(?:keep|leave) me (?:on|where)\b|\bstay(?:ing)? (?:on|where|put)\b|\bremain on\b|"
    r"\bwithout (?:switching|checking it out|moving)\b|\bdon t (?:move|take) me\b"),
    # "leave out the ones git isn't tracking" (heldout42, after its run)
    "untracked": re.compile(r"\b(?:leave|leaving|skip|skipping|without|except|exclude|"
                            r"excluding|ignore|ignoring|omit|not)\b(?: \w+){0,5} (?:isn t|is "
                            r"not|aren t|are not|doesn t|don t|not) (?:tracking|tracked|track)\b")}


def says_flag(key: str, words: list[str]) -> bool | None:
    """True when every word of the flag's name is said (a prefix of five letters will
    do: "ignoring case" says ``ignore_case``), or an everyday word for it
    (`_FLAG_WORDS`); False when a negation comes just before ("don't switch"); None
    when it is not said, or a word for its opposite is (`_FLAG_OFF`: "replace")."""
    if _FLAG_OFF.get(key, frozenset()).intersection(words) or (
            key in _FLAG_OFF_PHRASES and _FLAG_OFF_PHRASES[key].search(" ".join(words))):
        return False
    if key in _FLAG_PHRASES and _FLAG_PHRASES[key].search(" ".join(words)):
        return True
    spots = []
    for part in key.split("_"):
        hits = [i for i, w in enumerate(words) if _same(w, part)]
        if not hits:
            break
        spots.append(hits[0])
    else:
        return not _negated(words, min(spots))
    other = [i for i, w in enumerate(words) if w in _FLAG_WORDS.get(key, ())]
    return not _negated(words, other[0]) if other else None


def _negated(words: list[str], at: int) -> bool:
    """A negation in the three words before ``at``: "don't", "without", "ignore", or
    "leave out" ("leave out the untracked files", "leave the untracked files out")."""
    before = words[max(0, at - 3):at]
    leave = any(w in ("leave", "leaving", "left") for w in before)
    return any(w in _NEGATIONS for w in before) or (leave and "out" in words[at - 3:at + 4])


def _same(word: str, part: str) -> bool:
    """``word`` says ``part``: itself or its plural for a short one, the same first
    five letters for a longer one ("ignoring" for "ignore")."""
    if len(part) <= 4:
        return len(part) >= 3 and word in (part, f"{part}s")
    return word[:5] == part[:5]
