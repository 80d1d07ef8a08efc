"""The AG-UI stream says when consent is asked, how it was answered, and when a step
was refused: a client that only reads the stream can show the dialog and the refusal.
Every event is checked with AG-UI's own models (ag-ui-protocol)."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
from ag_ui.core import Event as AgUiEvent
from ag_ui.core import Interrupt, ResumeEntry, RunFinishedEvent
from pydantic import TypeAdapter

from adjutant import StepDecision, to_ag_ui
from adjutant.testing import FakeWrite, Harness, ScriptedApprover, plan
from adjutant_hookspecs import Plan, Verdict, hookimpl

pytestmark = pytest.mark.anyio
AGUI = TypeAdapter(AgUiEvent)


class Plugin:
    name = "p"

    @hookimpl
    def register_tools(self, register: Any) -> None:
        register(FakeWrite("t.write"))

    @hookimpl
    def register_policies(self, register: Any) -> None:
        register(NoSecrets())


class NoSecrets:
    name = "no-secrets"

    async def evaluate(self, request: Any) -> Verdict:
        if "secret" in str(request.call.args):
            return Verdict("deny", "that file is secret")
        return Verdict.abstain()


def steps(*paths: str) -> Plan:
    return plan(*(("t.write", {"path": p}) for p in paths))


async def stream(steps: Plan, approver: ScriptedApprover) -> tuple[Any, list[dict[str, Any]]]:
    """Run ``steps``; every event as an AG-UI client receives it (validated)."""
    async with Harness(Plugin(), mode="execute-with-confirmation", approver=approver) as h:
        h.events.clear()
        outcome = await h.run("write", reply=steps)
        assert outcome.envelopes == tuple(h.events.envelopes)  # the run's, and all of them
        wire = [msgspec.json.decode(msgspec.json.encode(to_ag_ui(e)))
                for e in outcome.envelopes]
    for event in wire:
        parsed = AGUI.validate_python(event)
        assert parsed.model_dump(by_alias=True, exclude_none=True, mode="json") == event
    return outcome, wire


def custom(wire: list[dict[str, Any]], name: str) -> list[dict[str, Any]]:
    return [e["value"] for e in wire if e["type"] == "CUSTOM" and e["name"] == name]


async def test_a_step_approval_is_an_ag_ui_interrupt_answered_by_a_resume_entry() -> None:
    outcome, wire = await stream(steps("a.txt"), ScriptedApprover(steps=["grant"]))
    assert [r.status for r in outcome.results] == ["ok"]
    [asked] = custom(wire, "adjutant.approval.requested")
    interrupt = Interrupt.model_validate(asked["interrupt"])
    assert interrupt.reason == "tool_approval"
    assert interrupt.tool_call_id == f"{outcome.run_id}-step-0"
    assert interrupt.metadata["packet"]["preview"] == "create a.txt\n(no change)"
    assert interrupt.response_schema["properties"]["action"]["enum"] == ["grant", "deny", "edit"]
    # what a dock sends when it ends its view of the run on the interrupt
    RunFinishedEvent.model_validate({"type": "RUN_FINISHED", "threadId": "t", "runId": "r",
                                     "outcome": {"type": "interrupt",
                                                 "interrupts": [asked["interrupt"]]}})
    [decided] = custom(wire, "adjutant.approval.decided")
    resume = ResumeEntry.model_validate(decided["resume"])
    assert (resume.interrupt_id, resume.status, resume.payload) == (
        interrupt.id, "resolved", {"action": "grant"})
    names = [e.get("name", e["type"]) for e in wire]
    assert names.index("adjutant.approval.requested") < names.index("adjutant.approval.decided") \
        < names.index("TOOL_CALL_START")
    assert custom(wire, "adjutant.step.denied") == []


async def test_a_denied_write_says_so_on_the_stream() -> None:
    outcome, wire = await stream(steps("a.txt"), ScriptedApprover(steps=["deny"]))
    assert outcome.status == "denied"
    [decided] = custom(wire, "adjutant.approval.decided")
    assert decided["decision"] == "deny" and decided["resume"]["status"] == "resolved"
    [denied] = custom(wire, "adjutant.step.denied")
    assert denied == {"step": 0, "tool": "t.write", "toolCallId": f"{outcome.run_id}-step-0",
                      "by": "user", "reason": "denied by the user"}
    assert not [e for e in wire if e["type"] == "TOOL_CALL_START"]
    assert wire[-1]["type"] == "RUN_FINISHED" and wire[-1]["result"]["status"] == "denied"


async def test_nobody_to_ask_is_a_cancelled_resume_and_a_refusal_by_nobody() -> None:
    approver = ScriptedApprover(steps=[StepDecision("deny", unanswered="no terminal")])
    _, wire = await stream(steps("a.txt"), approver)
    [decided] = custom(wire, "adjutant.approval.decided")
    assert decided["resume"]["status"] == "cancelled" and decided["unanswered"] == "no terminal"
    assert custom(wire, "adjutant.step.denied")[0]["by"] == "nobody"


async def test_a_policy_refusal_names_the_policy_and_asks_nothing() -> None:
    _, wire = await stream(steps("secret.txt"), ScriptedApprover())
    assert custom(wire, "adjutant.approval.requested") == []
    [denied] = custom(wire, "adjutant.step.denied")
    assert (denied["by"], denied["policy"], denied["reason"]) == (
        "policy", "no-secrets", "that file is secret")


async def test_a_plan_approval_is_one_interrupt_with_every_step() -> None:
    outcome, wire = await stream(steps("a.txt", "b.txt"), ScriptedApprover(plan="execute"))
    assert [r.status for r in outcome.results] == ["ok", "ok"]
    [asked] = custom(wire, "adjutant.approval.requested")
    assert asked["scope"] == "plan" and asked["interrupt"]["reason"] == "plan_approval"
    assert len(Interrupt.model_validate(asked["interrupt"]).metadata["steps"]) == 2
    [decided] = custom(wire, "adjutant.approval.decided")
    assert decided["decision"] == "execute"
    assert decided["resume"]["interruptId"] == asked["interrupt"]["id"]
