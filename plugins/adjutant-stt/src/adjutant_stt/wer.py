"""Word error rate (for the tests and bench/stt.py): word-level edit distance over the
reference's length, after normalising case, punctuation and digit grouping."""

from __future__ import annotations

import re

__all__ = ["normalise", "word_errors"]


def normalise(text: str) -> list[str]:
    """Lower case, no punctuation; "4,242" is 4242 (Whisper writes numbers its way)."""
    text = re.sub(r"(?<=\d),(?=\d{3})", "", text.lower()).replace("-", " ")
    return re.findall(r"[a-z0-9']+", text)


def word_errors(reference: str, hypothesis: str) -> tuple[int, int]:
    """(edits, reference words): substitutions, insertions and deletions."""
    ref, hyp = normalise(reference), normalise(hypothesis)
    row = list(range(len(hyp) + 1))
    for i, word in enumerate(ref, 1):
        prev, row[0] = row[0], i
        for j, other in enumerate(hyp, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (word != other))
    return row[len(hyp)], len(ref)
