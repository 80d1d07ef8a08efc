"""The lexical index: BM25 over the chunks (``bm25s``, with Snowball stems)."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

__all__ = ["LexicalIndex", "query_terms"]

#: Words that say nothing about where an answer lies, on top of bm25s's English list.
QUESTION_WORDS = (
    "where", "what", "which", "who", "whom", "how", "why", "when", "do", "does", "did",
    "we", "our", "us", "i", "me", "my", "you", "your", "can", "could", "should", "would",
    "is", "are", "was", "were", "be", "been", "the", "a", "an", "in", "of", "to", "it",
    "this", "that", "these", "those", "find", "show", "tell", "code", "file", "files",
    "please", "there", "here", "about", "from", "with", "for", "on", "at", "by", "and",
    "or", "not", "any", "some", "all", "get", "got", "have", "has", "had", "use", "used",
)


@functools.cache
def _stopwords() -> list[str]:
    from bm25s.stopwords import STOPWORDS_EN

    return sorted({*STOPWORDS_EN, *QUESTION_WORDS})


@functools.cache
def _stemmer() -> Any:
    import Stemmer

    return Stemmer.Stemmer("english")


def query_terms(text: str) -> list[str]:
    """The stemmed words of ``text`` that can match anything."""
    import bm25s

    tokens = bm25s.tokenize([text], stopwords=_stopwords(), stemmer=_stemmer(),
                            return_ids=False, show_progress=False)
    return list(tokens[0]) if tokens else []


class LexicalIndex:
    """BM25 over a fixed list of texts (rebuilt when the chunks change)."""

    def __init__(self, texts: Sequence[str]) -> None:
        import bm25s

        self.size = len(texts)
        self._stop = _stopwords()
        self._stem = _stemmer()
        self._retriever = bm25s.BM25()
        if texts:
            tokens = bm25s.tokenize(list(texts), stopwords=self._stop, stemmer=self._stem,
                                    show_progress=False)
            self._retriever.index(tokens, show_progress=False)

    def search(self, query: str, k: int) -> list[tuple[int, float]]:
        """(position in the texts, BM25 score) of the best ``k``, best first; only
        those that share a word with the query."""
        import bm25s

        if not self.size or k < 1:
            return []
        tokens = bm25s.tokenize([query], stopwords=self._stop, stemmer=self._stem,
                                return_ids=False, show_progress=False)
        vocab = self._retriever.vocab_dict
        words = [w for w in tokens[0] if w in vocab] if tokens else []
        if not words:
            return []
        docs, scores = self._retriever.retrieve([words], k=min(k, self.size),
                                                show_progress=False, n_threads=0)
        return [(int(d), float(s)) for d, s in zip(docs[0], scores[0], strict=True) if s > 0]
