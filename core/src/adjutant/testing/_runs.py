"""What a test reads after one run through the operator: `RunResult`, and `plan`, a
short way to write the plan a scripted model replies with."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from adjutant_hookspecs import Envelope, ExecutionResult, Plan, StepDenied, ToolCall

from ..operator import RunOutcome
from ..operator._consent import (
    Approver,
    Escalation,
    PlanDecision,
    PlanPacket,
    StepDecision,
    StepPacket,
)
from ._recorders import EventView

__all__ = ["RecordingApprover", "RunResult", "plan"]


def plan(*steps: ToolCall | tuple[str, Mapping[str, Any]], explain: str = "") -> Plan:
    """A `Plan` for a scripted model to reply with::

        plan(("notes.write", {"path": "a.txt", "text": "hi\\n"}), ("notes.read", {...}))

    A step is a `ToolCall` or ``(tool, args)``; ``explain`` is each tuple step's intent
    (what the approver is shown as *why*)."""
    return Plan(steps=tuple(
        s if isinstance(s, ToolCall) else ToolCall(tool=s[0], args=dict(s[1]), explain=explain)
        for s in steps))


class RecordingApprover(Approver):
    """Passes every question to ``inner`` (swappable between runs) and keeps each packet,
    so a run's questions can be read back whatever approver answered them."""

    def __init__(self, inner: Approver) -> None:
        self.inner = inner
        self.steps: list[StepPacket] = []
        self.plans: list[PlanPacket] = []
        self.escalations: list[Escalation] = []

    async def approve_plan(self, packet: PlanPacket) -> PlanDecision | Literal[
            "execute", "step", "deny"]:
        self.plans.append(packet)
        return await self.inner.approve_plan(packet)

    async def approve_step(self, packet: StepPacket) -> StepDecision:
        self.steps.append(packet)
        return await self.inner.approve_step(packet)

    async def approve_escalation(self, question: Escalation) -> bool:
        self.escalations.append(question)
        return await self.inner.approve_escalation(question)


@dataclass(frozen=True)
class RunResult(EventView):
    """One run as a client sees it: how it ended (`outcome`, and its fields as
    attributes), every event it published, every action-log record it wrote, and every
    question it put to the approver."""

    outcome: RunOutcome
    #: The run's events in order (``RUN_STARTED`` first), as the bus delivered them.
    envelopes: tuple[Envelope, ...]
    #: The run's action-log records, oldest first (``prompt`` ... ``outcome``).
    records: tuple[dict[str, Any], ...]
    #: Step questions, in the order they were asked (edits and changed previews ask again).
    asked: tuple[StepPacket, ...]
    #: Plan questions (a plan of several steps with a write asks once for the whole).
    plans: tuple[PlanPacket, ...]

    # -- the outcome ----------------------------------------------------------------------

    @property
    def run_id(self) -> str:
        return self.outcome.run_id

    @property
    def status(self) -> str:
        return self.outcome.status

    @property
    def text(self) -> str:
        return self.outcome.text

    @property
    def error(self) -> str | None:
        return self.outcome.error

    @property
    def plan(self) -> Plan | None:
        return self.outcome.plan

    @property
    def results(self) -> list[ExecutionResult]:
        return self.outcome.results

    @property
    def proposal(self) -> list[dict[str, Any]]:
        return self.outcome.proposal

    @property
    def tools(self) -> list[str]:
        """The tools that ran, in order (a refused step ran nothing and is not here)."""
        return [r.tool for r in self.outcome.results if r.status != "denied"]

    @property
    def statuses(self) -> list[str]:
        """Each step's result status (``ok``, ``error``, ``denied``), in order."""
        return [r.status for r in self.outcome.results]

    # -- events (``events``, ``names()``, ``of_type(cls)``: `EventView`) -------------------

    @property
    def refused(self) -> list[StepDenied]:
        """Steps that did not run, each with who refused (``policy``, ``user``,
        ``nobody``), the policy and the reason, as the stream said."""
        return self.of_type(StepDenied)

    # -- the action log -------------------------------------------------------------------

    @property
    def kinds(self) -> list[str]:
        """The run's record kinds in order (``prompt``, ``context``, ..., ``outcome``)."""
        return [r["kind"] for r in self.records]

    def logged(self, kind: str) -> list[dict[str, Any]]:
        """The run's records of one kind (``decision``, ``approval``, ``result``...)."""
        return [r for r in self.records if r["kind"] == kind]
