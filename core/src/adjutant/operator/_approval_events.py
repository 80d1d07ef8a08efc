"""The consent events the operator publishes, built from the packets users see.

How they map onto AG-UI (all three travel as ``CUSTOM``, declared by the kernel):

- ``adjutant.approval.requested`` carries an AG-UI ``Interrupt`` (``reason``
  ``tool_approval`` or ``plan_approval``; ``toolCallId`` for a step; the packet in
  ``metadata``; the answer's shape in ``responseSchema``). A client that follows
  AG-UI's interrupt flow ends its view of the run with ``RUN_FINISHED`` whose
  ``outcome`` is ``{"type": "interrupt", "interrupts": [value.interrupt]}`` and
  answers through its frontend's `Approver`.
- ``adjutant.approval.decided`` carries the AG-UI ``ResumeEntry`` answering that
  interrupt (``resolved``, or ``cancelled`` when nobody could answer).
- ``adjutant.step.denied``: a step that will not run, and who refused it.
"""

from __future__ import annotations

import uuid
from typing import Any

from adjutant_hookspecs import (
    ApprovalDecided,
    ApprovalRequested,
    Interrupt,
    ResumeEntry,
    StepDenied,
    to_builtins,
)

from ._consent import PlanPacket, Requester, StepPacket

__all__ = ["approval_decided", "approval_requested", "step_denied", "tool_call_id"]

_ANSWERS = {"step": ("grant", "deny", "edit"), "plan": ("execute", "step", "deny")}


def tool_call_id(run_id: str, index: int) -> str:
    """The id of step ``index``'s tool call, on ``TOOL_CALL_*`` events and interrupts."""
    return f"{run_id}-step-{index}"


def _schema(scope: str) -> dict[str, Any]:
    props: dict[str, Any] = {"action": {"enum": list(_ANSWERS[scope])}}
    if scope == "step":
        props["args"] = {"type": "object", "description": "new arguments, with edit"}
    return {"type": "object", "properties": props, "required": ["action"]}


def approval_requested(packet: StepPacket | PlanPacket) -> ApprovalRequested:
    """The event for a question about to be put to the approver."""
    who = Requester.current()
    if isinstance(packet, StepPacket):
        scope, step = "step", packet.index
        message = f"{packet.summary or packet.tool}?"
        metadata: dict[str, Any] = {"packet": to_builtins(packet)}
        call_id: str | None = tool_call_id(packet.run_id, packet.index)
    else:
        scope, step, call_id = "plan", None, None
        message = f"Run this plan of {len(packet.steps)} steps?"
        metadata = {"steps": [to_builtins(s) for s in packet.steps]}
    interrupt = Interrupt(
        id=f"{packet.run_id}-approval-{uuid.uuid4().hex[:12]}",
        reason=f"{scope.replace('step', 'tool')}_approval", message=message,
        tool_call_id=call_id, response_schema=_schema(scope), metadata=metadata)
    return ApprovalRequested(scope=scope, interrupt=interrupt, step=step,  # type: ignore[arg-type]
                             requester=who.name if who is not None else None)


def approval_decided(request: ApprovalRequested, decision: str, *,
                     args: dict[str, Any] | None = None,
                     unanswered: str | None = None) -> ApprovalDecided:
    """The event for the answer to ``request``."""
    payload: dict[str, Any] = {"action": decision}
    if args is not None:
        payload["args"] = args
    resume = ResumeEntry(interrupt_id=request.interrupt.id,
                         status="cancelled" if unanswered else "resolved", payload=payload)
    return ApprovalDecided(scope=request.scope, decision=decision, resume=resume,
                           step=request.step, unanswered=unanswered)


def step_denied(run_id: str, index: int, tool: str, *, by: str, reason: str,
                policy: str | None = None) -> StepDenied:
    return StepDenied(step=index, tool=tool, tool_call_id=tool_call_id(run_id, index),
                      by=by, reason=reason, policy=policy)  # type: ignore[arg-type]
