"""What a capability's ``run`` sees (`adjutant_hookspecs.TaskContext`), and what
this plugin's own capabilities use beyond it: a tool call through the pipeline, a
request to the operator, a guardrail's question, a nested task (``run_child``; each
may end the attempt to wait, durably; see ``_human``)."""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import msgspec

from ._events import TaskProgress
from ._queue import Task, canonical_json

if TYPE_CHECKING:
    from ._runner import Runner

__all__ = ["Context", "flow_enabled", "wait_kinds"]

_PROGRESS_PERSIST_S = 0.25


def flow_enabled(home: Path, name: Any) -> bool:
    from ._automations import FlowError, FlowStore

    try:
        return isinstance(name, str) and bool(FlowStore(home).get(name).get("enabled", True))
    except (FlowError, OSError, ValueError):
        return False


def wait_kinds() -> tuple[type[Exception], ...]:
    from ._automations import _Later
    from ._human import WaitingForHuman, WaitingOnChild

    return (WaitingForHuman, WaitingOnChild, _Later)


class Context:
    """What a capability's ``run`` sees (`adjutant_hookspecs.TaskContext`)."""

    def __init__(self, runner: Runner, task: Task) -> None:
        self._runner, self._task = runner, task
        self.task_id = task.id
        self.inputs: Mapping[str, Any] = MappingProxyType(msgspec.json.decode(
            canonical_json(task.inputs)))
        self.attempt = task.attempts
        self.artifacts = Path(task.artifacts)
        self.kernel = runner.kernel
        self._persisted = 0.0
        self.saved = task.resumes > 0 or task.attempts > 1  # a checkpoint may exist

    async def progress(self, fraction: float, message: str = "") -> None:
        task = self._task
        fraction = 0.0 if math.isnan(fraction) else min(1.0, max(0.0, float(fraction)))
        task.progress, task.message = fraction, message[:500]
        self.kernel.bus.publish(TaskProgress(task_id=task.id, capability=task.capability,
                                             progress=fraction, message=task.message),
                                run_id=task.parent_run)
        now = time.monotonic()
        if now - self._persisted >= _PROGRESS_PERSIST_S:
            self._persisted = now
            await self._runner.queue.put(task, wait=False)

    async def save_checkpoint(self, state: Any) -> None:
        self.saved = True
        await self._runner.queue.save_checkpoint(self.task_id, state)

    async def load_checkpoint(self) -> Any:
        return await self._runner.queue.load_checkpoint(self.task_id)

    # -- adjutant-tasks' own capabilities (flows, tool calls): not in the protocol --------

    async def call_tool(self, step: str, tool: str, args: Mapping[str, Any], *,
                        cwd: str | None = None) -> Any:
        """Run one tool call through the operator's whole pipeline (schema, mode,
        policies, write-gate, preview, log) and return its `ExecutionResult`. Where it
        needs an approval the task does not wait here: `WaitingForHuman` ends the
        attempt with the question kept (see ``_human``), unless the task holds an
        answer bound to this step's exact preview."""
        from adjutant_hookspecs import ToolCall

        from ._human import TaskApprover, WaitingForHuman

        approver = TaskApprover(self._task, step)
        copilot = self._runner.copilot(cwd)
        outcome = await copilot.call(
            ToolCall(tool=tool, args=dict(args), explain=f"task {self.task_id}, step {step}"),
            caller=f"task {self.task_id}", by_user=False, approver=approver,
            on_event=self._runner.own_run)
        if approver.question is not None:
            raise WaitingForHuman(approver.question, stale=approver.stale)
        if not outcome.results:
            from adjutant_hookspecs import ExecutionResult

            return ExecutionResult(tool=tool, args=dict(args), status="error",
                                   stderr=outcome.error or f"not run ({outcome.status})")
        return outcome.results[0]

    async def ask_operator(self, step: str, prompt: str, *, cwd: str | None = None) -> Any:
        """A request to the model (its plan through the pipeline, as `call_tool`);
        returns the `RunOutcome`."""
        from ._human import TaskApprover, WaitingForHuman

        approver = TaskApprover(self._task, step)
        copilot = self._runner.copilot(cwd)
        outcome = await copilot.handle(prompt, approver=approver,
                                       on_event=self._runner.own_run)
        if approver.question is not None:
            raise WaitingForHuman(approver.question, stale=approver.stale, outcome=outcome)
        return outcome

    async def confirm(self, step: str, what: str, question: str) -> bool:
        """Ask the user ``question`` (a guardrail: "I seem to be stuck", "still working
        on X?", a budget) the durable way: True or False once answered, else
        `WaitingForHuman` ends the attempt until it is."""
        from ._human import WaitingForHuman, packet_digest
        from ._queue import Question

        digest = packet_digest(what, {}, question)
        given = self._task.answer
        if given is not None and given.step == step and given.digest == digest:
            self._task.answer = None
            return given.action == "grant"
        raise WaitingForHuman(Question(
            step=step, tool=what, args={}, preview=question, summary=question.splitlines()[0],
            level="guardrail", digest=digest, run_id=self._task.parent_run or self.task_id,
            asked_at=time.time()))

    async def run_child(self, step: str, capability: str,
                        inputs: Mapping[str, Any]) -> Mapping[str, Any]:
        """`adjutant_hookspecs.TaskContext.run_child`: the nested task's outputs once it
        is done; `WaitingOnChild` ends the attempt until then (the runner holds this
        task, as ``waiting_for_human`` while the child waits for a human);
        `ChildTaskFailed` when it failed or was cancelled."""
        from adjutant_hookspecs import ChildTaskFailed

        from ._human import WaitingOnChild

        task = await self.child(step, capability, inputs)
        if not task.finished:
            raise WaitingOnChild(task.id)
        if task.status != "done":
            raise ChildTaskFailed(task.id, task.capability, task.status, task.error)
        return MappingProxyType(dict(task.outputs or {}))

    async def child(self, step: str, name: str, inputs: Mapping[str, Any]) -> Task:
        """The task of a nested step: queued once (its key is this task and step),
        then returned as stored. Raise `WaitingOnChild` while it is not finished: this
        task waits, and an approval inside it holds this one too."""
        from ._runner import enqueue

        task, _ = await enqueue(self.kernel, self._runner.queue, name, inputs,
                                settings=self._runner.settings, parent_run=self._task.parent_run,
                                idempotency_key=f"child:{self.task_id}:{step}",
                                parent_task=self.task_id)
        return task
