"""A task that waits for a human, durably.

A task's step runs a tool call through the operator's whole pipeline (a `Copilot` of
the runner's, under the persisted mode and grants). When the pipeline asks for an
approval, `TaskApprover` does not wait in memory: it keeps the exact confirmation
packet (tool, arguments, preview) and its digest as the task's `Question`, answers
the pipeline "not now" (the step does not run), and the attempt ends with
`WaitingForHuman`: the runner stores the task as ``waiting_for_human`` in one commit.
Any number of restarts later, ``adjutant tasks approve ID`` (or ``deny``, or the bus
through `answer`) stores an `Answer` bound to that digest, writes it to the
hash-chained action log, and queues the task again. Its next attempt checks and
previews the step again; the answer is used only if the new preview has the same
digest. A changed file (another preview) is refused and asked again; changed inputs
are refused (the runner's input hash) and never run.
"""

from __future__ import annotations

import hashlib
import time
from typing import TYPE_CHECKING, Any

from adjutant.operator import Approver, PlanDecision, StepDecision, StepPacket
from adjutant_hookspecs.records import ActionRecord

from ._queue import Answer, Question, Task, canonical_json, input_hash

if TYPE_CHECKING:
    from adjutant_hookspecs import Kernel

    from ._queue import TaskQueue

__all__ = ["AnswerRefusedError", "TaskAnswerRecord", "TaskApprover", "TaskAskedRecord",
           "WaitingForHuman", "WaitingOnChild", "answer", "packet_digest"]


class WaitingForHuman(Exception):
    """The attempt stops here: the task waits for the answer to ``question``."""

    def __init__(self, question: Question, *, stale: str | None = None,
                 outcome: Any = None) -> None:
        super().__init__(f"waiting for approval of {question.tool} at step {question.step}")
        self.question, self.stale = question, stale
        #: For a request to the model (``ask_operator``): the run's `RunOutcome`, with
        #: the plan the question is part of (kept, so the approval runs that plan).
        self.outcome = outcome


class WaitingOnChild(Exception):
    """The attempt stops here: a nested step's task (``child``) must finish first."""

    def __init__(self, child: str) -> None:
        super().__init__(f"waiting for its nested task {child}")
        self.child = child


class AnswerRefusedError(ValueError):
    """An answer that cannot be taken (no question, another digest, changed inputs)."""


class TaskAskedRecord(ActionRecord, frozen=True, kw_only=True, tag="tasks_asked"):
    """A task stopped to wait for a human: the exact packet it asks about."""

    task_id: str
    step: str
    tool: str
    args: dict[str, Any]
    preview: str | None
    digest: str


class TaskAnswerRecord(ActionRecord, frozen=True, kw_only=True, tag="tasks_answer"):
    """The answer to a waiting task (``grant``/``deny``, bound to ``digest``), or an
    answer refused (``refused``: why)."""

    task_id: str
    step: str
    action: str
    digest: str
    by: str
    refused: str | None = None


def packet_digest(tool: str, args: Any, preview: str | None) -> str:
    """What an answer is bound to: the tool, its arguments and its exact preview."""
    return hashlib.sha256(canonical_json([tool, args, preview])).hexdigest()


class TaskApprover(Approver):
    """The consent of one task's step: the stored answer where it matches the packet,
    else a question kept for later (the step is not run now).

    :param task: the task (its ``answer``, if any, is consumed by a matching packet).
    :param step: the step's name in the task (an answer binds to it too).
    """

    def __init__(self, task: Task, step: str) -> None:
        self.task, self.step = task, step
        self.question: Question | None = None
        #: Why a stored answer was not used (the step changed since it was answered).
        self.stale: str | None = None

    async def approve_plan(self, packet: Any) -> PlanDecision:
        return PlanDecision("step")  # each step asked on its own, bound to its preview

    async def approve_step(self, packet: StepPacket) -> StepDecision:
        digest = packet_digest(packet.tool, packet.args, packet.preview)
        given = self.task.answer
        if given is not None and given.step == self.step:
            if given.digest == digest:
                self.task.answer = None  # used once
                return StepDecision(given.action)
            self.stale = ("the step changed since it was approved (another preview): "
                          "the approval is refused and the step asked again")
            self.task.answer = None
        if self.question is None:  # the first question of this attempt is kept
            self.question = Question(
                step=self.step, tool=packet.tool, args=dict(packet.args),
                preview=packet.preview, summary=packet.summary, level=packet.level,
                reasons=list(packet.reasons), digest=digest, run_id=packet.run_id,
                asked_at=time.time())
        return StepDecision("deny", unanswered=f"task {self.task.id} waits for the user: "
                            f"adjutant tasks approve {self.task.id}")


def action_log(kernel: Kernel) -> Any:
    from adjutant.operator import ActionLog

    return ActionLog(kernel.stores, lambda: kernel.profile.stores.get("log"))


async def answer(kernel: Kernel, queue: TaskQueue, task: Task, action: str, *,
                 digest: str | None, by: str) -> Task:
    """Answer ``task``'s question as the queue's owner: checked, written to the action
    log, then the task queued again (a deny is used by the step like a grant: the
    pipeline records it and the step does not run). Raises `AnswerRefusedError`."""
    from ._events import TaskAnswered

    if action not in ("grant", "deny"):
        raise AnswerRefusedError(f"an answer is grant or deny, not {action!r}")
    if task.status != "waiting_for_human":
        raise AnswerRefusedError(f"task {task.id} is {task.status}, not waiting for an "
                                 "answer")
    if task.waiting_on is not None:
        raise AnswerRefusedError(f"task {task.id} waits for its nested step's task "
                                 f"{task.waiting_on}: answer that one")
    question = task.question
    if question is None:
        raise AnswerRefusedError(f"task {task.id} asks nothing")
    log = action_log(kernel)
    why = None
    if digest is not None and digest != question.digest:
        why = (f"the question changed since it was shown (digest {digest[:12]}, now "
               f"{question.digest[:12]})")
    elif input_hash(task.inputs) != task.input_hash:
        why = "the task's inputs changed after it was queued (their sha256 no longer matches)"
    if why is not None:
        await log.record(TaskAnswerRecord(run_id=question.run_id, task_id=task.id,
                                          step=question.step, action=action,
                                          digest=digest or question.digest, by=by,
                                          refused=why))
        kernel.bus.publish(TaskAnswered(task_id=task.id, capability=task.capability,
                                        action=action, digest=digest or question.digest,
                                        refused=True, reason=why), run_id=task.parent_run)
        raise AnswerRefusedError(f"refused: {why}")
    # In the log before the task may go on: the answer is durable before any effect.
    await log.record(TaskAnswerRecord(run_id=question.run_id, task_id=task.id,
                                      step=question.step, action=action,
                                      digest=question.digest, by=by))
    task.answer = Answer(action=action, step=question.step,  # type: ignore[arg-type]
                         digest=question.digest, by=by, at=time.time())
    task.status, task.not_before = "queued", time.time()
    task.message = f"{'approved' if action == 'grant' else 'denied'} by {by}; it goes on"
    await queue.put(task)
    kernel.bus.publish(TaskAnswered(task_id=task.id, capability=task.capability,
                                    action=action, digest=question.digest),
                       run_id=task.parent_run)
    return task
