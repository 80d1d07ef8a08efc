"""Changing a task from outside its runner: cancel, retry, approve, deny.

One place for what ``adjutant tasks cancel|retry|approve|deny`` and the dock's Tasks
view do. The queue keeps one writer: when a runner is alive (``adjutant tasks run``, a
chat, the dock) the change is asked of it (`TaskQueue.request`) and awaited; when none
is, this process takes the runner lock for the moment it needs, so two processes
never change one task at once. An answer is bound to the digest of the question the
user saw (`adjutant_tasks._human.answer`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
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


async def _own_or_ask(kernel: Kernel, queue: TaskQueue, task: Task, *,
                      own: Callable[[Task], Awaitable[Task]],
                      ask: Callable[[], Awaitable[None]],
                      taken: Callable[[Task | None], Awaitable[bool]],
                      wait_s: float) -> tuple[bool, Task | None]:
    """The one shape of every change from outside the runner: when no runner is alive,
    this process takes the runner lock for the moment it needs and makes the change
    itself (``own``, given the task as stored now); else it asks the live runner
    (``ask``) and polls until ``taken`` says the runner took it, at most ``wait_s``.
    Returns ``(taken, task as stored now)``."""
    from ._runner import RunnerLock

    lock = RunnerLock(kernel.home)
    if lock.try_acquire():  # no runner is alive: this process owns the queue a moment
        try:
            current = await queue.get(task.id)
            if current is None:
                raise LookupError(task.id)
            return True, await own(current)
        finally:
            lock.release()
    await ask()
    with anyio.move_on_after(wait_s):
        while True:
            await anyio.sleep(0.05)
            current = await queue.get(task.id)
            if await taken(current):
                return True, current
    return False, await queue.get(task.id)


async def change_task(kernel: Kernel, queue: TaskQueue, task: Task,
                      op: Literal["cancel", "retry"], *,
                      wait_s: float = REQUEST_WAIT_S) -> Task:
    """Cancel or retry ``task``; the task as it is after the change."""
    from ._runner import apply_request

    wanted_from = CHANGES_FROM[op]
    if task.status not in wanted_from:
        raise TaskControlError(f"task {task.id} is {task.status}; {op} takes a task that "
                               f"is {' or '.join(wanted_from)}")
    before = task.status

    async def own(current: Task) -> Task:
        if current.status == "running" and current.handoff is None:
            current.status = "queued"  # its runner died: `tasks run` recovers it
        return await apply_request(kernel, queue, current, op)

    async def taken(current: Task | None) -> bool:
        return current is not None and (current.status != before or (
            op == "retry" and current.attempts == 0))

    done, current = await _own_or_ask(kernel, queue, task, own=own,
                                      ask=lambda: queue.request(task.id, op),
                                      taken=taken, wait_s=wait_s)
    if done and current is not None:
        return current
    raise TaskControlError(f"asked the runner; task {task.id} is still {task.status} "
                           f"after {wait_s:g} s")


async def answer_task(kernel: Kernel, queue: TaskQueue, task: Task,
                      action: Literal["approve", "deny"], *, digest: str | None, by: str,
                      wait_s: float = REQUEST_WAIT_S) -> Task:
    """Approve or deny the step ``task`` waits for, bound to ``digest`` (the question the
    user saw; None: the one stored now); the task as it is after the answer."""
    from ._human import AnswerRefusedError, answer

    if task.status != "waiting_for_human" or task.question is None or task.waiting_on:
        what = (f"waits for its nested step's task {task.waiting_on}: answer that one"
                if task.waiting_on else f"is {task.status} and asks nothing")
        raise TaskControlError(f"task {task.id} {what}")
    shown = digest or task.question.digest
    verb = "grant" if action == "approve" else "deny"

    async def own(current: Task) -> Task:
        try:
            return await answer(kernel, queue, current, verb, digest=shown, by=by)
        except AnswerRefusedError as exc:
            raise TaskControlError(str(exc)) from exc

    async def taken(current: Task | None) -> bool:
        # the request is cleared once the answer is stored or refused (and logged)
        return current is None or await queue.pending_request(task.id) is None

    _, current = await _own_or_ask(
        kernel, queue, task, own=own,
        ask=lambda: queue.request(task.id, action, digest=shown, by=by),
        taken=taken, wait_s=wait_s)
    asked = task.question.asked_at
    if current is None or (current.status == "waiting_for_human"
                           and current.question is not None
                           and current.question.asked_at == asked):
        # the same question still waits: the runner refused the answer (logged) or
        # did not take it
        now = None if current is None or current.question is None else current.question
        if now is not None and now.digest != shown:
            raise TaskControlError(f"refused: the question changed since it was shown "
                                   f"(digest {shown[:12]}, now {now.digest[:12]})")
        raise TaskControlError("the runner did not take the answer (the question changed, "
                               f"or it did not answer in time); see adjutant tasks show "
                               f"{task.id}")
    return current
