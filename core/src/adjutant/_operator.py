"""The operator: mode ladder, request → context → model → plan → consent → execution.

`Copilot` is long-lived. Only the user channel changes its mode (model output never
can; an attempt is logged and ignored), the mode persists in the key/value store,
and execute-auto falls back to propose-only after an idle time. Every request is a
run on the bus (AG-UI events) and in the action log (every attempt, decision,
approval and effect).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import time
import uuid
from collections.abc import Callable, Sequence
from contextlib import aclosing
from typing import Any, Literal

import attrs
import msgspec

from adjutant_hookspecs import (
    ActivitySnapshot,
    CompletionRequest,
    ContextBulletin,
    ContractError,
    Custom,
    ExecutionResult,
    PatchOp,
    Plan,
    ProviderError,
    Response,
    RunError,
    RunFinished,
    RunStarted,
    StateDelta,
    StateSnapshot,
    TextMessageContent,
    TextMessageEnd,
    TextMessageStart,
    ToolCall,
    ToolCallArgs,
    ToolCallEnd,
    ToolCallResult,
    ToolCallStart,
    ToolContext,
    convert,
    to_builtins,
)

from ._actionlog import ActionLog, ActionLogError, disk_full
from ._approval_events import approval_decided, approval_requested, step_denied, tool_call_id
from ._artifacts import write_artifact, write_bundle
from ._cages import CageChangedError, check_roots
from ._consent import Approver, PlanPacket, StepDecision, StepPacket
from ._pipeline import CheckedStep, Pipeline, StepChangedError, shown
from ._replies import parse_reply
from ._sessions import SessionStore
from .planner import END, Planner, bad_request, named_paths, workspace_paths
from .providers import capabilities_of

__all__ = ["MODES", "Approver", "Copilot", "PlanPacket", "RunOutcome", "StepDecision",
           "StepPacket"]

Mode = Literal["off", "listen-only", "propose-only", "execute-with-confirmation", "execute-auto"]
MODES: tuple[str, ...] = ("off", "listen-only", "propose-only", "execute-with-confirmation",
                          "execute-auto")
MODE_KEY = "operator/mode"
GRANTS_KEY = "operator/grants"
PRESET_KEY = "operator/preset"
#: ``network:<tool>``, or ``network:<prefix>.*`` for every tool under a prefix.
GRANT = re.compile(r"^(write|network:[a-z0-9_]+(\.[a-z0-9_]+)*(\.\*)?|cage:/.*)$")


@attrs.define
class RunOutcome:
    """How a run ended. ``executed``: at least one step ran (each result says how it
    went); ``denied``: none ran, each refused by a policy or not approved."""

    run_id: str
    status: Literal["answered", "proposed", "executed", "denied", "paused", "aborted",
                    "failed", "ignored", "cancelled"]
    text: str = ""
    plan: Plan | None = None
    results: list[ExecutionResult] = attrs.Factory(list)
    error: str | None = None
    #: A proposed plan's steps as shown: each packet (arguments, preview) and what the
    #: pipeline would decide outside propose-only (``would``: decision and reason).
    proposal: list[dict[str, Any]] = attrs.Factory(list)


class Copilot:
    """The long-lived operator of one kernel.

    :param approver: Where consent comes from (a frontend); default: refuse.
    :param cwd: Working directory of tool calls; writable cages come from the profile.
    """

    def __init__(
        self, kernel: Any, *, approver: Approver | None = None, cwd: str | None = None,
        max_steps: int = 20, max_attempts: int = 3, idle_downgrade_s: float = 900.0,
        clock: Callable[[], float] = time.monotonic, wall: Callable[[], float] = time.time,
    ) -> None:
        self.kernel = kernel
        self.approver = approver or Approver()
        # The active project: given, or $ADJUTANT_WORKSPACE, or where Adjutant was started.
        self.cwd = cwd or kernel.env.get("ADJUTANT_WORKSPACE") or os.getcwd()
        self.max_steps = max_steps
        self.max_attempts = max_attempts
        self.idle_downgrade_s = idle_downgrade_s
        self._grants: dict[str, float] = {}  # grant -> expiry (wall clock)
        self.log = ActionLog(kernel.stores)
        self.pipeline = Pipeline(kernel, self.log)
        self._clock = clock
        self._wall = wall
        self._thread = "default"
        self._last_user = clock()
        self._mode: str | None = None
        self._cancel: Any = None
        #: How a plan's first step is chosen where the provider can score continuations:
        #: "calibrated" (its likelihood against a content-free request's), "scored"
        #: (its likelihood alone) or "free" (the constrained decoding alone).
        self.first_choice = "calibrated"
        self._priors: dict[Any, list[float]] = {}

    # -- mode -----------------------------------------------------------------------------

    def _kv(self) -> Any:
        kvs = [obj for key, obj in self.kernel.stores.items() if key.startswith("kv:")]
        durable = [obj for obj in kvs if obj.name != "memory"]
        return (durable or kvs or [None])[0]

    async def _load_state(self) -> None:
        """Mode, grants and preset as persisted (once; defaults: propose-only, none)."""
        kv = self._kv()
        raw = await kv.get(MODE_KEY) if kv is not None else None
        self._mode = raw.decode() if raw and raw.decode() in MODES else "propose-only"
        if kv is None:
            return
        if (grants := await kv.get(GRANTS_KEY)) is not None:
            self._grants = {k: float(v) for k, v in msgspec.json.decode(grants).items()}
        if (preset := await kv.get(PRESET_KEY)) is not None:
            from ._settings import ProfileError, load_profile

            try:
                self.kernel.profile = load_profile(self.kernel.home, preset.decode())
            except ProfileError as exc:  # keep going on the default, and say why
                await self.log.record("preset_unavailable", name=preset.decode(),
                                      error=str(exc))

    async def _sync(self) -> None:
        """Mode and grants as stored now: the user may have changed them from another
        process (`adjutant mode` or `adjutant grant` beside a long `chat` or `mcp serve`),
        and a downgrade or a revocation must hold at once."""
        kv = self._kv()
        if kv is None:
            return
        raw = await kv.get(MODE_KEY)
        if raw is not None and raw.decode() in MODES:
            self._mode = raw.decode()
        grants = await kv.get(GRANTS_KEY)
        self._grants = ({k: float(v) for k, v in msgspec.json.decode(grants).items()}
                        if grants is not None else {})

    async def mode(self) -> str:
        """The current mode, as stored (default propose-only)."""
        if self._mode is None:
            await self._load_state()
        else:
            await self._sync()
        assert self._mode is not None
        if self._mode == "execute-auto" and self._clock() - self._last_user > self.idle_downgrade_s:
            await self._store_mode("propose-only", "idle: execute-auto expired")
        return self._mode

    async def set_mode(self, mode: str, *, channel: Literal["user", "model", "system"]) -> bool:
        """Switch modes. Only the user channel may; anything else is logged and ignored."""
        if channel != "user":
            await self.log.record("mode_change_ignored", requested=mode, channel=channel)
            return False
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r}; one of: {', '.join(MODES)}")
        if mode == "execute-auto" and shutil.which("bwrap") is None:
            raise ValueError("execute-auto needs the bubblewrap sandbox, which is not "
                             "installed (apt-get install bubblewrap)")
        self._last_user = self._clock()
        await self.mode()
        await self._store_mode(mode, "user")
        return True

    async def _store_mode(self, mode: str, why: str) -> None:
        previous, self._mode = self._mode, mode
        kv = self._kv()
        if kv is not None:
            await kv.put(MODE_KEY, mode.encode())
        await self.log.record("mode", mode=mode, previous=previous, why=why)
        await self._delta([{"op": "replace", "path": "/mode", "value": mode}])

    async def _delta(self, ops: list[dict[str, Any]], run_id: str | None = None) -> None:
        """Publish a state change and keep the session in step with it."""
        self.kernel.bus.publish(
            StateDelta(delta=tuple(msgspec.convert(op, PatchOp, from_attributes=False)
                                   for op in ops)), run_id=run_id, thread_id=self._thread)
        kv = self._kv()
        if kv is not None and await kv.get(f"session/{self._thread}/snapshot") is not None:
            await SessionStore(kv).apply(self._thread, ops)

    def state(self) -> dict[str, Any]:
        """What frontends show: mode, preset, working directory, live grants."""
        return {"mode": self._mode, "preset": self.kernel.profile.name, "cwd": self.cwd,
                "grants": self.grants, "plan": None}

    async def use_preset(self, profile: Any) -> None:
        """Switch the model preset; the next request uses it, no restart. Persisted."""
        self.kernel.profile = profile
        kv = self._kv()
        if kv is not None:
            await kv.put(PRESET_KEY, profile.name.encode())
        await self.log.record("preset", name=profile.name)
        await self._delta([{"op": "replace", "path": "/preset", "value": profile.name}])

    # -- grants ---------------------------------------------------------------------------

    @property
    def grants(self) -> list[str]:
        """Grants still in force (``write``, ``network:<tool>``, ``cage:<dir>``)."""
        now = self._wall()
        return sorted(g for g, expiry in self._grants.items() if expiry > now)

    async def grant(self, grant: str, *, seconds: float, channel: str) -> bool:
        """A time-boxed grant for this session, from the user only."""
        if channel != "user":
            await self.log.record("grant_ignored", grant=grant, channel=channel)
            return False
        if not GRANT.match(grant) or seconds <= 0:
            raise ValueError(f"invalid grant {grant!r} (write, network:<tool>, "
                             "network:<prefix>.*, cage:/abs/dir)")
        await self.mode()
        self._grants[grant] = self._wall() + seconds
        await self._save_grants()
        await self.log.record("grant", grant=grant, seconds=seconds)
        await self._delta([{"op": "replace", "path": "/grants", "value": self.grants}])
        return True

    async def revoke(self, grant: str) -> None:
        await self.mode()
        self._grants.pop(grant, None)
        await self._save_grants()
        await self.log.record("revoke", grant=grant)
        await self._delta([{"op": "replace", "path": "/grants", "value": self.grants}])

    async def _save_grants(self) -> None:
        kv = self._kv()
        if kv is not None:
            live = {g: e for g, e in self._grants.items() if e > self._wall()}
            await kv.put(GRANTS_KEY, msgspec.json.encode(live))

    def cancel(self) -> None:
        """Interrupt generation or cancel the running plan (between or during steps)."""
        if self._cancel is not None:
            self._cancel.cancel()

    # -- one request ----------------------------------------------------------------------

    async def handle(self, prompt: str, *, thread_id: str | None = None,
                     include: Sequence[str] = ()) -> RunOutcome:
        """Answer one user request: a response, a proposal, or an executed plan.

        ``include``: files the user agreed to add to this request's context (see
        `mentioned_files`); they join the bulletin's ``selected_files``."""

        async def body(run_id: str, mode: str, publish: Callable[[Any], None]) -> RunOutcome:
            await self.log.record("prompt", run_id, text=prompt, mode=mode,
                                  thread_id=thread_id, include=list(include))
            return await self._run(prompt, run_id, mode, publish, include)

        return await self._in_run({"prompt": prompt}, thread_id, body)

    async def notice(self, text: str, *, source: str = "system") -> None:
        """A system event (a failed build, a finished download): recorded and shown in
        every mode, including listen-only. It is context, never an instruction."""
        await self.log.record("event", source=source, text=text)
        self.kernel.bus.publish(Custom(name="copilot.event", value={"source": source,
                                                                    "text": text}),
                                thread_id=self._thread)

    async def assign(self, task: str, *, assigned_by: str,
                     thread_id: str | None = None) -> RunOutcome:
        """A task handed over by another agent or a schedule: handled like a prompt,
        under the same mode and approvals, with who assigned it in the log."""
        await self.log.record("assignment", assigned_by=assigned_by, text=task)
        return await self.handle(task, thread_id=thread_id)

    async def call(self, call: ToolCall, *, caller: str, thread_id: str | None = None,
                   by_user: bool = True) -> RunOutcome:
        """One tool call asked for directly (an MCP client, an embedding app), not
        planned by the model: a one-step run through the whole pipeline, under the
        mode, with the approvals it needs and who asked in the log.

        ``by_user=False`` for callers that are not the user at a keyboard (another
        agent over MCP): their calls do not keep ``execute-auto`` from expiring."""

        async def body(run_id: str, mode: str, publish: Callable[[Any], None]) -> RunOutcome:
            await self.log.record("direct_call", run_id, caller=caller, tool=call.tool,
                                  args=call.args, mode=mode)
            return await self._carry_out(Plan(steps=(call,)), run_id, mode, publish)

        return await self._in_run({"call": call.tool, "caller": caller}, thread_id, body,
                                  by_user=by_user)

    async def replay(self, run_id: str, step: int, *, dry_run: bool = True,
                     thread_id: str | None = None) -> RunOutcome:
        """Run a logged step again (as a new run, through the whole pipeline), or only
        dry-run it to see what it would do now."""
        source = [r for r in await self.log.records(run_id=run_id)
                  if r["kind"] in ("tool_call", "decision") and r.get("step") == step]
        if not source:
            raise LookupError(f"run {run_id} has no step {step} in the action log")
        call = ToolCall(tool=source[-1]["tool"], args=source[-1]["args"],
                        explain=f"replay of run {run_id} step {step}")

        async def body(new_id: str, mode: str, publish: Callable[[Any], None]) -> RunOutcome:
            await self.log.record("replay", new_id, source_run=run_id, source_step=step,
                                  dry_run=dry_run, tool=call.tool, args=call.args)
            if dry_run:
                checked = await self.pipeline.check(0, call, ctx=self._ctx(new_id), mode=mode,
                                                    grants=tuple(self.grants), run_id=new_id,
                                                    stage="plan")
                text = checked.preview.dry_run_diff if checked.preview else checked.verdict.reason
                return RunOutcome(new_id, "proposed", text=text or "",
                                  plan=Plan(steps=(call,)))
            return await self._carry_out(Plan(steps=(call,)), new_id, mode, publish)

        return await self._in_run({"replay": run_id, "step": step}, thread_id, body)

    async def export_bundle(self, dest: Any, *, run_id: str | None = None) -> Any:
        """Write a bug bundle (log slice, settings, versions, artifacts; secrets
        redacted) to ``dest`` (a .tar.gz path) and return the path."""
        from pathlib import Path

        records = await self.log.records(run_id=run_id)
        run_ids = {run_id} if run_id else {r["run_id"] for r in records if r.get("run_id")}
        versions = {p.distribution or p.name: p.version or "?" for p in self.kernel.plugins
                    if p.status == "loaded"}
        path = write_bundle(Path(dest), home=self.kernel.home, records=records,
                            profile=attrs.asdict(self.kernel.profile), versions=versions,
                            run_ids=run_ids)
        await self.log.record("bundle", run_id, path=str(path))
        return path

    async def _in_run(self, run_input: dict[str, Any], thread_id: str | None,
                      body: Callable[..., Any], *, by_user: bool = True) -> RunOutcome:
        """The frame of every run: lifecycle events, session, cancellation, outcome."""
        import anyio

        if by_user:  # the user is here: execute-auto's idle clock starts again
            self._last_user = self._clock()
        run_id, thread_id = uuid.uuid4().hex, thread_id or "default"
        self._thread = thread_id
        publish = self._publisher(run_id, thread_id)
        mode = await self.mode()
        publish(RunStarted(input=run_input))
        snapshot = self.state()
        publish(StateSnapshot(snapshot=snapshot))
        if (kv := self._kv()) is not None:
            try:
                await SessionStore(kv).start(thread_id, snapshot)
            except Exception as exc:  # a full disk: nothing has run yet
                raise ActionLogError.wrap(exc, what="the data home") from exc
        outcome = RunOutcome(run_id, "failed")
        with anyio.CancelScope() as scope:
            self._cancel = scope
            try:
                await self.check_cages()
                outcome = await body(run_id, mode, publish)
            except CageChangedError as exc:  # nothing is read or run in a swapped cage
                await self.log.record("cage_changed", run_id, path=exc.path, error=str(exc),
                                      input=run_input)
                outcome = RunOutcome(run_id, "denied", error=str(exc))
            except ActionLogError as exc:  # the log is unwritable: stop and say so; with no
                self._cancel = None  # outcome record, the next start closes it as interrupted
                publish(RunError(message=str(exc), code="log"))
                raise
            except Exception as exc:  # a dead backend, a bug: say so, keep the log
                if disk_full(exc):  # the data home is full (a pin, the plan's artifact),
                    self._cancel = None  # before any step ran: stop there, say so
                    error = ActionLogError.wrap(exc, what="the data home")
                    publish(RunError(message=str(error), code="log"))
                    raise error from exc
                outcome = RunOutcome(run_id, "failed", error=f"{type(exc).__name__}: {exc}")
        self._cancel = None
        if scope.cancelled_caught:
            outcome = RunOutcome(run_id, "cancelled", results=outcome.results,
                                 error="cancelled by the user")
        await self.log.record("outcome", run_id, status=outcome.status, error=outcome.error)
        if outcome.status in ("failed", "aborted", "cancelled") and outcome.error:
            publish(RunError(message=outcome.error, code=outcome.status))
        else:
            publish(RunFinished(result={"status": outcome.status, "text": outcome.text}))
        return outcome

    def _publisher(self, run_id: str, thread_id: str) -> Callable[[Any], None]:
        def publish(event: Any) -> None:
            self.kernel.bus.publish(event, run_id=run_id, thread_id=thread_id)
        return publish

    async def _run(self, prompt: str, run_id: str, mode: str,
                   publish: Callable[[Any], None], include: Sequence[str] = ()) -> RunOutcome:
        if mode in ("off", "listen-only"):
            return RunOutcome(run_id, "ignored", text=f"the operator is {mode}")
        if refusal := bad_request(prompt):  # before any model: empty, or far too long
            await self.log.record("response", run_id, text=refusal)
            return RunOutcome(run_id, "answered", text=refusal)
        bulletin = await self._bulletin()
        if include:
            chosen = tuple(dict.fromkeys((*bulletin.selected_files, *include)))
            bulletin = msgspec.structs.replace(bulletin, selected_files=chosen)
        publish(ActivitySnapshot(message_id=f"{run_id}-context", activity_type="context",
                                 content=to_builtins(bulletin)))
        await self.log.record("context", run_id, bulletin=to_builtins(bulletin))
        reply, error = None, ""
        for attempt in range(1, self.max_attempts + 1):
            simplified = attempt > 1
            menu: list[str] = []
            try:
                request, menu = self._request(prompt, bulletin, simplified, error)
                if not simplified:
                    request = await self._choose(request, menu, prompt)
                text = await self._generate(request, run_id, attempt, publish)
            except ProviderError as exc:
                await self.log.record("attempt", run_id, attempt=attempt, ok=False,
                                      simplified=simplified, error=str(exc), menu=menu)
                return RunOutcome(run_id, "failed", error=f"the model provider failed: {exc}")
            try:
                reply = parse_reply(text)
            except ContractError as exc:
                error = str(exc)
                await self.log.record("attempt", run_id, attempt=attempt, ok=False,
                                      simplified=simplified, error=error, output=text[:4096],
                                      menu=menu)
                publish(ActivitySnapshot(message_id=f"{run_id}-attempt-{attempt}",
                                         activity_type="malformed-plan",
                                         content={"attempt": attempt, "error": error}))
                continue
            await self.log.record("attempt", run_id, attempt=attempt, ok=True,
                                  simplified=simplified, menu=menu)
            break
        if reply is None:
            return RunOutcome(run_id, "failed", error=f"the model gave no valid plan in "
                              f"{self.max_attempts} attempts; last error: {error}")
        if isinstance(reply, Response):
            await self.log.record("response", run_id, text=reply.text)
            return RunOutcome(run_id, "answered", text=reply.text)
        plan_file = write_artifact(self.kernel.home, run_id, "plan.json", to_builtins(reply))
        await self.log.record("plan", run_id, steps=[to_builtins(s) for s in reply.steps],
                              artifact=str(plan_file))
        return await self._carry_out(reply, run_id, await self.mode(), publish)

    def mentioned_files(self, prompt: str, bulletin: ContextBulletin | None = None,
                        limit: int = 5) -> list[str]:
        """Files the request names that exist under the working directory and are not
        in the context yet: what a frontend offers to include ("Include these 2 files?")."""
        known = set(bulletin.selected_files) if bulletin else set()
        found: list[str] = []
        for word in re.findall(r"[\w./-]+\.\w+", prompt):
            path = os.path.normpath(os.path.join(self.cwd, word))
            inside = path.startswith(os.path.realpath(self.cwd) + os.sep)
            if inside and word not in known and word not in found and os.path.isfile(path):
                found.append(word)
        return found[:limit]

    async def bulletin(self) -> ContextBulletin:
        """The context bulletin a request would use now (what ``adjutant context`` shows).
        Raises `CageChangedError` when a cage root is not the directory pinned."""
        await self.check_cages()
        return await self._bulletin()

    async def check_cages(self) -> None:
        """Refuse (`CageChangedError`) when the workspace or another cage root no longer
        resolves to the device and inode pinned the first time; pin new ones."""
        kv = self._kv()
        if kv is None:  # nowhere to keep pins (no store installed)
            return
        roots, renew = self._cage_roots()
        for pin in await check_roots(kv, roots, renew=renew):
            await self.log.record("cage_pinned", path=pin.path, target=pin.target,
                                  device=pin.device, inode=pin.inode)

    def _cage_roots(self) -> tuple[list[tuple[str, str]], set[str]]:
        """The roots to check, and the scratch directory if it was just made (its own)."""
        made = not os.path.lexists(self.scratch)
        roots = [("workspace", self.cwd), *(("cage", c) for c in self._ctx("").cages)]
        return roots, {self.scratch} if made else set()

    async def _bulletin(self) -> ContextBulletin:
        fields: dict[str, Any] = {}
        enabled = self.kernel.profile.context_providers
        for name, provider in self.kernel.context_providers.items():
            # a provider may be off unless asked for (``default_enabled = False``)
            if not enabled.get(name, getattr(provider, "default_enabled", True)):
                continue
            try:
                found = await provider.gather(self.cwd)
                convert({**msgspec.to_builtins(found), "cwd": self.cwd}, ContextBulletin)
            except Exception as exc:  # a broken source costs its fields, not the request
                await self.log.record("context_error", provider=name, error=repr(exc)[:500])
                continue
            fields.update(found)
        return convert({**msgspec.to_builtins(fields), "cwd": self.cwd}, ContextBulletin)

    def offered_tools(self) -> dict[str, Any]:
        """The tools the profile's ``tools`` globs allow: what the planner may use and
        what ``adjutant mcp serve`` offers."""
        profile = self.kernel.profile
        return {n: t for n, t in self.kernel.tools.items() if profile.allows(n)}

    def _planner(self) -> Planner:
        return Planner({n: t.declaration for n, t in self.offered_tools().items()})

    def _request(self, prompt: str, bulletin: ContextBulletin, simplified: bool,
                 error: str) -> tuple[CompletionRequest, list[str]]:
        """The completion request for one attempt, and the tools it offers.

        Every allowed tool is offered (a ranking narrows very long lists, and a retry
        offers half as many), the model choosing among them and ``response``; the static
        part of the prompt goes in ``system`` so a provider can keep it evaluated. The
        reply is constrained by a grammar or a JSON schema where the provider takes one,
        with the read tools' paths limited to those that exist or that the request
        names."""
        profile, preset = self.kernel.profile, self.kernel.profile.model
        planner = self._planner()
        names = planner.offered(prompt, profile.tool_menu)
        if simplified:
            names = planner.menu(prompt, max(1, len(names) // 2))
        context = {"cwd": bulletin.cwd} if simplified else to_builtins(bulletin)
        context.pop("cwd", None)
        grounded = self._grounded(prompt)
        system = planner.system_text(names, system=profile.system_prompt,
                                     schemas=not simplified)
        # the files are not listed in the prompt (measured: a list made the model answer
        # about files in words); the grammar limits the read tools' paths to them
        text = planner.user_text(prompt, names, context=context, error=error)
        capabilities = capabilities_of(self._provider())
        grammar = preset.grammar
        if grammar is None and capabilities.grammar:
            grammar = planner.grammar(names, paths=grounded)
        schema = planner.json_schema(names, paths=grounded) \
            if capabilities.json_schema and not grammar else None
        stop = preset.stop if END in preset.stop else (*preset.stop, END)
        return CompletionRequest(prompt=text, system=system, model=preset.model,
                                 grammar=grammar,
                                 json_schema=schema, stop=stop,
                                 temperature=preset.temperature,
                                 max_tokens=preset.max_tokens,
                                 context_size=preset.context_size), names

    def _grounded(self, prompt: str) -> list[str]:
        """The paths the read tools may name: those here and those the request names."""
        return list(dict.fromkeys([*workspace_paths(self.cwd), *named_paths(prompt), "."]))

    async def _choose(self, request: CompletionRequest, names: list[str],
                      prompt: str) -> CompletionRequest:
        """The model's own choice of first step (a tool or a response), where the
        provider can score continuations and the reply has a planner grammar."""
        scorer = getattr(self._provider(), "score", None)
        if scorer is None or self.first_choice == "free" or request.grammar is None \
                or self.kernel.profile.model.grammar is not None or len(names) < 2:
            return request
        request, _ = await self._planner().choose(
            scorer, request, names, self._priors, paths=self._grounded(prompt),
            calibrate=self.first_choice == "calibrated")
        return request

    def _provider(self) -> Any:
        name = self.kernel.profile.model.provider
        if name not in self.kernel.providers:
            installed = ", ".join(self.kernel.providers) or "none"
            raise ProviderError(f"no model provider named {name!r} is installed (installed: "
                                f"{installed})", hint="install its plugin (the embedded one "
                                "is adjutant-llamacpp) or choose a preset that uses one")
        return self.kernel.providers[name]

    async def _generate(self, request: CompletionRequest, run_id: str, attempt: int,
                        publish: Callable[[Any], None]) -> str:
        provider = self._provider()
        message_id = f"{run_id}-model-{attempt}"
        publish(TextMessageStart(message_id=message_id))
        pieces = []
        try:
            async with aclosing(provider.complete(request)) as stream:
                async for chunk in stream:
                    if chunk.text:
                        pieces.append(chunk.text)
                        publish(TextMessageContent(message_id=message_id, delta=chunk.text))
                    for warning in chunk.warnings:
                        await self.log.record("provider_warning", run_id, text=warning)
                        publish(ActivitySnapshot(message_id=f"{message_id}-warning",
                                                 activity_type="warning",
                                                 content={"text": warning}))
        finally:
            publish(TextMessageEnd(message_id=message_id))
        return "".join(pieces).split(END, 1)[0]

    # -- consent and execution ------------------------------------------------------------

    @property
    def scratch(self) -> str:
        """The per-user scratch directory (a default cage), outside the protected data
        home: ``$XDG_CACHE_HOME/adjutant/scratch``."""
        env = self.kernel.env
        cache = env.get("XDG_CACHE_HOME") or os.path.join(
            env.get("HOME") or os.path.expanduser("~"), ".cache")
        return os.path.join(cache, "adjutant", "scratch")

    def _ctx(self, run_id: str) -> ToolContext:
        # The scratch cage exists before any tool is told it may write there (the
        # sandbox binds only existing directories).
        with contextlib.suppress(OSError):
            os.makedirs(self.scratch, mode=0o700, exist_ok=True)
        cages = []
        for cage in self.kernel.profile.path_cages:
            cages.append(cage.replace("{workspace}", self.cwd)
                         .replace("{scratch}", self.scratch))
        cages += [g.split(":", 1)[1] for g in self.grants if g.startswith("cage:")]
        return ToolContext(cwd=self.cwd, cages=tuple(cages), run_id=run_id,
                           home=self.kernel.env.get("HOME") or os.path.expanduser("~"),
                           data_home=str(self.kernel.home))

    def _packet(self, run_id: str, step: CheckedStep) -> StepPacket:
        details = {}
        if step.declaration is not None and step.preview is not None:
            details = self.kernel.confirmation_details(step.call, step.declaration,
                                                       step.preview, self.cwd)
        return StepPacket(run_id, step.index, step.call.tool, dict(step.call.args),
                          step.call.explain, step.preview.dry_run_diff if step.preview else None,
                          step.declaration.safety.level if step.declaration else "?",
                          tuple(shown(v) for v in step.verdicts
                                if v.decision not in ("allow", "abstain")), details)

    async def _carry_out(self, plan: Plan, run_id: str, mode: str,
                         publish: Callable[[Any], None]) -> RunOutcome:
        ctx, grants = self._ctx(run_id), tuple(self.grants)
        checked = [await self.pipeline.check(i, call, ctx=ctx, mode=mode, grants=grants,
                                             run_id=run_id, history=plan.steps[:i],
                                             stage="plan")
                   for i, call in enumerate(plan.steps)]
        packets = [attrs.asdict(self._packet(run_id, s)) for s in checked]
        for entry, step in zip(packets, checked, strict=True):
            if step.would is not None:  # propose-only: what would happen one mode up
                entry["would"] = {"decision": step.would.decision, "reason": shown(step.would)}
        publish(ActivitySnapshot(message_id=f"{run_id}-plan", activity_type="plan", content={
            "steps": packets, "verdicts": [s.verdict.decision for s in checked]}))
        await self._delta([{"op": "replace", "path": "/plan", "value": packets}], run_id)
        if mode == "propose-only":
            return RunOutcome(run_id, "proposed", plan=plan, proposal=packets)
        writes = any(s.declaration is not None and s.needs_approval for s in checked)
        tokens: dict[int, str] = {}
        step_by_step = True
        if len(checked) > 1 and writes:
            packet = PlanPacket(run_id, tuple(self._packet(run_id, s) for s in checked))
            publish(asked := approval_requested(packet))
            await self.log.flush()  # nothing waits on a person with records unwritten
            answer = await self.approver.approve_plan(packet)
            await self.log.record("approval", run_id, scope="plan", answer=answer)
            publish(approval_decided(asked, answer))
            if answer == "deny":
                return RunOutcome(run_id, "denied", plan=plan, error="plan denied")
            if answer == "execute":  # consent to every preview shown, bound to each hash
                step_by_step = False
                tokens = {s.index: self.pipeline.approvals.issue(run_id, s.index, s.digest)
                          for s in checked if s.digest}
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
            result = await self._one_step(index, call, ctx, mode, grants, history, run_id,
                                          tokens, step_by_step, publish)
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

    async def _one_step(self, index: int, call: ToolCall, ctx: ToolContext, mode: str,
                        grants: tuple[str, ...], history: list[ToolCall], run_id: str,
                        tokens: dict[int, str], step_by_step: bool,
                        publish: Callable[[Any], None]) -> ExecutionResult:
        for _ in range(3):  # a changed preview or an edit is asked again, a few times at most
            step = await self.pipeline.check(index, call, ctx=ctx, mode=mode, grants=grants,
                                             history=tuple(history), run_id=run_id)
            if step.denied:
                publish(step_denied(run_id, index, call.tool, by="policy",
                                    reason=step.verdict.reason, policy=step.verdict.policy))
                return ExecutionResult(tool=call.tool, args=call.args, status="denied",
                                       stderr=shown(step.verdict))
            token = tokens.get(index)
            if step.needs_approval and not self.pipeline.approvals.valid(
                    token, run_id, index, step.digest or ""):
                packet = self._packet(run_id, step)
                publish(asked := approval_requested(packet))
                await self.log.flush()  # nothing waits on a person with records unwritten
                decision = await self.approver.approve_step(packet)
                self.log.defer("approval", run_id, scope="step", step=index,
                               action=decision.action, digest=step.digest,
                               args=decision.args, unanswered=decision.unanswered)
                publish(approval_decided(asked, decision.action, args=decision.args,
                                         unanswered=decision.unanswered))
                if decision.action == "deny":
                    why = (f"needs approval and nobody could give it ({decision.unanswered})"
                           if decision.unanswered else "denied by the user")
                    publish(step_denied(run_id, index, call.tool, reason=why,
                                        by="nobody" if decision.unanswered else "user"))
                    return ExecutionResult(tool=call.tool, args=call.args, status="denied",
                                           stderr=why)
                if decision.action == "edit":
                    call = ToolCall(tool=call.tool, args=decision.args or {},
                                    explain=call.explain)
                    tokens.pop(index, None)
                    continue
                token = self.pipeline.approvals.issue(run_id, index, step.digest or "")
            call_id = tool_call_id(run_id, index)
            publish(ToolCallStart(tool_call_id=call_id, tool_call_name=call.tool))
            publish(ToolCallArgs(tool_call_id=call_id,
                                 delta=msgspec.json.encode(call.args).decode()))
            publish(ToolCallEnd(tool_call_id=call_id))
            try:
                result = await self.pipeline.execute(step, ctx=ctx, mode=mode, run_id=run_id,
                                                     token=token)
            except StepChangedError:
                tokens.pop(index, None)
                continue
            except PermissionError as exc:
                publish(step_denied(run_id, index, call.tool, by="policy", reason=str(exc),
                                    policy="runtime-check"))
                result = ExecutionResult(tool=call.tool, args=call.args, status="denied",
                                         stderr=str(exc))
            publish(ToolCallResult(message_id=f"{call_id}-result", tool_call_id=call_id,
                                   content=result.stdout or result.stderr or result.status,
                                   role="tool"))
            artifact: dict[str, Any] = {}
            try:
                artifact["path"] = str(write_artifact(
                    self.kernel.home, run_id, f"step-{index}.json", {
                        "call": to_builtins(call), "preview": step.preview.dry_run_diff
                        if step.preview else None, "result": to_builtins(result)}))
            except OSError as exc:  # a full disk: the result must still reach the log
                artifact = {"path": None, "error": f"not written: {exc.strerror or exc}"}
            # with the step's result, in the next step's intent or the run's outcome
            self.log.defer("artifact", run_id, step=index, **artifact)
            return result
        why = "not run: the step kept changing after approval"
        publish(step_denied(run_id, index, call.tool, by="policy", reason=why, policy="kernel"))
        return ExecutionResult(tool=call.tool, args=call.args, status="denied", stderr=why)
