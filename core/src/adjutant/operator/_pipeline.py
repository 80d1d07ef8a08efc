"""The safety pipeline: seven steps for every tool call, failing closed.

1. the tool must exist and be in the profile's ``tools`` allow-list (an empty list
   allows none); its arguments are validated against its JSON schema;
2. the mode gate;
3. the policy chain (registered policies and ``pre_tool_use`` hooks); a policy may
   abstain, and when none has an opinion the step asks;
4. the write gate: a step with write intent needs an explicit approval in every mode;
5. the dry-run, whose preview is hashed; an approval is bound to that hash;
6. execution, after a fresh dry-run shows the same preview and the runtime
   pre-tool check passes again;
7. a record of every decision, approval and effect in the action log.

Deny beats ask beats allow; the first deny ends the step and the log says who and why.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from adjutant_hookspecs import Kernel

import hashlib
import hmac
import secrets
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import msgspec

from adjutant_hookspecs import (
    ExecutionResult,
    PolicyRequest,
    ToolCall,
    ToolContext,
    ToolDeclaration,
    Verdict,
    is_write,
    to_builtins,
)
from adjutant_hookspecs.records import (
    ChangedRecord,
    DecisionRecord,
    RefusedRecord,
    ResultRecord,
    ToolCallRecord,
)

from ._actionlog import ActionLog

__all__ = ["Approvals", "CheckedStep", "Pipeline", "StepChangedError", "combine", "shown"]

MAX_ARGS_BYTES = 64 * 1024
_canonical = msgspec.json.Encoder(order="sorted")


#: The verdict when no policy is installed, or none has an opinion on a step.
NO_POLICY = "no safety policy is installed, so every step asks"
NO_OPINION = "no safety policy has an opinion on this step ({abstained}), so it asks"


def combine(verdicts: Sequence[Verdict]) -> Verdict:
    """The strongest opinion (deny > ask > allow); the first of equals wins.

    Abstentions are not opinions: when every verdict abstains, or there is none, the
    answer is ``ask`` (the kernel's fallback), never ``allow``."""
    opinions = [v for v in verdicts if v.decision != "abstain"]
    if not opinions:
        if not verdicts:
            return Verdict(decision="ask", policy="kernel", reason=NO_POLICY)
        who = ", ".join(dict.fromkeys(v.policy or "?" for v in verdicts))
        return Verdict(decision="ask", policy="kernel",
                       reason=NO_OPINION.format(abstained=f"{who} abstained"))
    best = opinions[0]
    for verdict in opinions[1:]:
        if verdict.rank > best.rank:
            best = verdict
    return best


def shown(verdict: Verdict) -> str:
    """``policy: reason`` as frontends show it, the name given once even when the
    reason already starts with it (``rmguard: rmguard: ...`` never appears)."""
    reason, policy = verdict.reason.strip(), verdict.policy
    if not policy or reason.lower().startswith(f"{policy.lower()}:"):
        return reason
    return f"{policy}: {reason}"


def preview_hash(preview: ExecutionResult) -> str:
    """What an approval is bound to: the call and its exact previewed effect."""
    fields = {"tool": preview.tool, "args": preview.args, "status": preview.status,
              "dry_run_diff": preview.dry_run_diff}
    return hashlib.sha256(_canonical.encode(fields)).hexdigest()


class StepChangedError(RuntimeError):
    """The effect changed between approval and execution: ask again, never run."""


class Approvals:
    """Approval tokens: an HMAC over (run, step, preview hash) with a per-kernel key,
    so a token authorises exactly the preview the user saw, nothing else."""

    def __init__(self) -> None:
        self._key = secrets.token_bytes(32)

    def issue(self, run_id: str, step: int, digest: str) -> str:
        msg = f"{run_id}\x00{step}\x00{digest}".encode()
        return hmac.new(self._key, msg, hashlib.sha256).hexdigest()

    def valid(self, token: str | None, run_id: str, step: int, digest: str) -> bool:
        return token is not None and hmac.compare_digest(token, self.issue(run_id, step, digest))


@dataclass(frozen=True)
class CheckedStep:
    """A call that went through steps 1-5: its verdict and (unless denied) preview."""

    index: int
    call: ToolCall
    declaration: ToolDeclaration | None
    verdict: Verdict
    verdicts: tuple[Verdict, ...]
    preview: ExecutionResult | None = None
    digest: str | None = None
    #: In propose-only (which runs nothing): what the pipeline would decide in
    #: execute-with-confirmation, the failed preview included; None otherwise.
    would: Verdict | None = None

    @property
    def needs_approval(self) -> bool:
        return self.verdict.decision == "ask"

    @property
    def denied(self) -> bool:
        return self.verdict.decision == "deny"


class Pipeline:
    """Runs the pipeline for one kernel; the operator drives it step by step."""

    def __init__(self, kernel: Kernel, log: ActionLog) -> None:
        self.kernel = kernel
        self.log = log
        self.approvals = Approvals()
        self._validators: dict[int, tuple[ToolDeclaration, Any]] = {}  # id -> (decl, validator)

    # -- steps 1-5 ----------------------------------------------------------------------

    async def check(
        self, index: int, call: ToolCall, *, ctx: ToolContext, mode: str,
        grants: tuple[str, ...] = (), history: tuple[ToolCall, ...] = (), run_id: str,
        stage: str = "step",
    ) -> CheckedStep:
        """Steps 1-5 for one call. ``stage``: ``plan`` when the whole plan is previewed,
        ``step`` for the check right before a step may run (both are logged)."""
        declaration, refusal = self._validate(call)
        if refusal is not None:
            step = CheckedStep(index, call, declaration, refusal, (refusal,))
        else:
            assert declaration is not None
            verdicts = [self._mode_gate(declaration, mode)]
            verdicts += await self._policies(call, declaration, ctx, mode, grants, history)
            gated = any(v.policy == "write-gate" and v.decision in ("ask", "deny")
                        for v in verdicts)
            if is_write(declaration) and not gated:  # the kernel's own backstop
                verdicts.append(Verdict(decision="ask", policy="write-gate",
                                        reason=f"{call.tool} writes: it needs your approval"))
            verdict = combine(verdicts)
            step = CheckedStep(index, call, declaration, verdict, tuple(verdicts))
            if not step.denied:
                step = await self._dry_run(step, ctx)
            elif mode == "propose-only":
                step = await self._proposed(step, ctx)
        self.log.defer(DecisionRecord(  # written with the step's intent, before anything runs
            run_id=run_id, step=index, stage=stage, tool=call.tool, args=call.args,
            decision=step.verdict.decision, policy=step.verdict.policy,
            reason=step.verdict.reason, verdicts=[to_builtins(v) for v in step.verdicts],
            preview=step.preview.dry_run_diff if step.preview else None, digest=step.digest,
            would=to_builtins(step.would) if step.would is not None else None))
        return step

    def _validate(self, call: ToolCall) -> tuple[ToolDeclaration | None, Verdict | None]:
        def refuse(reason: str) -> tuple[ToolDeclaration | None, Verdict]:
            return declaration, Verdict(decision="deny", policy="schema", reason=reason)

        tool = self.kernel.tools.get(call.tool)
        declaration = tool.declaration if tool is not None else None
        if (listed := self._allow_list(call.tool)) is not None:
            return declaration, listed
        if tool is None:
            return refuse(f"unknown tool {call.tool!r}")
        if len(_canonical.encode(call.args)) > MAX_ARGS_BYTES:
            return refuse(f"arguments are larger than {MAX_ARGS_BYTES} bytes")
        # keyed by identity, checked by identity: tools mounted at run time come and go,
        # and a freed declaration's id can be reused by a different one
        cached = self._validators.get(id(tool.declaration))
        if cached is not None and cached[0] is tool.declaration:
            validator = cached[1]
        else:
            # jsonschema costs more to import than the rest of the operator, which
            # `adjutant mode` loads (bench/startup.py): at the first step checked
            from jsonschema import Draft202012Validator

            validator = Draft202012Validator(tool.declaration.args_schema)
            self._validators[id(tool.declaration)] = (tool.declaration, validator)
        errors = sorted(validator.iter_errors(call.args), key=lambda e: list(e.absolute_path))
        if errors:
            first = errors[0]
            where = "$" + "".join(f"[{p!r}]" if isinstance(p, int) else f".{p}"
                                  for p in first.absolute_path)
            return refuse(f"invalid arguments for {call.tool}: {first.message} @ {where}")
        return declaration, None

    def _allow_list(self, tool: str) -> Verdict | None:
        """A deny when the profile's ``tools`` allow-list does not name ``tool``."""
        profile = self.kernel.profile
        if profile.allows(tool):
            return None
        return Verdict(decision="deny", policy="allow-list", reason=(
            f"{tool} is not in the tool allow-list of profile {profile.name!r} "
            f"({profile.describe_tools()}); only the profile can allow it"))

    @staticmethod
    def _mode_gate(declaration: ToolDeclaration, mode: str) -> Verdict:
        def v(decision: str, reason: str) -> Verdict:
            return Verdict(decision=decision, reason=reason, policy="mode")  # type: ignore[arg-type]

        if mode in ("off", "listen-only"):
            return v("deny", f"the operator is {mode}: it never plans or runs anything")
        if mode == "propose-only":
            return v("deny", "propose-only: steps are shown, never run")
        if mode == "execute-auto":
            return v("allow", "execute-auto")
        if mode == "execute-with-confirmation":
            if is_write(declaration) or declaration.safety.network:
                return v("ask", f"{declaration.name} has effects: confirm it")
            return v("allow", "read-only steps run without a prompt")
        return v("deny", f"unknown mode {mode!r}")

    async def _policies(
        self, call: ToolCall, declaration: ToolDeclaration, ctx: ToolContext, mode: str,
        grants: tuple[str, ...], history: tuple[ToolCall, ...],
    ) -> list[Verdict]:
        request = PolicyRequest(
            call=call, declaration=declaration, mode=mode, cwd=ctx.cwd,  # type: ignore[arg-type]
            cages=ctx.cages, grants=grants, history=history,
            home=ctx.home or self.kernel.env.get("HOME") or str(Path.home()),
            data_home=ctx.data_home or str(self.kernel.home),
        )
        verdicts: list[Verdict] = []
        for name, policy in self.kernel.policies.items():
            try:
                verdict = await policy.evaluate(request)
                if not isinstance(verdict, Verdict):
                    raise TypeError(f"returned {type(verdict).__name__}, not Verdict")
            except Exception as exc:  # an unreadable policy denies
                verdict = Verdict(decision="deny", policy=name,
                                  reason=f"policy failed: {type(exc).__name__}: {exc}")
            verdicts.append(verdict if verdict.policy else Verdict(
                decision=verdict.decision, reason=verdict.reason, policy=name))
        verdicts += self.kernel.pre_tool_use(call, declaration, mode)
        if all(v.decision == "abstain" for v in verdicts):
            # no policy at all, or none with an opinion: ask (abstentions stay in the log)
            return [*verdicts, combine(verdicts)]
        return verdicts

    async def _proposed(self, step: CheckedStep, ctx: ToolContext) -> CheckedStep:
        """Propose-only runs nothing, but a dry-run has no effect: show what the step
        would do and what the pipeline would decide one mode up (the policies' own
        verdicts, the write gate, the preview itself). The step stays denied."""
        assert step.declaration is not None
        gate = self._mode_gate(step.declaration, "execute-with-confirmation")
        would = combine([gate, *(v for v in step.verdicts if v.policy != "mode")])
        if would.decision == "deny":
            return replace(step, would=would)
        tried = await self._dry_run(replace(step, verdict=would), ctx)
        if tried.denied:  # the preview itself failed: say what, once
            failed = tried.preview.stderr.strip() if tried.preview else tried.verdict.reason
            would = Verdict(decision="deny", policy=step.call.tool,
                            reason=f"its preview fails: {failed or 'no reason given'}")
            return replace(step, preview=tried.preview, would=would)
        return replace(step, preview=tried.preview, digest=tried.digest, would=would)

    async def _dry_run(self, step: CheckedStep, ctx: ToolContext) -> CheckedStep:
        tool = self.kernel.tools[step.call.tool]
        try:
            preview = await tool.dry_run(step.call, ctx)
        except Exception as exc:
            deny = Verdict(decision="deny", policy=step.call.tool,  # the tool's own refusal
                           reason=f"its dry-run failed: {type(exc).__name__}: {exc}")
            return replace(step, verdict=deny, verdicts=(*step.verdicts, deny))
        if preview.status not in ("dry_run", "ok"):
            why = preview.stderr.strip() or preview.status
            deny = Verdict(decision="deny", policy=step.call.tool,
                           reason=f"its dry-run refused: {why}")
            return replace(step, verdict=deny, verdicts=(*step.verdicts, deny),
                                preview=preview)
        return replace(step, preview=preview, digest=preview_hash(preview))

    # -- step 6-7 -------------------------------------------------------------------------

    async def execute(
        self, step: CheckedStep, *, ctx: ToolContext, mode: str, run_id: str,
        token: str | None = None,
    ) -> ExecutionResult:
        """Run a checked step. Raises `StepChangedError` when the preview moved on."""
        if step.denied or step.declaration is None or step.digest is None:
            raise PermissionError(f"step {step.index} was denied: {step.verdict.reason}")
        tool = self.kernel.tools[step.call.tool]
        fresh = await tool.dry_run(step.call, ctx)
        if preview_hash(fresh) != step.digest:
            await self.log.record(ChangedRecord(
                run_id=run_id, step=step.index, tool=step.call.tool,
                was=step.preview.dry_run_diff if step.preview else None,
                now=fresh.dry_run_diff))
            raise StepChangedError(f"the effect of step {step.index} ({step.call.tool}) "
                                   "changed since it was previewed; it must be approved again")
        # The runtime pre-tool check: no frontend shortcut can skip it.
        # (the allow-list again: the profile may have been switched since the check)
        listed = self._allow_list(step.call.tool)
        runtime = combine([step.verdict, *([listed] if listed else []),
                           *self.kernel.pre_tool_use(step.call, step.declaration, mode)])
        approved = self.approvals.valid(token, run_id, step.index, step.digest)
        if runtime.decision == "deny" or (runtime.decision == "ask" and not approved):
            reason = runtime.reason if runtime.decision == "deny" else "no valid approval"
            await self.log.record(RefusedRecord(run_id=run_id, step=step.index,
                                                tool=step.call.tool, reason=reason,
                                                policy=runtime.policy))
            raise PermissionError(f"step {step.index} ({step.call.tool}) not run: {reason}")
        call = ToolCall(tool=step.call.tool, args=step.call.args, dry_run=False,
                        explain=step.call.explain)
        await self.log.record(ToolCallRecord(run_id=run_id, step=step.index, tool=call.tool,
                                             args=call.args, cwd=ctx.cwd, digest=step.digest,
                                             approved=approved))
        started = time.perf_counter()
        try:
            result: ExecutionResult = await tool.execute(call, ctx)
        except Exception as exc:
            result = ExecutionResult(tool=call.tool, args=call.args, status="error",
                                     stderr=f"{type(exc).__name__}: {exc}")
        elapsed = int((time.perf_counter() - started) * 1000)
        if not result.duration_ms:
            result = msgspec.structs.replace(result, duration_ms=elapsed)
        self.log.defer(ResultRecord(
            run_id=run_id, step=step.index, tool=result.tool, args=result.args,
            status=result.status, dry_run_diff=result.dry_run_diff, stdout=result.stdout,
            stderr=result.stderr, duration_ms=result.duration_ms,
            artifacts=list(result.artifacts)))
        return result
