"""Changing a task from outside its runner: cancel, retry, approve, deny.

One place for what ``adjutant tasks cancel|retry|approve|deny`` and the dock's Tasks
view do. The queue keeps one writer: when a runner is alive (``adjutant tasks run``, a
chat, the dock) the change is asked of it (`TaskQueue.request`) and awaited; when none
is, this process takes the runner lock for the moment it needs, so two processes
never change one task at once. An answer is bound to the digest of the question the
user saw (`adjutant_tasks._human.answer`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

import anyio

if TYPE_CHECKING:
    from adjutant_hookspecs import Kernel

    from ._queue import Task, TaskQueue

__all__ = ["REQUEST_WAIT_S", "TaskControlError", "answer_task", "change_task"]

#: How long a change asked of a live runner is awaited.
REQUEST_WAIT_S = 10.0

#: What each change takes.
CHANGES_FROM = {"cancel": ("queued", "running", "waiting_for_human"),
                "retry": ("failed", "cancelled")}


class TaskControlError(ValueError):
    """A change that cannot be made (the task's status, a changed question, a runner
    that did not take it in time): the message says why."""


async def change_task(kernel: Kernel, queue: TaskQueue, task: Task,
                      op: Literal["cancel", "retry"], *,
                      wait_s: float = REQUEST_WAIT_S) -> Task:
    """Cancel or retry ``task``; the task as it is after the change."""
    from ._runner import RunnerLock, apply_request

    wanted_from = CHANGES_FROM[op]
    if task.status not in wanted_from:
        raise TaskControlError(f"task {task.id} is {task.status}; {op} takes a task that "
                               f"is {' or '.join(wanted_from)}")
    lock = RunnerLock(kernel.home)
    if lock.try_acquire():  # no runner is alive: this process owns the queue a moment
        try:
            current = await queue.get(task.id)
            if current is None:
                raise LookupError(task.id)
            if current.status == "running" and current.handoff is None:
                current.status = "queued"  # its runner died: `tasks run` recovers it
            return await apply_request(kernel, queue, current, op)
        finally:
            lock.release()
    before = task.status
    await queue.request(task.id, op)
    with anyio.move_on_after(wait_s):
        while True:
            await anyio.sleep(0.05)
            current = await queue.get(task.id)
            if current is not None and (current.status != before or (
                    op == "retry" and current.attempts == 0)):
                return current
    raise TaskControlError(f"asked the runner; task {task.id} is still {task.status} "
                           f"after {wait_s:g} s")


async def answer_task(kernel: Kernel, queue: TaskQueue, task: Task,
                      action: Literal["approve", "deny"], *, digest: str | None, by: str,
                      wait_s: float = REQUEST_WAIT_S) -> Task:
    """Approve or deny the step ``task`` waits for, bound to ``digest`` (the question the
    user saw; None: the one stored now); the task as it is after the answer."""
    from ._human import AnswerRefusedError, answer
    from ._runner import RunnerLock

    if task.status != "waiting_for_human" or task.question is None or task.waiting_on:
        what = (f"waits for its nested step's task {task.waiting_on}: answer that one"
                if task.waiting_on else f"is {task.status} and asks nothing")
        raise TaskControlError(f"task {task.id} {what}")
    digest = digest or task.question.digest
    verb = "grant" if action == "approve" else "deny"
    lock = RunnerLock(kernel.home)
    if lock.try_acquire():  # no runner is alive: this process owns the queue a moment
        try:
            current = await queue.get(task.id)
            if current is None:
                raise LookupError(task.id)
            return await answer(kernel, queue, current, verb, digest=digest, by=by)
        except AnswerRefusedError as exc:
            raise TaskControlError(str(exc)) from exc
        finally:
            lock.release()
    await queue.request(task.id, action, digest=digest, by=by)
    with anyio.move_on_after(wait_s):
        while True:
            await anyio.sleep(0.05)
            current = await queue.get(task.id)
            if current is None or await queue.pending_request(task.id) is None:
                break
    current = await queue.get(task.id)
    asked = task.question.asked_at
    if current is None or (current.status == "waiting_for_human"
                           and current.question is not None
                           and current.question.asked_at == asked):
        # the same question still waits: the runner refused the answer (logged) or
        # did not take it
        now = None if current is None or current.question is None else current.question
        if now is not None and now.digest != digest:
            raise TaskControlError(f"refused: the question changed since it was shown "
                                   f"(digest {digest[:12]}, now {now.digest[:12]})")
        raise TaskControlError("the runner did not take the answer (the question changed, "
                               f"or it did not answer in time); see adjutant tasks show "
                               f"{task.id}")
    return current
