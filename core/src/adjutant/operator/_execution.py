"""Consent and execution of a plan: every step checked and previewed, the plan shown,
approvals asked where needed (bound to the preview's hash), steps run, each result and
artifact logged. All of it on the `Run`: its mode, context, grants and tokens."""

from __future__ import annotations

from typing import TYPE_CHECKING

from adjutant_hookspecs.records import ApprovalRecord, ArtifactRecord

if TYPE_CHECKING:
    from adjutant_hookspecs import Kernel

from collections.abc import Callable, Sequence
from typing import Any

import msgspec

from adjutant_hookspecs import (
    ActivitySnapshot,
    ExecutionResult,
    Plan,
    ToolCall,
    ToolCallArgs,
    ToolCallEnd,
    ToolCallResult,
    ToolCallStart,
    to_builtins,
)

from ..safety.standing import FILE, TOOL
from ._approval_events import approval_decided, approval_requested, step_denied, tool_call_id
from ._artifacts import write_artifact
from ._consent import Approver, PlanDecision, PlanPacket, StepPacket
from ._pipeline import CheckedStep, Pipeline, StepChangedError, shown
from ._run import Run, RunOutcome
from ._standing import standing_grant
from ._summary import summarize

__all__ = ["Execution"]


class Execution:
    """Carries out plans through one operator's pipeline.

    :param delta: awaited with JSON-patch operations and the run (the plan as shown).
    """

    def __init__(self, kernel: Kernel, pipeline: Pipeline, delta: Any, *,
                 max_steps: int, live_grants: Callable[[], Sequence[str]] = tuple) -> None:
        self.kernel = kernel
        #: the grants in force now: a standing write grant is read at each step, so a
        #: revocation holds from the next one
        self.live_grants = live_grants
        self.pipeline = pipeline
        self.log = pipeline.log
        self.max_steps = max_steps
        self._delta = delta

    def packet(self, run: Run, step: CheckedStep) -> StepPacket:
        """What the user is shown for one step."""
        details = {}
        if step.declaration is not None and step.preview is not None and run.ctx is not None:
            details = self.kernel.confirmation_details(step.call, step.declaration,
                                                       step.preview, run.ctx.cwd)
        return StepPacket(run.run_id, step.index, step.call.tool, dict(step.call.args),
                          step.call.explain, step.preview.dry_run_diff if step.preview else None,
                          step.declaration.safety.level if step.declaration else "?",
                          tuple(shown(v) for v in step.verdicts
                                if v.decision not in ("allow", "abstain")), details,
                          summarize(step.call.tool, step.call.args, step.declaration,
                                    step.preview))

    async def carry_out(self, plan: Plan, run: Run, approver: Approver) -> RunOutcome:
        assert run.ctx is not None
        run_id, mode = run.run_id, run.mode
        checked = [await self.pipeline.check(i, call, ctx=run.ctx, mode=mode, grants=run.grants,
                                             run_id=run_id, history=plan.steps[:i],
                                             stage="plan")
                   for i, call in enumerate(plan.steps)]
        packets = [to_builtins(self.packet(run, s)) for s in checked]
        for entry, step in zip(packets, checked, strict=True):
            if step.would is not None:  # propose-only: what would happen one mode up
                entry["would"] = {"decision": step.would.decision, "reason": shown(step.would)}
        run.publish(ActivitySnapshot(message_id=f"{run_id}-plan", activity_type="plan",
                                     content={"steps": packets,
                                              "verdicts": [s.verdict.decision for s in checked]}))
        await self._delta([{"op": "replace", "path": "/plan", "value": packets}], run)
        if mode == "propose-only":
            return RunOutcome(run_id, "proposed", plan=plan, proposal=packets)
        writes = any(s.declaration is not None and s.needs_approval for s in checked)
        if len(checked) > 1 and writes:
            packet = PlanPacket(run_id, tuple(self.packet(run, s) for s in checked))
            run.publish(asked := approval_requested(packet))
            await self.log.flush()  # nothing waits on a person with records unwritten
            given = await approver.approve_plan(packet)
            decided = given if isinstance(given, PlanDecision) else PlanDecision(given)
            answer = decided.action if decided.action in ("execute", "step") else "deny"
            await self.log.record(ApprovalRecord(run_id=run_id, scope="plan", answer=answer))
            run.publish(approval_decided(asked, answer, unanswered=decided.unanswered))
            if answer == "deny":
                return RunOutcome(run_id, "denied", plan=plan, error="plan denied")
            if answer == "execute":  # consent to every preview shown, bound to each hash
                run.tokens.update({s.index: self.pipeline.approvals.issue(run_id, s.index,
                                                                          s.digest)
                                   for s in checked if s.digest})
        outcome = RunOutcome(run_id, "executed", plan=plan)
        history: list[ToolCall] = []
        errors = 0
        for index, call in enumerate(plan.steps):
            if index >= self.max_steps:
                outcome.status = "paused"
                outcome.error = f"stopped at the step limit ({self.max_steps})"
                break
            if sum(1 for h in history if h.tool == call.tool and h.args == call.args) >= 2:
                outcome.status = "paused"
                outcome.error = (f"I seem to be stuck: {call.tool} was called three times "
                                 "with the same arguments")
                break
            result = await self.one_step(index, call, run, history, approver)
            history.append(call)
            outcome.results.append(result)
            errors += result.status != "ok"
            if len(outcome.results) >= 2 and errors / len(outcome.results) > 0.5:
                outcome.status = "aborted"
                outcome.error = (f"aborted: {errors} of {len(outcome.results)} steps failed: "
                                 + "; ".join(f"{r.tool}: {r.status} {r.stderr[:80]}"
                                             for r in outcome.results if r.status != "ok"))
                break
        if outcome.status == "executed" and outcome.results and all(
                r.status == "denied" for r in outcome.results):
            outcome.status = "denied"  # nothing ran: the log must not say "executed"
            outcome.error = outcome.error or outcome.results[0].stderr
        return outcome

    async def one_step(self, index: int, call: ToolCall, run: Run, history: list[ToolCall],
                       approver: Approver) -> ExecutionResult:
        """Check, approve (where needed), run and log step ``index`` of ``run``."""
        assert run.ctx is not None
        run_id, ctx, mode = run.run_id, run.ctx, run.mode
        for _ in range(3):  # a changed preview or an edit is asked again, a few times at most
            grants = self._step_grants(run)
            step = await self.pipeline.check(index, call, ctx=ctx, mode=mode, grants=grants,
                                             history=tuple(history), run_id=run_id)
            if step.denied:
                by = "tool" if step.verdict.policy == call.tool else "policy"
                run.publish(step_denied(run_id, index, call.tool, by=by,
                                        reason=step.verdict.reason, policy=step.verdict.policy))
                return ExecutionResult(tool=call.tool, args=call.args, status="denied",
                                       stderr=shown(step.verdict))
            token = run.tokens.get(index)
            standing = None
            if step.needs_approval and not self.pipeline.approvals.valid(
                    token, run_id, index, step.digest or ""):
                standing = standing_grant(step, grants, ctx.cwd)
            if standing is not None:  # consent given in advance, bound to this preview
                self.log.defer(ApprovalRecord(run_id=run_id, scope="step", step=index,
                                              action="grant", digest=step.digest,
                                              grant=standing))
                token = self.pipeline.approvals.issue(run_id, index, step.digest or "")
            elif step.needs_approval and not self.pipeline.approvals.valid(
                    token, run_id, index, step.digest or ""):
                packet = self.packet(run, step)
                run.publish(asked := approval_requested(packet))
                await self.log.flush()  # nothing waits on a person with records unwritten
                decision = await approver.approve_step(packet)
                self.log.defer(ApprovalRecord(run_id=run_id, scope="step", step=index,
                                              action=decision.action, digest=step.digest,
                                              args=decision.args,
                                              unanswered=decision.unanswered))
                run.publish(approval_decided(asked, decision.action, args=decision.args,
                                             unanswered=decision.unanswered))
                if decision.action == "deny":
                    why = (f"needs approval and nobody could give it ({decision.unanswered})"
                           if decision.unanswered else "denied by the user")
                    run.publish(step_denied(run_id, index, call.tool, reason=why,
                                            by="nobody" if decision.unanswered else "user"))
                    return ExecutionResult(tool=call.tool, args=call.args, status="denied",
                                           stderr=why)
                if decision.action == "edit":
                    call = ToolCall(tool=call.tool, args=decision.args or {},
                                    explain=call.explain)
                    run.tokens.pop(index, None)
                    continue
                token = self.pipeline.approvals.issue(run_id, index, step.digest or "")
            call_id = tool_call_id(run_id, index)
            run.publish(ToolCallStart(tool_call_id=call_id, tool_call_name=call.tool))
            run.publish(ToolCallArgs(tool_call_id=call_id,
                                     delta=msgspec.json.encode(call.args).decode()))
            run.publish(ToolCallEnd(tool_call_id=call_id))
            try:
                result = await self.pipeline.execute(step, ctx=ctx, mode=mode, run_id=run_id,
                                                     token=token)
            except StepChangedError:
                run.tokens.pop(index, None)
                continue
            except PermissionError as exc:
                run.publish(step_denied(run_id, index, call.tool, by="policy", reason=str(exc),
                                        policy="runtime-check"))
                result = ExecutionResult(tool=call.tool, args=call.args, status="denied",
                                         stderr=str(exc))
            run.publish(ToolCallResult(message_id=f"{call_id}-result", tool_call_id=call_id,
                                       content=result.stdout or result.stderr or result.status,
                                       role="tool"))
            self._artifact(run_id, index, call, step, result)
            return result
        why = "not run: the step kept changing after approval"
        run.publish(step_denied(run_id, index, call.tool, by="policy", reason=why,
                                policy="kernel"))
        return ExecutionResult(tool=call.tool, args=call.args, status="denied", stderr=why)

    def _step_grants(self, run: Run) -> tuple[str, ...]:
        """The run's grants (fixed when it started), with the standing write grants
        as they are now: given or revoked since, it counts from this step."""
        standing = (FILE, TOOL)
        return (*(g for g in run.grants if not g.startswith(standing)),
                *(g for g in self.live_grants() if g.startswith(standing)))

    def _artifact(self, run_id: str, index: int, call: ToolCall, step: CheckedStep,
                  result: ExecutionResult) -> None:
        try:
            artifact = ArtifactRecord(run_id=run_id, step=index, path=str(write_artifact(
                self.kernel.home, run_id, f"step-{index}.json", {
                    "call": to_builtins(call), "preview": step.preview.dry_run_diff
                    if step.preview else None, "result": to_builtins(result)})))
        except OSError as exc:  # a full disk: the result must still reach the log
            artifact = ArtifactRecord(run_id=run_id, step=index, path=None,
                                      error=f"not written: {exc.strerror or exc}")
        # with the step's result, in the next step's intent or the run's outcome
        self.log.defer(artifact)
