"""Runs folded into requests, as History and the action log's Status show them.

A request that asked a question is stored as several runs (the interrupted one, then
one per answer, each with ``parentRunId``). A person asked one thing: one row, whose
status is the one its last run ended with, and the answers given on the way.
"""

from __future__ import annotations

from typing import Any

__all__ = ["fold"]

#: The last run's status while a question is open (it ended asking).
WAITING = "waiting for an answer"


def fold(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One entry per request, newest first: the first run's ids, prompt, pin and start;
    the last run's status and end; ``answers`` in order; ``runs`` (their ids)."""
    by_id = {e["runId"]: e for e in entries}

    def root(entry: dict[str, Any]) -> dict[str, Any]:
        seen = {entry["runId"]}
        while (parent := by_id.get(entry.get("parentRunId") or "")) is not None:
            if parent["runId"] in seen:  # a loop in damaged records: stop here
                break
            seen.add(parent["runId"])
            entry = parent
        return entry

    out: dict[str, dict[str, Any]] = {}
    for entry in sorted(entries, key=lambda e: (e["startedAt"] or "", e["runId"])):
        first = root(entry)
        request = out.get(first["runId"])
        if request is None:
            request = out[first["runId"]] = {**first, "answers": [], "runs": []}
        request["runs"].append(entry["runId"])
        if entry is not first:
            request["answers"].append(entry.get("answer") or "unanswered")
        request["status"] = entry["status"]
        request["endedAt"] = entry.get("endedAt")
    for request in out.values():
        if request["status"] == "interrupted":
            request["status"] = WAITING
        request["questions"] = len(request["answers"]) + (request["status"] == WAITING)
    return sorted(out.values(), key=lambda r: (r["startedAt"] or "", r["runId"]),
                  reverse=True)
