"""The kept head: a hash of the log kept outside Adjutant's reach, checked by `verify`.

The checkpoints live in the data home, next to the database; whoever can write the
data home as the user can rewrite every record *and* recompute every checkpoint, and
`verify` then passes. What such a rewrite cannot change is a head hash the user
copied elsewhere earlier (a password manager, another machine, paper):
``adjutant log head`` prints it as ``INDEX:SHA256``, and
``adjutant log verify --head INDEX:SHA256`` checks that record INDEX still has that
hash. Since every record's hash covers the previous one, a match proves records
0..INDEX are exactly those the user saw when the head was kept.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ._chain import Problem

if TYPE_CHECKING:
    from ._chain import Record

__all__ = ["check_head", "format_head", "parse_head"]

_HEAD = re.compile(r"^(\d{1,19}):(?:sha256:)?([0-9a-fA-F]{64})$")


def format_head(record: Record) -> str:
    """``INDEX:SHA256`` of ``record``: what the user keeps."""
    return f"{record.index}:{record.hash.hex()}"


def parse_head(text: str) -> tuple[int, bytes]:
    """``(index, hash)`` from ``INDEX:SHA256`` (as `format_head` prints it; a
    ``sha256:`` before the hash is accepted); `ValueError` saying what is expected."""
    match = _HEAD.match(text.strip())
    if match is None:
        raise ValueError(f"not a kept head: {text!r} (expected INDEX:SHA256, as "
                         "`adjutant log head` prints it, e.g. 41:3f2a...e9, 64 hex digits)")
    return int(match[1]), bytes.fromhex(match[2])


def check_head(index: int, digest: bytes, found: Record | None) -> Problem | None:
    """Compare the kept head with ``found``, the record now stored under ``index``
    (None: no such record); None when they agree."""
    short = f"{index}:{digest.hex()[:16]}..."
    if found is None:
        return Problem(index, f"record {index}: missing, but the kept head {short} attests "
                              "it (the log was cut or replaced)")
    if found.index != index or found.hash != digest or found.computed_hash() != digest:
        return Problem(index, f"record {index}: differs from the kept head {short} (the log "
                              f"was rewritten up to record {index}, checkpoints included)")
    return None
