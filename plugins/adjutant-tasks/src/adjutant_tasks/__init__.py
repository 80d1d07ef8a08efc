"""Durable tasks for Adjutant: work that outlives a request.

The plugin is `TasksPlugin` (the entry point names the class: one instance per kernel).
Work is a *task capability* (``register_task_capabilities``); a task is one queued run
of a capability with its inputs, kept in the profile's key/value store (`TaskQueue`)
and run by a `Runner` (one per data home, crash-safe). Tools: ``schedule.task`` (queue
now, at a time, or on a cron schedule) and ``doc.summarize``; commands:
``adjutant tasks list|show|cancel|retry|watch|run``. Settings: the profile's
``plugins.tasks`` section (`TasksSettings`). Cheap to import: the queue, runner,
croniter and pypdf load on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from adjutant_hookspecs import lazy_exports

from ._plugin import TasksPlugin, tasks_of

if TYPE_CHECKING:  # imported on first use (`lazy_exports`): start-up stays cheap
    from ._control import TaskControlError, answer_task, change_task
    from ._events import (
        TASK_EVENTS,
        TaskAnswer,
        TaskAnswered,
        TaskFinished,
        TaskProgress,
        TaskQueued,
        TaskRecovered,
        TaskRetrying,
        TaskStarted,
        TaskWaiting,
    )
    from ._queue import Schedule, Task, TaskQueue, UnknownTaskError, input_hash
    from ._runner import Runner, RunnerBusyError, UnknownCapabilityError, cron_next
    from ._settings import TasksSettings, tasks_settings

__all__ = [
    "TASK_EVENTS",
    "Runner",
    "RunnerBusyError",
    "Schedule",
    "Task",
    "TaskAnswer",
    "TaskAnswered",
    "TaskControlError",
    "TaskFinished",
    "TaskProgress",
    "TaskQueue",
    "TaskQueued",
    "TaskRecovered",
    "TaskRetrying",
    "TaskStarted",
    "TaskWaiting",
    "TasksPlugin",
    "TasksSettings",
    "UnknownCapabilityError",
    "UnknownTaskError",
    "answer_task",
    "change_task",
    "cron_next",
    "input_hash",
    "tasks_of",
    "tasks_settings",
]

__getattr__ = lazy_exports(__name__, {
    "TaskControlError": "._control", "answer_task": "._control",
    "change_task": "._control",
    "TASK_EVENTS": "._events", "TaskAnswer": "._events", "TaskAnswered": "._events",
    "TaskWaiting": "._events", "TaskFinished": "._events", "TaskProgress": "._events",
    "TaskQueued": "._events", "TaskRecovered": "._events", "TaskRetrying": "._events",
    "TaskStarted": "._events", "Schedule": "._queue", "Task": "._queue",
    "TaskQueue": "._queue", "UnknownTaskError": "._queue", "input_hash": "._queue",
    "Runner": "._runner", "RunnerBusyError": "._runner",
    "UnknownCapabilityError": "._runner", "cron_next": "._runner",
    "TasksSettings": "._settings", "tasks_settings": "._settings"})
