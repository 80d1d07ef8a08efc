"""The operator: mode ladder, request → context → model → plan → consent → execution.

`Copilot` is long-lived and may serve several frontends at once (``adjutant mcp
serve``'s clients, a web dock beside a voice frontend). It keeps what outlives a run —
the mode, grants and preset (`OperatorState`), the workspace (`Workspace`), how it
asks its model (`Prompting`), the pipeline and `Execution` — and nothing of any one
run: each request is a `Run` (its ids, thread, mode, context, grants, approval tokens
and cancel scope), on the bus as AG-UI events and in the action log (every attempt,
decision, approval and effect).
"""

from __future__ import annotations

import os
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import msgspec

from adjutant_hookspecs import (
    MODES,
    ActivitySnapshot,
    CompletionRequest,
    ContextBulletin,
    ContractError,
    Custom,
    PatchOp,
    Plan,
    ProviderError,
    Response,
    RunError,
    RunFinished,
    RunStarted,
    StateDelta,
    StateSnapshot,
    ToolCall,
    to_builtins,
)
from adjutant_hookspecs.records import (
    AssignmentRecord,
    AttemptRecord,
    BundleRecord,
    CageChangedRecord,
    ContextRecord,
    DecisionRecord,
    DirectCallRecord,
    EventRecord,
    OutcomeRecord,
    PlanRecord,
    PromptRecord,
    ReplayRecord,
    ResponseRecord,
    ToolCallRecord,
)

from ..safety._cages import CageChangedError
from ._actionlog import ActionLog, ActionLogError, disk_full
from ._artifacts import write_artifact, write_bundle
from ._clauses import clauses, one_ask, refers_back
from ._consent import Approver, PlanPacket, StepDecision, StepPacket
from ._context import Workspace
from ._edits import NOTHING_CHANGED, patches_here
from ._execution import Execution
from ._grammar import MAX_STEPS
from ._pipeline import Pipeline
from ._prompting import Prompting
from ._replies import parse_reply
from ._routing import BudgetExceeded, Routing
from ._run import OnEvent, Run, RunOutcome, also_to
from ._sessions import SessionStore
from ._state import Channel, OperatorState, key_value_store
from ._stated import settled_values
from ._unsaid import unmade_dropped
from ._values import joined
from ._words import carried_patch
from .planner import Planner, bad_request

if TYPE_CHECKING:
    from adjutant_hookspecs import Kernel

    from ..providers._router import Route


__all__ = ["MODES", "Approver", "Copilot", "PlanPacket", "RunOutcome", "StepDecision",
           "StepPacket"]

Body = Callable[[Run], Awaitable[RunOutcome]]


