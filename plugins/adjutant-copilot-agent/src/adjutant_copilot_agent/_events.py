"""The agent's events on the bus (AG-UI ``CUSTOM`` events, as every plugin event).

- ``copilot_agent.updated``: the state; the first of a session carries ``snapshot``,
  the next ones ``delta``, an RFC 6902 JSON Patch from the previous state;
- ``copilot_agent.status``: ``starting``, ``active``, ``processing``, ``paused``,
  ``stopped`` or ``error``, with a message;
- ``copilot_agent.error``: a failed cycle, its number and what went wrong.
"""

from __future__ import annotations

from typing import Any

from adjutant_hookspecs import CustomEvent

__all__ = ["EVENTS", "STATUSES", "CopilotError", "CopilotStatus", "CopilotUpdated"]

STATUSES = ("starting", "active", "processing", "paused", "stopped", "error")


class CopilotUpdated(CustomEvent, frozen=True, tag="copilot_agent.updated"):
    """The state changed: ``snapshot`` (the whole state) or ``delta`` (JSON Patch ops
    from the state of the previous event of the same ``session``)."""

    session: str
    cycle: int
    snapshot: dict[str, Any] | None = None
    delta: list[dict[str, Any]] | None = None


class CopilotStatus(CustomEvent, frozen=True, tag="copilot_agent.status"):
    session: str
    status: str
    message: str = ""


class CopilotError(CustomEvent, frozen=True, tag="copilot_agent.error"):
    session: str
    cycle: int
    error: str


EVENTS = (CopilotUpdated, CopilotStatus, CopilotError)
