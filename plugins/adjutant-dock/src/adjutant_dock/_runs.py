"""Runs as the browser sees them: queued jobs, AG-UI run segments, interrupts.

One *job* is one request to the operator (``Copilot.handle``). The browser sees it
as one or more AG-UI *runs* (`Segment`): a step that needs consent ends the current
one with ``RUN_FINISHED`` whose outcome is an interrupt, and the answer (a
``RunAgentInput`` with ``resume``) starts the next, whose ``parentRunId`` is the
one interrupted. Each segment keeps its envelopes in order (``seq`` from 1) for
replay, and has exactly one terminal event.

Jobs run one at a time in FIFO order across all threads (queued
globally: the operator is one `Copilot`, shared by every tab), so each thread also
has at most one active run.
"""

from __future__ import annotations

import collections
import contextlib
import hashlib
import json
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator
from typing import TYPE_CHECKING, Any, Literal

import anyio
import attrs

from adjutant import Approver, Copilot, PlanPacket, StepDecision, StepPacket, to_ag_ui
from adjutant.operator import Escalation
from adjutant_hookspecs import BusGap, Envelope, RunStarted, event_name, is_custom

from ._history import History
from ._peers import last_seq, subscribe
from ._records import DockAnswerRecord
from ._roles import Skill, system_prompt
from ._scopes import offers
from ._voice_feed import VoiceFeed, is_voice
from ._wire import envelope

if TYPE_CHECKING:
    from anyio.abc import TaskGroup

    from adjutant_hookspecs import Kernel

__all__ = ["DockApprover", "Hub", "Refused", "Segment"]

TERMINAL = ("RUN_FINISHED", "RUN_ERROR")
#: A history write, queued in order.
Write = Callable[[], Awaitable[None]]
ANSWERS = {"step": ("grant", "deny", "edit"), "plan": ("execute", "step", "deny"),
           "escalation": ("allow", "deny")}


