"""Chunking: a file's text cut into passages by paragraphs, each with its line span."""

from __future__ import annotations

import re

import msgspec

__all__ = ["Chunk", "chunk_text", "search_words"]


class Chunk(msgspec.Struct, frozen=True):
    """Lines ``start``..``end`` (1-based, inclusive) of a file, and their text."""

    start: int
    end: int
    text: str


def chunk_text(text: str, max_lines: int = 40) -> list[Chunk]:
    """Paragraphs (runs of lines between blank lines) joined while the chunk stays
    within ``max_lines``; a longer paragraph is cut every ``max_lines`` lines. Blank
    text gives no chunk."""
    lines = text.splitlines()
    paragraphs: list[tuple[int, int]] = []  # 0-based, end exclusive
    start = None
    for i, line in enumerate(lines):
        if line.strip():
            if start is None:
                start = i
        elif start is not None:
            paragraphs.append((start, i))
            start = None
    if start is not None:
        paragraphs.append((start, len(lines)))
    spans: list[tuple[int, int]] = []
    for a, b in paragraphs:
        while b - a > max_lines:  # a long paragraph: cut
            spans.append((a, a + max_lines))
            a += max_lines
        if spans and b - spans[-1][0] <= max_lines and _joinable(spans[-1], (a, b)):
            spans[-1] = (spans[-1][0], b)
        else:
            spans.append((a, b))
    return [Chunk(a + 1, b, "\n".join(lines[a:b])) for a, b in spans]


def _joinable(previous: tuple[int, int], current: tuple[int, int]) -> bool:
    """Paragraphs join into one chunk only while they are short: a definition stays
    with its neighbours, a whole module does not become one passage."""
    return (previous[1] - previous[0]) + (current[1] - current[0]) <= 12


_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*|[0-9]+")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")


def search_words(text: str) -> str:
    """``text`` with its identifiers also split into words (``parse_config`` and
    ``parseConfig`` also give ``parse config``), for the lexical index."""
    extra: list[str] = []
    for token in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text):
        if "_" in token or (len(token) > 2 and not token[1:].islower()):
            extra.extend(p.lower() for p in _CAMEL.findall(token.replace("_", " ")))
    return text + ("\n" + " ".join(extra) if extra else "")
