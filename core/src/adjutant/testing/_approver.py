"""An approver that answers from a script and remembers every packet it was shown."""

from __future__ import annotations

from collections import deque
from typing import Any, Literal

from .._operator import Approver, PlanPacket, StepDecision, StepPacket

__all__ = ["ScriptedApprover"]


class ScriptedApprover(Approver):
    """``plan`` answers every plan approval; ``steps`` answers step approvals in order
    (``"grant"``, ``"deny"`` or a `StepDecision`), then ``default``."""

    def __init__(self, plan: Literal["execute", "step", "deny"] = "step",
                 steps: list[Any] | None = None,
                 default: Literal["grant", "deny"] = "deny") -> None:
        self.plan = plan
        self._steps: deque[Any] = deque(steps or [])
        self.default = default
        self.plans: list[PlanPacket] = []
        self.asked: list[StepPacket] = []

    async def approve_plan(self, packet: PlanPacket) -> Literal["execute", "step", "deny"]:
        self.plans.append(packet)
        return self.plan

    async def approve_step(self, packet: StepPacket) -> StepDecision:
        self.asked.append(packet)
        answer: Any = self._steps.popleft() if self._steps else self.default
        return answer if isinstance(answer, StepDecision) else StepDecision(action=answer)
