"""Consent: what the user is shown before a step runs, and how they answer.

Frontends implement `Approver`; the operator hands it a `PlanPacket` for a plan
that needs plan approval and a `StepPacket` (the confirmation packet) per step.
"""

from __future__ import annotations

from typing import Any, Literal

import attrs

__all__ = ["Approver", "PlanPacket", "StepDecision", "StepPacket"]


@attrs.frozen
class StepPacket:
    """What the user is asked to confirm for one step (the confirmation packet)."""

    run_id: str
    index: int
    tool: str
    args: dict[str, Any]
    intent: str
    preview: str | None
    level: str
    reasons: tuple[str, ...]
    #: From ``confirmation_details`` hooks: target, current vs proposed, impact, risk.
    details: dict[str, Any] = attrs.Factory(dict)


@attrs.frozen
class PlanPacket:
    run_id: str
    steps: tuple[StepPacket, ...]


@attrs.frozen
class StepDecision:
    """``grant``, ``deny``, or ``edit`` with new ``args`` (then asked again).

    ``unanswered``: why a ``deny`` came from nobody (no terminal, no approver) rather
    than from the user; the log and the caller keep the two apart."""

    action: Literal["grant", "deny", "edit"]
    args: dict[str, Any] | None = None
    unanswered: str | None = None


class Approver:
    """The user's side of consent; frontends implement it. The default refuses."""

    async def approve_plan(self, packet: PlanPacket) -> Literal["execute", "step", "deny"]:
        return "deny"

    async def approve_step(self, packet: StepPacket) -> StepDecision:
        return StepDecision("deny", unanswered="this frontend has no way to ask the user")
