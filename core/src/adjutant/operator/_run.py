"""One run of the operator and how it ended.

A `Run` owns everything one request has: its ids, the thread it belongs to, the mode
it runs under, its tool context and the grants it used, the approval tokens issued
for it and the scope that cancels it. The long-lived `Copilot` keeps none of these,
so frontends sharing one operator (``adjutant mcp serve``'s clients, a web dock beside
a voice frontend) each see only their own run's events, approvals and cancellation.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from adjutant_hookspecs import (
    ContextBulletin,
    Envelope,
    ExecutionResult,
    Plan,
    ToolContext,
    Usage,
)

from .._logging import get_logger

__all__ = ["OnEvent", "Run", "RunOutcome", "also_to"]

Status = Literal["answered", "proposed", "executed", "denied", "paused", "aborted",
                 "failed", "ignored", "cancelled"]


@dataclass
class RunOutcome:
    """How a run ended. ``executed``: at least one step ran (each result says how it
    went); ``denied``: none ran, each refused by a policy or not approved."""

    run_id: str
    status: Status
    text: str = ""
    plan: Plan | None = None
    results: list[ExecutionResult] = field(default_factory=list)
    error: str | None = None
    #: A proposed plan's steps as shown: each packet (arguments, preview) and what the
    #: pipeline would decide outside propose-only (``would``: decision and reason).
    proposal: list[dict[str, Any]] = field(default_factory=list)


@dataclass(eq=False)
class Run:
    """One request on its way through the operator (made by `Copilot` per run)."""

    thread_id: str
    #: What started it, as ``RUN_STARTED`` carries it (``{"prompt": ...}``, ``{"call": ...}``).
    input: dict[str, Any]
    #: Publishes an event on the bus as this run's (its run and thread ids).
    bus_publish: Callable[..., Any]
    run_id: str = field(default_factory=lambda: uuid.uuid4().hex)
    #: The mode it runs under: read at its start, read again before its plan executes
    #: (a downgrade from another terminal holds at once).
    mode: str = "propose-only"
    #: Its tool context (working directory, cages) and the grants in force, fixed when
    #: its plan is checked: every step of one plan runs under the same ones.
    ctx: ToolContext | None = None
    grants: tuple[str, ...] = ()
    #: The context bulletin its request was planned with (None: a direct call).
    bulletin: ContextBulletin | None = None
    #: Approval tokens issued for its steps (step index -> token), bound to each
    #: step's preview hash; a plan approval issues them all at once.
    tokens: dict[int, str] = field(default_factory=dict)
    #: Cancels this run only (set while it runs).
    scope: Any = None
    cancelled: bool = False
    #: What the backend reported for the model call just made (None: nothing).
    usage: Usage | None = None

    def publish(self, event: Any) -> None:
        """An event of this run, on its thread."""
        self.bus_publish(event, run_id=self.run_id, thread_id=self.thread_id)

    def cancel(self) -> None:
        """Interrupt generation or cancel the plan (between or during steps)."""
        self.cancelled = True
        if self.scope is not None:
            self.scope.cancel()


#: Called with each event of one run (`Copilot.handle`'s ``on_event``).
OnEvent = Callable[[Envelope], None]


def also_to(publish: Callable[..., Envelope], on_event: OnEvent) -> Callable[..., Envelope]:
    """``publish`` that hands each published envelope to ``on_event`` too; the
    callback's failure is logged and leaves the run alone."""
    def both(event: Any, **ids: Any) -> Envelope:
        envelope = publish(event, **ids)
        try:
            on_event(envelope)
        except Exception as exc:
            get_logger().warning("on_event failed; the run goes on",
                                 event_type=type(envelope.event).__name__,
                                 error=f"{type(exc).__name__}: {exc}")
        return envelope
    return both

