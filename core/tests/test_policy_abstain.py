"""A policy can abstain; "no policy has an opinion" asks like "no policy installed";
a policy's name is shown once, never doubled."""

from __future__ import annotations

from typing import Any

import pytest

from adjutant.operator._pipeline import combine, shown
from adjutant.testing import (
    FakeRead,
    FakeWrite,
    Harness,
    RunResult,
    ScriptedApprover,
    fake_tools,
)
from adjutant_hookspecs import (
    Plan,
    ToolCall,
    Verdict,
    hookimpl,
)

pytestmark = pytest.mark.anyio


def tools() -> object:
    """``t.read`` and ``t.delete`` (destructive), the tools these policies judge."""
    return fake_tools(FakeRead("t.read"), FakeWrite("t.delete", level="destructive"),
                      name="tools")


class RmGuard:
    """A third-party policy that only cares about deletions."""

    name = "rmguard"

    def __init__(self, other: Verdict) -> None:
        self.other = other

    async def evaluate(self, request: Any) -> Verdict:
        if request.call.tool == "t.delete":
            return Verdict("deny", "rmguard: deleting is not allowed here")  # name repeated
        return self.other

    @hookimpl
    def register_policies(self, register: Any) -> None:
        register(self)


def read_plan() -> Plan:
    return Plan(steps=(ToolCall(tool="t.read", args={"path": "/etc/hostname"}),))


async def run(policy: Any, steps: Plan, answers: list[str]) -> RunResult:
    async with Harness(tools(), *([policy] if policy else []), mode="execute-with-confirmation",
                       approver=ScriptedApprover(steps=answers)) as h:
        return await h.run("go", reply=steps)


async def test_a_lone_abstaining_policy_leaves_every_step_asking() -> None:
    """The trap: a deny-only policy that had to say "allow" turned the fallback off."""
    outcome = await run(RmGuard(Verdict.abstain()), read_plan(), ["deny"])
    assert len(outcome.asked) == 1, "no policy had an opinion: the read must ask"
    assert any("rmguard abstained" in r and "so it asks" in r
               for r in outcome.asked[0].reasons), outcome.asked[0].reasons
    assert outcome.status == "denied"


async def test_no_policy_installed_asks_the_same_way() -> None:
    asked = (await run(None, read_plan(), ["grant"])).asked
    assert len(asked) == 1
    assert any("no safety policy is installed" in r for r in asked[0].reasons)


async def test_an_allow_is_an_opinion_and_runs_the_read() -> None:
    outcome = await run(RmGuard(Verdict("allow", "fine by me")), read_plan(), [])
    assert outcome.asked == () and outcome.statuses == ["ok"]


async def test_an_abstaining_policy_beside_an_opinion_changes_nothing() -> None:
    class AllowReads(RmGuard):
        name = "allow-reads"

    outcome = await run(_Both(RmGuard(Verdict.abstain()),
                              AllowReads(Verdict("allow", "reads are fine"))), read_plan(), [])
    assert outcome.asked == () and outcome.statuses == ["ok"]


class _Both:
    name = "both"

    def __init__(self, *policies: Any) -> None:
        self.policies = policies

    @hookimpl
    def register_policies(self, register: Any) -> None:
        for policy in self.policies:
            register(policy)


async def test_a_deny_is_shown_with_the_policy_name_once() -> None:
    plan = Plan(steps=(ToolCall(tool="t.delete", args={"path": "x"}),))
    outcome = await run(RmGuard(Verdict.abstain()), plan, [])
    assert outcome.status == "denied"
    assert outcome.results[0].stderr == "rmguard: deleting is not allowed here"
    assert [(d.policy, d.reason) for d in outcome.refused] == [
        ("rmguard", "rmguard: deleting is not allowed here")]
    assert "rmguard: rmguard" not in (outcome.error or "")


async def test_a_pre_tool_use_hook_may_abstain_too() -> None:
    class Hook:
        name = "hook"

        @hookimpl
        def pre_tool_use(self, call: ToolCall, declaration: Any, mode: str) -> Verdict:
            return Verdict.abstain()

    asked = (await run(Hook(), read_plan(), ["deny"])).asked
    assert any("hook abstained" in r for r in asked[0].reasons)


def test_combine_ignores_abstentions() -> None:
    allow, ask = Verdict("allow", "ok", "a"), Verdict("ask", "hm", "b")
    assert combine([Verdict.abstain(policy="x"), allow]) is allow
    assert combine([allow, Verdict.abstain(policy="x"), ask]) is ask
    fallback = combine([Verdict.abstain(policy="x"), Verdict.abstain(policy="y")])
    assert (fallback.decision, fallback.policy) == ("ask", "kernel")
    assert "x, y abstained" in fallback.reason
    assert combine([]).decision == "ask"


def test_shown_names_the_policy_once() -> None:
    assert shown(Verdict("deny", "no rm", "rmguard")) == "rmguard: no rm"
    assert shown(Verdict("deny", "rmguard: no rm", "rmguard")) == "rmguard: no rm"
    assert shown(Verdict("deny", "no rm")) == "no rm"


async def test_an_abstaining_write_gate_does_not_switch_off_the_kernels_backstop() -> None:
    class FakeGate(_AllowAll):
        name = "write-gate"

    plan = Plan(steps=(ToolCall(tool="t.delete", args={"path": "x"}),))
    asked = (await run(_Both(FakeGate(Verdict.abstain()),
                             _AllowAll(Verdict("allow", "all fine"))), plan, ["deny"])).asked
    assert len(asked) == 1
    assert any(r.startswith("write-gate: t.delete writes") for r in asked[0].reasons)


class _AllowAll(RmGuard):
    name = "allow-all"

    async def evaluate(self, request: Any) -> Verdict:
        return self.other