class Copilot:
    """The long-lived operator of one kernel.

    :param approver: Where consent comes from (a frontend); default: refuse. A run may
        name its own (``handle(..., approver=...)``): frontends sharing one operator
        each answer for their own runs.
    :param cwd: Working directory of tool calls; writable cages come from the profile.
    """

    def __init__(
        self, kernel: Kernel, *, approver: Approver | None = None, cwd: str | None = None,
        max_steps: int = 20, max_attempts: int = 3, idle_downgrade_s: float = 900.0,
        clock: Callable[[], float] = time.monotonic, wall: Callable[[], float] = time.time,
    ) -> None:
        self.kernel = kernel
        self.approver = approver or Approver()
        self.max_attempts = max_attempts
        self.log = ActionLog(kernel.stores, lambda: kernel.profile.stores.get("log"))
        self.pipeline = Pipeline(kernel, self.log)
        self.operator_state = OperatorState(kernel, self.log, self._delta,
                                      idle_downgrade_s=idle_downgrade_s, clock=clock,
                                      wall=wall)
        # The active project: given, or $ADJUTANT_WORKSPACE, or where Adjutant was started.
        self.workspace = Workspace(kernel, self.log,
                                   cwd or kernel.env.get("ADJUTANT_WORKSPACE") or os.getcwd())
        self.prompting = Prompting(kernel, self.log, self.workspace.prompt_files)
        self.routing = Routing(kernel, self.log)
        #: Plan a request of several steps ("do X and then Y") clause by clause
        #: (`planner.clauses`): True always, False never, None (the default) where the
        #: provider scores continuations, the small local models the planner drives step
        #: by step (a larger model writes every step itself). bench/planning.py
        #: measures it against False.
        self.split_steps: bool | None = None
        #: Stated values into unset arguments (`with_stated_values`); off to measure it.
        self.fill_stated = True
        self.execution = Execution(kernel, self.pipeline, self._delta, max_steps=max_steps,
                                   live_grants=lambda: self.grants)
        #: The runs in progress, by id (each owns its state; this only finds them).
        self.runs: dict[str, Run] = {}
        self._threads: dict[str, None] = {}  # the sessions served, in order of first use

    # -- settings that read through to their owners ----------------------------------------

    @property
    def cwd(self) -> str:
        return self.workspace.cwd

    @cwd.setter
    def cwd(self, value: str) -> None:
        self.workspace.cwd = value

    @property
    def max_steps(self) -> int:
        return self.execution.max_steps

    @max_steps.setter
    def max_steps(self, value: int) -> None:
        self.execution.max_steps = value

    @property
    def idle_downgrade_s(self) -> float:
        return self.operator_state.idle_downgrade_s

    @idle_downgrade_s.setter
    def idle_downgrade_s(self, value: float) -> None:
        self.operator_state.idle_downgrade_s = value

    @property
    def first_choice(self) -> str:
        """How a plan's first step is chosen (`Prompting.first_choice`)."""
        return self.prompting.first_choice

    @first_choice.setter
    def first_choice(self, value: str) -> None:
        self.prompting.first_choice = value

    @property
    def scratch(self) -> str:
        """The per-user scratch directory (a default cage): ``$XDG_CACHE_HOME/adjutant/scratch``."""
        return self.workspace.scratch

    # -- mode, grants, preset ------------------------------------------------------------

    async def mode(self) -> str:
        """The current mode, as stored (default propose-only)."""
        return await self.operator_state.mode()

    async def set_mode(self, mode: str, *, channel: Channel) -> bool:
        """Switch modes. Only the user channel may; anything else is logged and ignored."""
        return await self.operator_state.set_mode(mode, channel=channel)

    @property
    def grants(self) -> list[str]:
        """Grants still in force (``write``, ``network:<tool>``, ``cage:<dir>``)."""
        return self.operator_state.grants

    async def grant(self, grant: str, *, seconds: float, channel: Channel) -> bool:
        """A time-boxed grant for this session, from the user only."""
        return await self.operator_state.grant(grant, seconds=seconds, channel=channel)

    async def revoke(self, grant: str) -> None:
        await self.operator_state.revoke(grant)

    async def use_preset(self, profile: Any) -> None:
        """Switch the model preset; the next request uses it, no restart. Persisted."""
        await self.operator_state.use_preset(profile)

    def state(self) -> dict[str, Any]:
        """What frontends show: mode, preset, working directory, live grants."""
        return {"mode": self.operator_state.current, "preset": self.kernel.profile.name,
                "cwd": self.cwd, "grants": self.grants, "plan": None}

    def _served(self) -> list[str]:
        return list(self._threads) or ["default"]

    async def _delta(self, ops: list[dict[str, Any]], run: Run | None = None) -> None:
        """Publish a state change and keep the sessions in step with it: a run's own
        (its plan) on its thread; the operator's (mode, grants, preset) on every
        thread it serves."""
        delta = StateDelta(delta=tuple(msgspec.convert(op, PatchOp, from_attributes=False)
                                       for op in ops))
        kv = key_value_store(self.kernel)
        for thread in [run.thread_id] if run is not None else self._served():
            self.kernel.bus.publish(delta, run_id=run.run_id if run else None, thread_id=thread)
            if kv is not None and await kv.get(f"session/{thread}/snapshot") is not None:
                await SessionStore(kv).apply(thread, ops)

    # -- cancellation ----------------------------------------------------------------------

    def cancel(self, run_id: str | None = None, *, thread_id: str | None = None) -> None:
        """Interrupt generation or cancel the plan (between or during steps) of run
        ``run_id``, or of every run on ``thread_id``; with neither, of every run in
        progress (what Ctrl-C means to a frontend that runs one at a time)."""
        for run in list(self.runs.values()):
            if (run_id is None or run.run_id == run_id) and \
                    (thread_id is None or run.thread_id == thread_id):
                run.cancel()

    # -- requests --------------------------------------------------------------------------

    async def handle(self, prompt: str, *, thread_id: str | None = None,
                     include: Sequence[str] = (), approver: Approver | None = None,
                     on_event: OnEvent | None = None) -> RunOutcome:
        """Answer one user request: a response, a proposal, or an executed plan.

        ``include``: files the user agreed to add to this request's context (see
        `mentioned_files`); they join the bulletin's ``selected_files``. ``approver``:
        who answers this run's questions (default: the operator's). ``on_event``:
        called with each of this run's events (`Envelope`), in order, as it is
        published, from ``RUN_STARTED`` to ``RUN_FINISHED``/``RUN_ERROR``; keep it
        quick (hand slow work to a stream). An exception in it is logged, never
        raised into the run."""

        async def body(run: Run) -> RunOutcome:
            await self.log.record(PromptRecord(run_id=run.run_id, text=prompt, mode=run.mode,
                                               thread_id=thread_id, include=list(include)))
            return await self._answer(prompt, run, include, approver or self.approver)

        return await self._in_run({"prompt": prompt}, thread_id, body, on_event=on_event)

    async def stronger(self, run_id: str | None = None, *, approver: Approver | None = None,
                       on_event: OnEvent | None = None) -> RunOutcome:
        """"Try a stronger model": the request of ``run_id`` (default: the last one) again,
        on the next preset up from the one that answered it, in the same thread, logged
        under the first run's id as its ask. Its cost estimate is asked about first where
        it is metered (outside the auto mode). `LookupError` when there is no such run
        or no stronger preset."""
        first, prompt, thread_id, target = await self.stronger_target(run_id)
        ask: tuple[str, str] = (target, first)

        async def body(run: Run) -> RunOutcome:
            await self.log.record(PromptRecord(run_id=run.run_id, text=prompt, mode=run.mode,
                                               thread_id=thread_id, include=[]))
            return await self._answer(prompt, run, (), approver or self.approver,
                                      stronger=ask)

        return await self._in_run({"prompt": prompt, "stronger": target}, thread_id, body,
                                  on_event=on_event)

    async def stronger_target(self, run_id: str | None = None
                              ) -> tuple[str, str, str | None, str]:
        """For `stronger`: the run asked again (id, request, thread) and the preset it
        goes to. `LookupError` says why there is none."""
        return await self.routing.stronger_target(run_id)

    async def notice(self, text: str, *, source: str = "system") -> None:
        """A system event (a failed build, a finished download): recorded and shown in
        every mode, including listen-only, on every thread served. It is context, never
        an instruction."""
        await self.log.record(EventRecord(source=source, text=text))
        for thread in self._served():
            self.kernel.bus.publish(Custom(name="copilot.event", value={"source": source,
                                                                        "text": text}),
                                    thread_id=thread)

    async def assign(self, task: str, *, assigned_by: str,
                     thread_id: str | None = None) -> RunOutcome:
        """A task handed over by another agent or a schedule: handled like a prompt,
        under the same mode and approvals, with who assigned it in the log."""
        await self.log.record(AssignmentRecord(assigned_by=assigned_by, text=task))
        return await self.handle(task, thread_id=thread_id)

    async def call(self, call: ToolCall, *, caller: str, thread_id: str | None = None,
                   by_user: bool = True, approver: Approver | None = None,
                   on_event: OnEvent | None = None) -> RunOutcome:
        """One tool call asked for directly (an MCP client, an embedding app), not
        planned by the model: a one-step run through the whole pipeline, under the
        mode, with the approvals it needs and who asked in the log.

        ``by_user=False`` for callers that are not the user at a keyboard (another
        agent over MCP): their calls do not keep ``execute-auto`` from expiring.
        ``on_event``: as for `handle`."""

        async def body(run: Run) -> RunOutcome:
            await self.log.record(DirectCallRecord(run_id=run.run_id, caller=caller,
                                                   tool=call.tool, args=call.args,
                                                   mode=run.mode))
            return await self._carry_out(Plan(steps=(call,)), run, approver or self.approver)

        return await self._in_run({"call": call.tool, "caller": caller}, thread_id, body,
                                  by_user=by_user, on_event=on_event)

    async def replay(self, run_id: str, step: int, *, dry_run: bool = True,
                     thread_id: str | None = None) -> RunOutcome:
        """Run a logged step again (as a new run, through the whole pipeline), or only
        dry-run it to see what it would do now."""
        source = [r for r in await self.log.read(run_id=run_id)
                  if isinstance(r, ToolCallRecord | DecisionRecord) and r.step == step]
        if not source:
            raise LookupError(f"run {run_id} has no step {step} in the action log")
        call = ToolCall(tool=source[-1].tool, args=source[-1].args,
                        explain=f"replay of run {run_id} step {step}")

        async def body(run: Run) -> RunOutcome:
            await self.log.record(ReplayRecord(run_id=run.run_id, source_run=run_id,
                                               source_step=step, dry_run=dry_run,
                                               tool=call.tool, args=call.args))
            if not dry_run:
                return await self._carry_out(Plan(steps=(call,)), run, self.approver)
            checked = await self.pipeline.check(
                0, call, ctx=self.workspace.tool_context(run.run_id, self.grants),
                mode=run.mode, grants=tuple(self.grants), run_id=run.run_id, stage="plan")
            text = checked.preview.dry_run_diff if checked.preview else checked.verdict.reason
            return RunOutcome(run.run_id, "proposed", text=text or "",
                              plan=Plan(steps=(call,)))

        return await self._in_run({"replay": run_id, "step": step}, thread_id, body)

    async def export_bundle(self, dest: Any, *, run_id: str | None = None) -> Any:
        """Write a bug bundle (log slice, settings, versions, artifacts; secrets
        redacted) to ``dest`` (a .tar.gz path) and return the path."""
        records = await self.log.records(run_id=run_id)
        run_ids = {run_id} if run_id else {r["run_id"] for r in records if r.get("run_id")}
        versions = {p.distribution or p.name: p.version or "?" for p in self.kernel.plugins
                    if p.status == "loaded"}
        path = write_bundle(Path(dest), home=self.kernel.home, records=records,
                            profile=self.kernel.profile.as_dict(),
                            versions=versions,
                            run_ids=run_ids)
        await self.log.record(BundleRecord(run_id=run_id, path=str(path)))
        return path

    # -- the frame of every run ------------------------------------------------------------

    async def _in_run(self, run_input: dict[str, Any], thread_id: str | None, body: Body,
                      *, by_user: bool = True, on_event: OnEvent | None = None) -> RunOutcome:
        """Lifecycle events, session, cancellation, outcome."""
        if by_user:  # the user is here: execute-auto's idle clock starts again
            self.operator_state.user_is_here()
        thread = thread_id or "default"
        self._threads.setdefault(thread, None)
        publish = self.kernel.bus.publish if on_event is None else also_to(
            self.kernel.bus.publish, on_event)
        run = Run(thread_id=thread, input=run_input, bus_publish=publish)
        run.mode = await self.mode()
        run.publish(RunStarted(input=run_input))
        snapshot = self.state()
        run.publish(StateSnapshot(snapshot=snapshot))
        if (kv := key_value_store(self.kernel)) is not None:
            try:
                await SessionStore(kv).start(thread, snapshot)
            except Exception as exc:  # a full disk: nothing has run yet
                raise ActionLogError.wrap(exc, what="the data home") from exc
        outcome = RunOutcome(run.run_id, "failed")
        self.runs[run.run_id] = run
        try:
            with anyio.CancelScope() as scope:
                run.scope = scope
                if run.cancelled:  # cancelled before it began
                    scope.cancel()
                outcome = await self._guarded(run, body)
        finally:
            run.scope = None
            del self.runs[run.run_id]
        if scope.cancelled_caught:
            outcome = RunOutcome(run.run_id, "cancelled", results=outcome.results,
                                 error="cancelled by the user")
        await self.log.record(OutcomeRecord(run_id=run.run_id, status=outcome.status,
                                            error=outcome.error))
        if outcome.status in ("failed", "aborted", "cancelled") and outcome.error:
            run.publish(RunError(message=outcome.error, code=outcome.status))
        else:
            run.publish(RunFinished(result={"status": outcome.status, "text": outcome.text}))
        return outcome

    async def _guarded(self, run: Run, body: Body) -> RunOutcome:
        """The run's body, with what it may fail of turned into its outcome; an
        unwritable log (or data home) ends it with an error, since nothing may run
        unrecorded (with no outcome record, the next start closes it as interrupted)."""
        try:
            await self.check_cages()
            return await body(run)
        except CageChangedError as exc:  # nothing is read or run in a swapped cage
            await self.log.record(CageChangedRecord(run_id=run.run_id, path=exc.path,
                                                    error=str(exc), input=run.input))
            return RunOutcome(run.run_id, "denied", error=str(exc))
        except ActionLogError as exc:
            run.publish(RunError(message=str(exc), code="log"))
            raise
        except Exception as exc:  # a dead backend, a bug: say so, keep the log
            if disk_full(exc):  # the data home is full (a pin, the plan's artifact),
                error = ActionLogError.wrap(exc, what="the data home")  # before any step
                run.publish(RunError(message=str(error), code="log"))
                raise error from exc
            return RunOutcome(run.run_id, "failed", error=f"{type(exc).__name__}: {exc}")

    async def _answer(self, prompt: str, run: Run, include: Sequence[str],
                      approver: Approver, stronger: tuple[str, str] | None = None
                      ) -> RunOutcome:
        """Context, the model's reply (retried when malformed), then its plan."""
        run_id = run.run_id
        if run.mode in ("off", "listen-only"):
            return RunOutcome(run_id, "ignored", text=f"the operator is {run.mode}")
        if refusal := bad_request(prompt):  # before any model: empty, or far too long
            await self.log.record(ResponseRecord(run_id=run_id, text=refusal))
            return RunOutcome(run_id, "answered", text=refusal)
        bulletin = await self.prompting.while_preparing(  # the model loads meanwhile
            self.workspace.bulletin(prompt, run.thread_id))
        if include:
            # each through the same check as the selection (`Workspace.admitted`)
            chosen = tuple(dict.fromkeys((*bulletin.selected_files,
                                          *self.workspace.admitted(include))))
            bulletin = msgspec.structs.replace(bulletin, selected_files=chosen)
        run.bulletin = bulletin
        run.publish(ActivitySnapshot(message_id=f"{run_id}-context", activity_type="context",
                                     content=to_builtins(bulletin)))
        await self.log.record(ContextRecord(run_id=run_id, bulletin=to_builtins(bulletin)))
        routed = await self.routing.choose(prompt, bulletin, len(self.offered_tools()), run,
                                           approver, stronger)
        if stronger is not None and not routed.escalated:  # asked about, and declined
            return RunOutcome(run_id, "denied", error=f"not sent to {stronger[0]}: "
                              f"{routed.reason}")
        replies = await self._plan_clauses(prompt, bulletin, run, routed)
        if isinstance(replies, RunOutcome):
            return replies
        reply = joined(replies, prompt, {n: t.declaration for n, t in
                                         self.offered_tools().items()})
        if isinstance(reply, Plan) and len(replies) > 1 and not carried_patch(prompt):
            reply = patches_here(reply, self.cwd, prompt)  # a made-up diff of no file here
        if isinstance(reply, Plan):  # a file to commit that nothing here or before makes
            reply = unmade_dropped(reply, prompt, {n: t.declaration for n, t in
                                                   self.offered_tools().items()}, self.cwd)
        if isinstance(reply, Response):
            await self.log.record(ResponseRecord(run_id=run_id, text=reply.text))
            return RunOutcome(run_id, "answered", text=reply.text)
        plan_file = write_artifact(self.kernel.home, run_id, "plan.json", to_builtins(reply))
        await self.log.record(PlanRecord(run_id=run_id,
                                         steps=[to_builtins(s) for s in reply.steps],
                                         artifact=str(plan_file)))
        run.mode = await self.mode()  # a downgrade while the model wrote holds
        return await self._carry_out(reply, run, approver)

    async def _plan_clauses(self, prompt: str, bulletin: ContextBulletin, run: Run,
                            routed: Route) -> list[Plan | Response] | RunOutcome:
        """The model's reply to each clause of a request of several steps, in order, a
        step each, "it" the path of the step before (`refers_back`). A clause the model
        cannot plan at all: the request is planned as a whole instead."""
        split = self.split_steps if self.split_steps is not None else \
            getattr(self._provider(routed.preset), "score", None) is not None
        parts = clauses(prompt) if split else [prompt]
        replies: list[Plan | Response] = []
        # a step a clause, and one for a request of one ask; a larger model plans whole
        most = 1 if len(parts) > 1 or (split and one_ask(prompt)) else MAX_STEPS
        for number, part in enumerate(parts):
            part = refers_back(part, replies[-1], self.cwd, parts[number - 1]) if replies \
                else part
            got = await self._reply(part, bulletin, run, routed,
                                    number * self.max_attempts + 1, most=most)
            if isinstance(got, RunOutcome):
                if got.status != "failed" or len(parts) == 1:
                    return got
                whole = await self._reply(prompt, bulletin, run, routed,
                                          first_attempt=len(parts) * self.max_attempts + 1)
                return whole if isinstance(whole, RunOutcome) else [whole]
            if isinstance(got, Response) and got.text.startswith(NOTHING_CHANGED):
                return [got]  # an edit that cannot be made: no step after it either
            replies.append(got)
        return replies

    async def _reply(self, prompt: str, bulletin: ContextBulletin, run: Run, routed: Route,
                     first_attempt: int = 1, most: int = MAX_STEPS,
                     ) -> Plan | Response | RunOutcome:
        """The model's reply to ``prompt`` (a request, or one clause of one), retried
        with a simpler prompt when malformed; a `RunOutcome` when it cannot be had."""
        run_id = run.run_id
        error = ""
        for attempt in range(first_attempt, first_attempt + self.max_attempts):
            simplified = attempt > first_attempt
            menu: list[str] = []
            try:
                request, menu = self._request(prompt, bulletin, simplified, error,
                                              preset=routed.preset, most=most)
                provider = self._provider(routed.preset)
                held = await self.routing.check(routed, request, run)
                async with self.routing.holding(held) as hold:
                    chosen = await self.prompting.choose(
                        request, menu, prompt, self.cwd, provider, most=most, retry=simplified)
                    hold.sent = True
                    request, text = await self.prompting.reply(
                        chosen, request, menu, prompt, self.cwd, provider, run, attempt, most)
                await self.routing.spent(routed, request, text, run.usage, run, held)
            except BudgetExceeded as exc:
                return RunOutcome(run_id, "denied", error=str(exc))
            except ProviderError as exc:
                await self.log.record(AttemptRecord(run_id=run_id, attempt=attempt, ok=False,
                                                    simplified=simplified, error=str(exc),
                                                    menu=menu))
                return RunOutcome(run_id, "failed", error=f"the model provider failed: {exc}")
            try:
                reply = parse_reply(text)
            except ContractError as exc:
                error = str(exc)
                await self.log.record(AttemptRecord(run_id=run_id, attempt=attempt, ok=False,
                                                    simplified=simplified, error=error,
                                                    output=text[:4096], menu=menu))
                run.publish(ActivitySnapshot(message_id=f"{run_id}-attempt-{attempt}",
                                             activity_type="malformed-plan",
                                             content={"attempt": attempt, "error": error}))
                continue
            await self.log.record(AttemptRecord(run_id=run_id, attempt=attempt, ok=True,
                                                simplified=simplified, menu=menu))
            if isinstance(reply, Plan):  # no value from an example, every one stated
                tools = {n: t.declaration for n, t in self.offered_tools().items()}
                reply = settled_values(reply, prompt, f"{request.system}\n{request.prompt}",
                                       tools, self.cwd, fill=self.fill_stated,
                                       patch=self.prompting.patch_for(prompt, self.cwd))
            return reply
        return RunOutcome(run_id, "failed", error=f"the model gave no valid plan in "
                          f"{self.max_attempts} attempts; last error: {error}")

    async def _carry_out(self, plan: Plan, run: Run, approver: Approver) -> RunOutcome:
        """The plan under the grants in force now, fixed for all its steps."""
        run.grants = tuple(self.grants)
        run.ctx = self.workspace.tool_context(run.run_id, run.grants)
        return await self.execution.carry_out(plan, run, approver)

    # -- context ---------------------------------------------------------------------------

    def mentioned_files(self, prompt: str, bulletin: ContextBulletin | None = None,
                        limit: int = 5) -> list[str]:
        """Files the request names that exist under the working directory and are not
        in the context yet: what a frontend offers to include ("Include these 2 files?")."""
        return self.workspace.mentioned_files(prompt, bulletin, limit)

    async def bulletin(self) -> ContextBulletin:
        """The context bulletin a request would use now (what ``adjutant context`` shows).
        Raises `CageChangedError` when a cage root is not the directory pinned."""
        await self.check_cages()
        return await self.workspace.bulletin()

    async def check_cages(self) -> None:
        """Refuse (`CageChangedError`) when the workspace or another cage root no longer
        resolves to the device and inode pinned the first time; pin new ones."""
        await self.workspace.check_cages(self.grants)

    def offered_tools(self) -> dict[str, Any]:
        """The tools the profile's ``tools`` globs allow: what the planner may use and
        what ``adjutant mcp serve`` offers."""
        return self.prompting.offered_tools()

    # -- seams a subclass or a test may use (the planning benchmark overrides them) ----

    def key_values(self) -> Any:
        """The key-value store the operator keeps its state in (the profile's)."""
        return key_value_store(self.kernel)

    def tool_context(self, run_id: str) -> Any:
        """The context a tool of this run gets: cwd, cages with live grants, limits."""
        return self.workspace.tool_context(run_id, self.grants)

    def _planner(self) -> Planner:
        return self.prompting.planner()

    def _provider(self, preset: Any = None) -> Any:
        return self.prompting.provider(preset)

    def _request(self, prompt: str, bulletin: ContextBulletin, simplified: bool, error: str,
                 preset: Any = None, most: int = MAX_STEPS) -> tuple[CompletionRequest, list[str]]:
        return self.prompting.request(prompt, bulletin, simplified, error, self.cwd,
                                      self._provider(preset), preset, most=most)
