"""What a model proposes to remember, parsed strictly: a JSON list of
``{"text": ..., "kind": "preference" | "fact" | "note"}`` (or one such object)."""

from __future__ import annotations

from typing import Literal

import msgspec

__all__ = ["parse_proposals"]


class _Proposal(msgspec.Struct, forbid_unknown_fields=True):
    text: str
    kind: Literal["preference", "fact", "note"] = "preference"


def parse_proposals(raw: str) -> list[tuple[str, Literal["preference", "fact", "note"]]]:
    """The (text, kind) pairs in ``raw``; `ValueError` naming what is wrong (invalid
    JSON, a wrong shape, an empty text)."""
    data = raw.strip()
    if data.startswith("```"):  # a fenced block: its body
        data = data.strip("`").removeprefix("json").strip()
    try:
        decoded = msgspec.json.decode(data, type=list[_Proposal] | _Proposal, strict=True)
    except (msgspec.ValidationError, msgspec.DecodeError) as exc:
        raise ValueError(f"not a list of memories: {exc}") from None
    items = decoded if isinstance(decoded, list) else [decoded]
    if not items:
        raise ValueError("an empty list: nothing to remember")
    for item in items:
        if not item.text.strip():
            raise ValueError("a memory with no text")
    return [(item.text.strip(), item.kind) for item in items]