class Refused(Exception):
    """A request the dock will not carry out; ``status`` is the HTTP answer."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def now_ms() -> int:
    return time.time_ns() // 1_000_000


class Segment:
    """One AG-UI run: its envelopes in order, a bounded replay window, one terminal."""

    def __init__(self, run_id: str, thread_id: str, client_session: str, job: Job,
                 window: int, parent: str | None = None,
                 on_end: Callable[[Segment], None] | None = None) -> None:
        self.run_id, self.thread_id, self.client_session = run_id, thread_id, client_session
        self.job, self.window, self.parent = job, window, parent
        self.on_end = on_end
        self.saved = 0  # envelopes already written to the history
        self.chunks = 0
        self.events: collections.deque[dict[str, Any]] = collections.deque()
        self.next_seq = 1
        self.done = False
        self.listeners = 0
        self._changed = anyio.Event()

    @property
    def first_seq(self) -> int:
        return self.events[0]["seq"] if self.events else self.next_seq

    def emit(self, data: dict[str, Any], event: str | None = None) -> dict[str, Any]:
        if self.done:
            raise RuntimeError(f"run {self.run_id} has ended; nothing may follow its "
                               "terminal event")
        data.setdefault("timestamp", now_ms())
        env = envelope(self.next_seq, self.run_id, self.thread_id, self.client_session,
                       data["timestamp"], data, event)
        self.next_seq += 1
        self.events.append(env)
        if len(self.events) > self.window:
            self.events.popleft()
        self.done = data["type"] in TERMINAL
        self._changed.set()
        self._changed = anyio.Event()
        if self.on_end is not None and (self.done or self.next_seq - 1 - self.saved
                                        >= self.window // 2):
            self.on_end(self)  # written before the window forgets them
        return env

    def after(self, seq: int) -> list[dict[str, Any]] | None:
        """The envelopes after ``seq``, oldest first; None when some of them have left
        the replay window (the client must restart from a snapshot)."""
        if seq + 1 < self.first_seq:
            return None
        start = seq + 1 - self.first_seq
        return [self.events[i] for i in range(max(start, 0), len(self.events))]

    async def changed(self) -> None:
        await self._changed.wait()


@attrs.define(eq=False)
class Pending:
    """A question put to the user, waiting for its answer."""

    scope: Literal["step", "plan", "escalation"]
    interrupt: dict[str, Any]
    packet: StepPacket | PlanPacket | Escalation
    digest: str
    #: the scoped allows the question offers (``{grant, seconds, label}``)
    scopes: list[dict[str, Any]] = attrs.Factory(list)
    answer: dict[str, Any] | None = None
    answered: anyio.Event = attrs.field(factory=anyio.Event)


@attrs.define(eq=False)
class Job:
    id: str
    thread_id: str
    client_session: str
    prompt: str
    #: a past step run again (``{"runId", "step", "dryRun"}``) instead of a prompt
    replay: dict[str, Any] | None = None
    #: the role's skill, added to the system prompt of this request only
    skill: Skill | None = None
    segment: Segment = attrs.field(init=False)
    op_run: str | None = None
    state: Literal["queued", "running", "done"] = "queued"
    requested: dict[str, Any] | None = None
    pending: Pending | None = None
    #: the operator's run ended (its RUN_FINISHED or RUN_ERROR was passed on)
    ended: bool = False


def digest_of(packet: StepPacket | PlanPacket) -> str:
    """A name for exactly what the user is shown (tool, arguments, preview of every
    step): an answer must carry it, so it is an answer to that preview."""
    steps = packet.steps if isinstance(packet, PlanPacket) else (packet,)
    shown = json.dumps([[s.index, s.tool, s.args, s.preview] for s in steps],
                       sort_keys=True, ensure_ascii=True, default=str)
    return hashlib.sha256(shown.encode()).hexdigest()[:16]


def _scope_of(payload: dict[str, Any], pending: Pending,
              action: str) -> dict[str, Any] | None:
    """The scoped allow sent with an answer, when that very question offered it (the
    grant and its seconds as offered); a scope it did not offer is refused (409)."""
    scope = payload.get("scope")
    if scope is None:
        return None
    if action != "grant" or not isinstance(scope, dict):
        raise Refused(409, "a scoped allow goes with 'grant' only")
    for offered in pending.scopes:
        if scope.get("grant") == offered["grant"] and scope.get("seconds") == offered["seconds"]:
            return offered
    raise Refused(409, "refused: that question did not offer this scope "
                  f"({scope.get('grant')!r} for {scope.get('seconds')!r} s); nothing was "
                  "granted or run")


def _answer_of(run_input: dict[str, Any] | None) -> str:
    """What the user answered, as the history shows it: granted, denied, edited,
    executed (a plan), step by step (a plan), sent off this machine (the router's
    question) or unanswered."""
    entries = (run_input or {}).get("resume") or [{}]
    payload = entries[0].get("payload") or {}
    action = payload.get("action") if isinstance(payload, dict) else None
    if entries[0].get("status") == "cancelled":
        action = "deny"
    return {"grant": "granted", "deny": "denied", "edit": "edited", "execute": "executed",
            "step": "step by step", "allow": "sent off this machine"}.get(
                str(action), "unanswered")


class DockApprover(Approver):
    """Consent through the browser: each question becomes an AG-UI interrupt."""

    def __init__(self, hub: Hub) -> None:
        self.hub = hub

    async def approve_plan(self, packet: PlanPacket) -> Literal["execute", "step", "deny"]:
        answer = await self.hub.ask("plan", packet)
        return answer["action"]  # type: ignore[no-any-return]

    async def approve_step(self, packet: StepPacket) -> StepDecision:
        answer = await self.hub.ask("step", packet)
        return StepDecision(answer["action"], args=answer.get("args"),
                            unanswered=answer.get("unanswered"))

    async def approve_escalation(self, question: Escalation) -> bool:
        """Asked in the chat like a step: the preset, that it leaves this machine, the
        most it may cost. No is the default; a question nobody answers stays local."""
        answer = await self.hub.ask_escalation(question)
        return bool(answer["action"] == "allow")


class Hub:
    """The dock's runs: submits, resumes, stops, and the pump from the event bus.

    :param copilot_factory: Builds the operator given its approver (tests pass one).
    :param window: Envelopes kept per run for replay.
    :param retain: Finished runs kept for reconnects (the oldest are forgotten).
    :param grace_s: How long a running job may have no listener before it is stopped.
    :param approval_timeout_s: How long a question waits before it counts as denied.
    """

    def __init__(self, kernel: Kernel, *,
                 copilot_factory: Callable[[Approver], Copilot] | None = None,
                 window: int = 16384, retain: int = 256, grace_s: float = 30.0,
                 approval_timeout_s: float = 600.0) -> None:
        self.kernel = kernel
        factory = copilot_factory or (lambda approver: Copilot(kernel, approver=approver))
        self.copilot = factory(DockApprover(self))
        self.window, self.retain, self.grace_s = window, retain, grace_s
        self.approval_timeout_s = approval_timeout_s
        self.segments: collections.OrderedDict[str, Segment] = collections.OrderedDict()
        self.queue: collections.deque[Job] = collections.deque()
        self.active: Job | None = None
        self._by_op: dict[str, Job] = {}
        #: speech.* and stt.* events: they belong to no run (the ambient stream)
        self.voice = VoiceFeed()
        self._sub = subscribe(kernel)
        self._position = self._sub.position
        self._pumped = anyio.Event()
        self._queued = anyio.Event()
        self._finished = anyio.Event()
        self._tg: TaskGroup | None = None
        from adjutant.operator import key_value_store  # the profile's, as the operator's

        self.history = History(key_value_store(kernel))
        self._writing = False
        self._wrote = anyio.Event()
        self._writes_in, self._writes = anyio.create_memory_object_stream[Write](
            max_buffer_size=float("inf"))

    # -- lifecycle -----------------------------------------------------------------------

    async def serve(self) -> None:
        """Pump bus events into runs and run queued jobs, until cancelled."""
        try:
            async with anyio.create_task_group() as tg:
                self._tg = tg
                tg.start_soon(self._pump)
                tg.start_soon(self._worker)
                tg.start_soon(self._writer)
        finally:  # history still queued is written before the dock goes
            self._writes_in.close()
            with anyio.CancelScope(shield=True), anyio.move_on_after(5):
                while True:
                    try:
                        write = self._writes.receive_nowait()
                    except (anyio.WouldBlock, anyio.EndOfStream):
                        break
                    await write()
            self._writes.close()

    async def _writer(self) -> None:
        """History writes, in the order they were asked for. History is not the action
        log: a write that fails is reported and the dock goes on."""
        from adjutant import get_logger

        async for write in self._writes:
            self._writing = True
            try:
                await write()
            except Exception as exc:  # a full disk: the runs go on, unrecorded here
                get_logger(plugin="dock").warning("history not written", error=str(exc))
            finally:
                self._writing = False
                self._wrote.set()
                self._wrote = anyio.Event()

    async def written(self) -> None:
        """Wait until the history holds everything queued for it so far."""
        while self._writing or self._writes.statistics().current_buffer_used:
            await self._wrote.wait()

    def _save_start(self, segment: Segment, run_input: dict[str, Any] | None) -> None:
        meta = {"threadId": segment.thread_id, "runId": segment.run_id,
                "parentRunId": segment.parent, "clientSessionId": segment.client_session,
                "prompt": segment.job.prompt[:500] if segment.parent is None else "",
                "startedAt": segment.events[0]["timestamp"]}
        if segment.parent is not None:  # the answer that started it (none: nobody answered)
            meta["answer"] = _answer_of(run_input)
        snapshot = dict(self.copilot.state())
        self._writes_in.send_nowait(lambda: self.history.started(meta, snapshot))

    def _save_end(self, segment: Segment) -> None:
        """Write the envelopes not yet written; at the end, the run's outcome too."""
        fresh = segment.next_seq - 1 - segment.saved
        events = list(segment.events)[-fresh:] if fresh else []
        segment.saved += fresh
        chunk, segment.chunks = segment.chunks, segment.chunks + 1
        if not segment.done:
            self._writes_in.send_nowait(lambda: self.history.append(
                segment.thread_id, segment.run_id, events, chunk))
            return
        final = events[-1]["data"] if events else {}
        if final.get("type") != "RUN_FINISHED":
            status = f"error: {final.get('code') or final.get('message', '')}"
        elif (final.get("outcome") or {}).get("type") == "interrupt":
            status = "interrupted"
        else:
            status = (final.get("result") or {}).get("status") or "finished"
        ended = events[-1]["timestamp"] if events else ""

        async def write() -> None:
            await self.history.append(segment.thread_id, segment.run_id, events, chunk)
            await self.history.ended(segment.thread_id, segment.run_id, status, ended)

        self._writes_in.send_nowait(write)

    async def _pump(self) -> None:
        while batch := await self._sub.next_batch():
            for env in batch:
                self._dispatch(env)
            self._position = batch[-1].seq
            self._pumped.set()
            self._pumped = anyio.Event()

    async def _caught_up(self) -> None:
        """Wait until every event published so far has been dispatched."""
        target = last_seq(self.kernel)
        while self._position < target:
            await self._pumped.wait()

    def _dispatch(self, env: Envelope) -> None:
        cls = type(env.event)
        if is_custom(cls) and is_voice(event_name(cls)):
            self.voice.publish(to_ag_ui(env), env.thread_id, env.timestamp)
            return
        job = self.active
        if job is not None and isinstance(env.event, BusGap) and job.op_run is not None:
            # the pump fell behind the bus: the run says so, never silently loses events
            self._open_segment(job).emit(to_ag_ui(env))
            return
        if job is None or env.run_id is None:
            return
        if job.op_run is None:
            if isinstance(env.event, RunStarted) and env.thread_id == job.thread_id:
                job.op_run = env.run_id
                self._by_op[env.run_id] = job
            return
        if env.run_id != job.op_run:
            return
        data = to_ag_ui(env)
        kind = data["type"]
        if kind == "RUN_STARTED":
            return
        segment = self._open_segment(job)
        job.ended = kind in TERMINAL
        if kind == "RUN_FINISHED":
            segment.emit({"type": "RUN_FINISHED", "threadId": segment.thread_id,
                          "runId": segment.run_id, "result": data.get("result"),
                          "outcome": {"type": "success"}})
            return
        if kind == "CUSTOM" and data.get("name") == "adjutant.approval.requested":
            job.requested = data["value"]["interrupt"]
        if kind == "RUN_ERROR":
            data = {"type": "RUN_ERROR", "message": data["message"], "code": data.get("code")}
            data = {k: v for k, v in data.items() if v is not None}
        segment.emit(data)

    def _open_segment(self, job: Job) -> Segment:
        """The job's current run; a new one when events arrive after an interrupt that
        no resume answered (a question that timed out)."""
        if not job.segment.done:
            return job.segment
        segment = self._segment(uuid.uuid4().hex, job, parent=job.segment.run_id)
        self._begin(segment, None)
        return segment

    async def _worker(self) -> None:
        while True:
            while not self.queue:
                await self._queued.wait()
                self._queued = anyio.Event()
            job = self.queue.popleft()
            self.active, job.state = job, "running"
            self._announce_queue()
            error = "the run ended without a result"
            try:
                if job.replay is not None:  # through the whole pipeline, as a new run
                    await self.copilot.replay(job.replay["runId"], job.replay["step"],
                                              dry_run=job.replay["dryRun"],
                                              thread_id=job.thread_id)
                else:
                    with self._role(job):
                        await self.copilot.handle(job.prompt, thread_id=job.thread_id)
            except Exception as exc:  # the log unwritable, a bug: the run says so
                error = f"{type(exc).__name__}: {exc}"
            await self._caught_up()
            if not job.ended:  # it failed before it could say so itself
                self._open_segment(job).emit({"type": "RUN_ERROR", "message": error,
                                              "code": "dock"})
            job.state, self.active = "done", None
            if job.op_run is not None:
                self._by_op.pop(job.op_run, None)
            self._finished.set()
            self._finished = anyio.Event()

    @contextlib.contextmanager
    def _role(self, job: Job) -> Iterator[None]:
        """The role's skill in the system prompt for this request (jobs run one at a
        time); the profile as it was afterwards, unless the preset was switched."""
        if job.skill is None:
            yield
            return
        base = self.kernel.profile
        with_role = base.replace(system_prompt=system_prompt(base.system_prompt, job.skill))
        self.kernel.profile = with_role
        job.segment.emit({"type": "CUSTOM", "name": "adjutant.dock.context_stack",
                          "value": {"skill": job.skill.summary()}})
        try:
            yield
        finally:
            if self.kernel.profile is with_role:
                self.kernel.profile = base

    async def drained(self) -> None:
        """Wait until no job runs and none is queued."""
        while self.active is not None or self.queue:
            await self._finished.wait()

    def _announce_queue(self) -> None:
        for position, job in enumerate(self.queue, 1):
            job.segment.emit({"type": "CUSTOM", "name": "adjutant.dock.queued",
                              "value": {"position": position}})

    # -- requests ------------------------------------------------------------------------

    def _segment(self, run_id: str, job: Job, parent: str | None = None) -> Segment:
        if run_id in self.segments:
            raise Refused(409, f"run {run_id} exists already: each run needs a new runId")
        segment = Segment(run_id, job.thread_id, job.client_session, job, self.window, parent,
                          on_end=self._save_end)
        job.segment = segment
        self.segments[run_id] = segment
        while len(self.segments) > self.retain:
            oldest = next(iter(self.segments.values()))
            if not oldest.done:
                break
            self.segments.popitem(last=False)
        return segment

    def _begin(self, segment: Segment, run_input: dict[str, Any] | None) -> None:
        """The run's RUN_STARTED, and its history record."""
        segment.emit(self._started(segment, run_input))
        self._save_start(segment, run_input)

    @staticmethod
    def _started(segment: Segment, given: dict[str, Any] | None) -> dict[str, Any]:
        run_input = dict(given or {})
        run_input.update(threadId=segment.thread_id, runId=segment.run_id)
        run_input.setdefault("messages", [])
        if segment.parent:
            run_input["parentRunId"] = segment.parent
        data = {"type": "RUN_STARTED", "threadId": segment.thread_id, "runId": segment.run_id,
                "parentRunId": segment.parent, "input": run_input}
        return {k: v for k, v in data.items() if v is not None}

    def submit(self, run_input: dict[str, Any], prompt: str, client_session: str,
               replay: dict[str, Any] | None = None, skill: Skill | None = None) -> Segment:
        """Queue a request; its run starts streaming at once (queued, then live)."""
        job = Job(uuid.uuid4().hex, run_input["threadId"], client_session, prompt, replay,
                  skill)
        segment = self._segment(run_input["runId"], job)
        self._begin(segment, run_input)
        self.queue.append(job)
        if self.active is not None or len(self.queue) > 1:
            segment.emit({"type": "CUSTOM", "name": "adjutant.dock.queued",
                          "value": {"position": len(self.queue)}})
        self._queued.set()
        return segment

    async def ask(self, scope: Literal["step", "plan"],
                  packet: StepPacket | PlanPacket) -> dict[str, Any]:
        """Put a question to the browser and wait for the answer (the approver)."""
        await self._caught_up()
        job = self._by_op.get(packet.run_id)
        if job is None or job.requested is None:
            return {"action": "deny", "unanswered": "the dock did not ask this question"}
        digest = digest_of(packet)
        interrupt = dict(job.requested)
        scopes = offers(self.kernel, packet, self.copilot.cwd) \
            if isinstance(packet, StepPacket) else []
        interrupt["metadata"] = {**(interrupt.get("metadata") or {}), "packetId": digest,
                                 "scopes": scopes}
        job.requested = None
        return await self._wait(job, Pending(scope, interrupt, packet, digest, scopes))

    async def _wait(self, job: Job, pending: Pending) -> dict[str, Any]:
        """End the current AG-UI run with the question; wait for the answer (a deny,
        marked unanswered, when nobody answers in time)."""
        job.pending = pending
        interrupt = pending.interrupt
        segment = self._open_segment(job)
        segment.emit({"type": "RUN_FINISHED", "threadId": segment.thread_id,
                      "runId": segment.run_id,
                      "outcome": {"type": "interrupt", "interrupts": [interrupt]}})
        try:
            with anyio.move_on_after(self.approval_timeout_s):
                await pending.answered.wait()
        finally:
            job.pending = None
        if pending.answer is None:
            return {"action": "deny",
                    "unanswered": f"nobody answered in {self.approval_timeout_s:g} s"}
        return pending.answer

    async def ask_escalation(self, question: Escalation) -> dict[str, Any]:
        """The router's question (a preset off this machine) as an AG-UI interrupt."""
        await self._caught_up()
        job = self._by_op.get(question.run_id)
        if job is None:
            return {"action": "deny"}
        # the answer is bound to all that is shown: preset, model, why, the most it may cost
        digest = hashlib.sha256(json.dumps(
            [question.preset, question.model, question.reason, question.tokens,
             question.cost]).encode()).hexdigest()[:16]
        interrupt = {
            "id": f"{question.run_id}-escalation-{uuid.uuid4().hex[:12]}",
            "reason": "model_escalation",
            "message": f"Send this request to {question.preset} ({question.model})?",
            "responseSchema": {"type": "object", "required": ["action"], "properties": {
                "action": {"enum": list(ANSWERS["escalation"])}}},
            "metadata": {"packetId": digest, "escalation": {
                "preset": question.preset, "model": question.model,
                "reason": question.reason, "tokens": question.tokens,
                "cost": question.cost, "leavesMachine": True}}}
        return await self._wait(job, Pending("escalation", interrupt, question, digest))

    async def resume(self, run_input: dict[str, Any], client_session: str) -> Segment:
        """Answer an open interrupt; the run continues as a new AG-UI run."""
        entries = run_input.get("resume") or []
        if len(entries) != 1:
            raise Refused(400, "answer exactly one interrupt per request")
        entry = entries[0]
        job = self.active
        pending = job.pending if job is not None else None
        if job is None or pending is None or pending.interrupt["id"] != entry["interruptId"]:
            raise Refused(409, f"no open question {entry['interruptId']!r}: it was answered "
                          "already, or its preview changed and it was asked again")
        if job.thread_id != run_input["threadId"]:
            raise Refused(409, "that question belongs to another thread")
        payload = entry.get("payload") or {}
        if not isinstance(payload, dict):
            raise Refused(400, "the resume payload must be an object")
        if payload.get("packetId") != pending.digest:
            raise Refused(409, "refused: the preview you answered is not the one waiting "
                          "(it changed); look at the current preview and answer again")
        action = "deny" if entry.get("status") == "cancelled" else payload.get("action")
        if action not in ANSWERS[pending.scope]:
            raise Refused(400, f"action must be one of {', '.join(ANSWERS[pending.scope])}")
        answer: dict[str, Any] = {"action": action}
        scoped = _scope_of(payload, pending, action)
        if action == "edit":
            if not isinstance(payload.get("args"), dict):
                raise Refused(400, "edit needs the new arguments as an object in 'args'")
            answer["args"] = payload["args"]
        segment = self._segment(run_input["runId"], job, parent=job.segment.run_id)
        segment.client_session = client_session
        self._begin(segment, run_input)
        # durable before the operator acts on it, whatever the operator logs after
        await self.copilot.log.record(DockAnswerRecord(
            run_id=job.op_run, interrupt=entry["interruptId"], scope=pending.scope,
            packet=pending.digest, client_session=client_session, action=action,
            args=answer.get("args"), grant=scoped["grant"] if scoped else None,
            seconds=scoped["seconds"] if scoped else None))
        if scoped is not None:  # the user's channel: this page, answering its question
            await self.copilot.grant(scoped["grant"], seconds=scoped["seconds"],
                                     channel="user")
        pending.answer = answer
        pending.answered.set()
        return segment

    def stop(self, run_id: str) -> None:
        """Stop a run: a queued one never starts, a running one is cancelled."""
        segment = self.segments.get(run_id)
        if segment is None:
            raise Refused(404, f"no run {run_id}")
        job = segment.job
        if job.state == "done" or segment.done:
            if job.pending is not None:
                raise Refused(409, "the run waits for your answer: deny the step to stop it")
            return
        if job.state == "queued":
            self.queue.remove(job)
            job.state = "done"
            segment.emit({"type": "RUN_ERROR", "message": "stopped before it started",
                          "code": "cancelled"})
            self._announce_queue()
            return
        self.copilot.cancel()

    # -- listeners -----------------------------------------------------------------------

    def listening(self, segment: Segment, delta: int) -> None:
        """Count a stream's listeners; a live run nobody listens to is stopped after
        the grace period (a closed tab must not leave work running)."""
        segment.listeners += delta
        if segment.listeners == 0 and not segment.done and self._tg is not None:
            self._tg.start_soon(self._orphaned, segment)

    async def _orphaned(self, segment: Segment) -> None:
        await anyio.sleep(self.grace_s)
        if segment.listeners == 0 and not segment.done:
            self.stop(segment.run_id)

    def open_interrupts(self) -> list[dict[str, Any]]:
        job = self.active
        if job is None or job.pending is None:
            return []
        return [{"threadId": job.thread_id, "runId": job.segment.run_id,
                 "interrupt": job.pending.interrupt}]
