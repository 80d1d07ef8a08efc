"""A task as stored: what runs, with which inputs, where it stands.

Every task is one JSON value in the profile's key/value store under
``tasks/t/<id>``; its checkpoint under ``tasks/c/<id>``; an idempotency key under
``tasks/k/<key>``. Ids sort by creation time, so a scan lists tasks oldest first.
"""

from __future__ import annotations

import hashlib
import os
import time
from typing import Any, Literal

import msgspec

__all__ = ["ACTIVE", "FINISHED", "STATUSES", "Status", "Task", "input_hash", "new_task_id"]

Status = Literal["queued", "running", "waiting_for_human", "done", "failed", "cancelled"]
STATUSES: tuple[Status, ...] = ("queued", "running", "waiting_for_human", "done", "failed",
                                "cancelled")
#: Statuses a task leaves only by a user's retry.
FINISHED: frozenset[str] = frozenset({"done", "failed", "cancelled"})
ACTIVE: frozenset[str] = frozenset({"queued", "running", "waiting_for_human"})


class Task(msgspec.Struct, kw_only=True, frozen=True):
    """One task. Times are Unix seconds. ``input_hash`` is the SHA-256 of the inputs'
    canonical JSON when queued: checked again before every attempt. ``timeout_s`` and
    ``resource`` are the capability's when queued (the task keeps the definition it
    started with)."""

    id: str
    capability: str
    inputs: dict[str, Any]
    input_hash: str
    status: Status
    resource: str
    timeout_s: float
    max_attempts: int
    created_at: float
    updated_at: float
    #: not before this time (a task scheduled for later, or a retry's back-off)
    run_at: float
    artifacts: str
    progress: float = 0.0
    message: str = ""
    outputs: dict[str, Any] | None = None
    error: str | None = None
    started_at: float | None = None
    finished_at: float | None = None
    parent_run: str | None = None
    idempotency_key: str | None = None
    attempts: int = 0
    #: times the task was taken up again after its process ended while it ran
    resumed: int = 0
    cancel_requested: bool = False

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = msgspec.to_builtins(self)
        return out


def canonical_json(value: Any) -> bytes:
    """JSON with sorted keys and no spaces: equal values give equal bytes."""
    return msgspec.json.encode(value, order="sorted")


def input_hash(inputs: Any) -> str:
    """``sha256:<hex>`` of the inputs' canonical JSON."""
    return "sha256:" + hashlib.sha256(canonical_json(inputs)).hexdigest()


def new_task_id(now: float | None = None) -> str:
    """``t`` + creation time in microseconds (hex, fixed width) + 6 random hex digits:
    unique, and sorted by creation."""
    micros = int((time.time() if now is None else now) * 1_000_000)
    return f"t{micros:014x}{os.urandom(3).hex()}"
