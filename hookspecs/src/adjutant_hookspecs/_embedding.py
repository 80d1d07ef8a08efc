"""Embeddings: the protocol of an embedder (texts to vectors) and its error.

An embedder turns texts into vectors of one fixed ``dimension`` with one model
(``model_id``). Whoever stores the vectors (``adjutant-memory``) keeps the model id and
the dimension with every vector, so a change of model re-embeds instead of mixing
vectors of two models. An embedder says whether the texts leave the machine
(``remote``) and where they go (``destination``); callers never hand a remote embedder
anything the user did not choose to send there.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

__all__ = ["Embedder", "EmbeddingError"]


class EmbeddingError(Exception):
    """An embedder could not embed (no model, a server down, a wrong answer).
    ``hint`` says what the user can do about it."""

    def __init__(self, message: str, *, hint: str = "") -> None:
        super().__init__(message)
        self.hint = hint


@runtime_checkable
class Embedder(Protocol):
    """A text-embedding model (a local static model, Ollama's or OpenRouter's
    embeddings).

    ``model_id`` names the model exactly (two embedders with the same ``model_id``
    give comparable vectors); ``dimension`` is the length of every vector it returns.
    Optional member, used when present: ``description`` (one line for listings).
    Failures raise `EmbeddingError`.
    """

    name: str
    model_id: str
    dimension: int
    remote: bool
    destination: str

    async def embed(self, texts: Sequence[str]) -> Any:
        """One vector per text, in order: a float array of shape
        ``(len(texts), dimension)`` (numpy) or a list of lists of floats. Loads the
        model on first use; cancelling the caller stops the work."""
        ...
