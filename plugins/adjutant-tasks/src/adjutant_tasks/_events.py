"""The task runner's events on the bus (``task.*``), published with the task's parent
run as ``run_id`` so the run that asked can follow its tasks."""

from __future__ import annotations

from typing import Any

from adjutant_hookspecs import CustomEvent, Event

__all__ = ["TASK_EVENTS", "TaskFinished", "TaskProgress", "TaskQueued", "TaskRecovered",
           "TaskStarted"]


class TaskQueued(CustomEvent, frozen=True, omit_defaults=True, tag="task.queued"):
    """A task was queued (or queued again: a retry, a resume)."""

    task_id: str
    capability: str
    run_at: float
    attempt: int = 0


class TaskStarted(CustomEvent, frozen=True, omit_defaults=True, tag="task.started"):
    task_id: str
    capability: str
    attempt: int
    resumed: bool = False


class TaskProgress(CustomEvent, frozen=True, omit_defaults=True, tag="task.progress"):
    task_id: str
    progress: float
    message: str = ""


class TaskFinished(CustomEvent, frozen=True, omit_defaults=True, tag="task.finished"):
    """A task ended: ``done`` (with its outputs), ``failed`` (with the reason) or
    ``cancelled``."""

    task_id: str
    capability: str
    status: str
    outputs: dict[str, Any] | None = None
    error: str | None = None


class TaskRecovered(CustomEvent, frozen=True, omit_defaults=True, tag="task.recovered"):
    """A task found running at start-up (its process ended): ``resumed`` from its
    checkpoint, or ``failed`` with the reason."""

    task_id: str
    capability: str
    outcome: str
    reason: str


TASK_EVENTS: tuple[type[Event], ...] = (TaskQueued, TaskStarted, TaskProgress, TaskFinished,
                                        TaskRecovered)
