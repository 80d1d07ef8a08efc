"""The task runner's events on the bus (AG-UI ``CUSTOM`` events named ``task.*``).

Each carries the task's id and capability; the envelope's ``run_id`` is the run that
queued the task (its parent run), so an operator follows the tasks it spawned with
``kernel.bus.subscribe()`` and a filter on ``run_id``."""

from __future__ import annotations

from typing import Any

from adjutant_hookspecs import CustomEvent, Event

__all__ = ["TASK_EVENTS", "TaskAnswer", "TaskAnswered", "TaskFinished", "TaskProgress",
           "TaskQueued", "TaskRecovered", "TaskRetrying", "TaskStarted", "TaskWaiting"]


class TaskQueued(CustomEvent, frozen=True, omit_defaults=True, tag="task.queued"):
    """A task was queued; ``not_before`` (Unix seconds) when it is due later."""

    task_id: str
    capability: str
    not_before: float | None = None


class TaskStarted(CustomEvent, frozen=True, omit_defaults=True, tag="task.started"):
    """An attempt began (``attempt`` counts from 1; ``resumed``: after a crash)."""

    task_id: str
    capability: str
    attempt: int
    resumed: bool = False


class TaskProgress(CustomEvent, frozen=True, omit_defaults=True, tag="task.progress"):
    """How far a running task is (0.0 to 1.0) and what it is doing."""

    task_id: str
    capability: str
    progress: float
    message: str = ""


class TaskRetrying(CustomEvent, frozen=True, omit_defaults=True, tag="task.retrying"):
    """An attempt failed with a failure that may be retried; the next is due at
    ``not_before``."""

    task_id: str
    capability: str
    attempt: int
    error: str
    not_before: float


class TaskRecovered(CustomEvent, frozen=True, omit_defaults=True, tag="task.recovered"):
    """A task found running when a runner started (its process died): ``outcome``
    ``resumed`` (queued again, it resumes from its checkpoint) or ``failed``."""

    task_id: str
    capability: str
    outcome: str
    reason: str


class TaskFinished(CustomEvent, frozen=True, omit_defaults=True, tag="task.finished"):
    """A task ended: ``status`` ``done``, ``failed`` or ``cancelled``; ``error`` says
    why it did not finish; ``artifacts`` is its folder."""

    task_id: str
    capability: str
    status: str
    error: str | None = None
    artifacts: str | None = None


class TaskWaiting(CustomEvent, frozen=True, omit_defaults=True, tag="task.waiting"):
    """A task waits for a human: ``question`` is the exact step it asks about (tool,
    args, preview, digest; `adjutant_tasks.Question` as JSON), or, with ``waiting_on``,
    a nested step's task waits and holds this one."""

    task_id: str
    capability: str
    question: dict[str, Any] | None = None
    waiting_on: str | None = None


class TaskAnswered(CustomEvent, frozen=True, omit_defaults=True, tag="task.answered"):
    """A waiting task's question was answered (``action`` grant or deny), or the answer
    was ``refused`` (the question changed since it was shown: ``reason``)."""

    task_id: str
    capability: str
    action: str
    digest: str
    refused: bool = False
    reason: str = ""


class TaskAnswer(CustomEvent, frozen=True, omit_defaults=True, tag="task.answer"):
    """A frontend's answer to a waiting task (the dock publishes it): ``action``
    ``grant`` or ``deny``, bound to the ``digest`` of the question it showed. The
    runner takes it like ``adjutant tasks approve``; `TaskAnswered` says the outcome."""

    task_id: str
    action: str
    digest: str
    by: str = "user"


TASK_EVENTS: tuple[type[Event], ...] = (TaskQueued, TaskStarted, TaskProgress, TaskRetrying,
                                       TaskRecovered, TaskFinished, TaskWaiting, TaskAnswered,
                                       TaskAnswer)
