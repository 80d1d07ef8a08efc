"""Consent: what the user is shown before a step runs, and how they answer.

Frontends implement `Approver`; the operator hands it a `PlanPacket` for a plan
that needs plan approval and a `StepPacket` (the confirmation packet) per step.

When a run was asked for by another program (an MCP client) rather than the user at
the keyboard, the frontend that received the call names it (``with requester.asking():``):
approvers show who asks (`Requester.current`), ration its questions and honour the
user's "deny everything from it".
"""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import json
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

import msgspec

__all__ = ["Approver", "Escalation", "PlanPacket", "Requester", "StepDecision", "StepPacket",
           "packet_id"]


class StepPacket(msgspec.Struct, frozen=True):
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
    details: dict[str, Any] = msgspec.field(default_factory=dict)
    #: The step in plain words, shown first ("Append 1 line to notes.md").
    summary: str = ""


def packet_id(packet: StepPacket) -> str:
    """A short name for exactly what a packet shows (tool, arguments, preview): asked
    with the question, so the answer is given for the packet the user sees."""
    shown = json.dumps([packet.tool, packet.args, packet.preview], sort_keys=True,
                       ensure_ascii=True, default=str)
    return hashlib.sha256(shown.encode()).hexdigest()[:8]


class PlanPacket(msgspec.Struct, frozen=True):
    run_id: str
    steps: tuple[StepPacket, ...]


class StepDecision(msgspec.Struct, frozen=True):
    """``grant``, ``deny``, or ``edit`` with new ``args`` (then asked again).

    ``unanswered``: why a ``deny`` came from nobody (no terminal, no approver) rather
    than from the user; the log and the caller keep the two apart."""

    action: Literal["grant", "deny", "edit"]
    args: dict[str, Any] | None = None
    unanswered: str | None = None


class PlanDecision(msgspec.Struct, frozen=True):
    """The answer to a whole plan: ``execute`` every step (each bound to the preview
    shown), go ``step`` by step (each asked), or ``deny``. ``unanswered``: as for
    `StepDecision`. `Approver.approve_plan` may also return the bare action string."""

    action: Literal["execute", "step", "deny"]
    unanswered: str | None = None


class Escalation(msgspec.Struct, frozen=True):
    """A request the router would send off this machine (a remote preset): the user is
    asked first, outside the auto mode, with what it may cost."""

    run_id: str
    preset: str
    model: str
    reason: str
    tokens: int
    cost: float


class Approver:
    r"""The user's side of consent; frontends implement it. The default refuses.

    ``approve_plan`` gets a `PlanPacket` (a plan with writes, as a whole; its
    ``steps`` are `StepPacket`\ s) and returns a `PlanDecision`; ``approve_step`` gets
    one `StepPacket` and returns a `StepDecision`."""

    async def approve_plan(self, packet: PlanPacket) -> PlanDecision | Literal[
            "execute", "step", "deny"]:
        return PlanDecision("deny", unanswered="this frontend has no way to ask the user")

    async def approve_step(self, packet: StepPacket) -> StepDecision:
        return StepDecision("deny", unanswered="this frontend has no way to ask the user")

    async def approve_escalation(self, question: Escalation) -> bool:
        """Whether this request may go to the remote preset the router picked; no (the
        default) keeps it on the profile's own model."""
        return False


@dataclass(eq=False)
class Requester:
    """Who asked for the runs in this context when it is not the user (an MCP client's
    session): its name as shown, its question budget, and whether the user denied
    everything from it.

    The budget is a token bucket: ``questions`` at once, refilled at ``questions`` per
    ``window_s`` seconds; a question beyond it is refused without being asked (a
    flood is cut off, never queued)."""

    name: str
    questions: int = 10
    window_s: float = 60.0
    #: Called (awaited) once, with the run's id, when the user denies everything from
    #: this requester: the frontend records it in the action log.
    on_deny_all: Callable[[str], Awaitable[None]] | None = None
    denied: bool = False
    _tokens: float = field(init=False, default=-1.0)
    _at: float = field(init=False, default=0.0)

    def take_question(self) -> bool:
        """Whether one more question may be asked now (and counts it)."""
        now = time.monotonic()
        if self._tokens < 0:
            self._tokens, self._at = float(self.questions), now
        rate = self.questions / self.window_s
        self._tokens = min(float(self.questions), self._tokens + (now - self._at) * rate)
        self._at = now
        if self._tokens < 1.0:
            return False
        self._tokens -= 1.0
        return True

    @contextlib.contextmanager
    def asking(self) -> Iterator[Requester]:
        """Runs started inside are asked for by this requester."""
        token = _current.set(self)
        try:
            yield self
        finally:
            _current.reset(token)

    @staticmethod
    def current() -> Requester | None:
        """Who asked for the run being approved; None: the user at the keyboard."""
        return _current.get()

    async def deny_all(self, run_id: str) -> None:
        """The user denied everything from this requester, for as long as it lasts."""
        if self.denied:
            return
        self.denied = True
        if self.on_deny_all is not None:
            await self.on_deny_all(run_id)


_current: contextvars.ContextVar[Requester | None] = contextvars.ContextVar(
    "adjutant_requester", default=None)
