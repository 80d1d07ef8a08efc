"""Durable tasks for Adjutant: work that outlives a request.

The plugin is `TasksPlugin` (the entry point names the class: one instance per
kernel, holding that kernel's queue and runner). Tasks live in the profile's
key/value store; the runner runs them on anyio tasks, one at a time per resource,
and after a crash resumes them from their checkpoint. Capabilities (the work a task
does) come from the ``register_task_capabilities`` hook; this plugin offers
``doc.summarize``. ``adjutant tasks`` lists, shows, cancels, retries and watches
them; the ``schedule.task`` tool queues one now, later or on a cron schedule.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from adjutant_hookspecs import lazy_exports

from ._plugin import TasksPlugin, runner_for

if TYPE_CHECKING:  # imported on first use (`lazy_exports`): start-up stays cheap
    from ._model import Task, input_hash
    from ._queue import TaskQueue, TaskStateError, UnknownTaskError
    from ._runner import TaskRunner
    from ._settings import TasksSettings

__all__ = ["Task", "TaskQueue", "TaskRunner", "TaskStateError", "TasksPlugin", "TasksSettings",
           "UnknownTaskError", "input_hash", "runner_for"]

__getattr__ = lazy_exports(__name__, {
    "Task": "._model", "input_hash": "._model", "TaskQueue": "._queue",
    "TaskStateError": "._queue", "UnknownTaskError": "._queue", "TaskRunner": "._runner",
    "TasksSettings": "._settings"})
