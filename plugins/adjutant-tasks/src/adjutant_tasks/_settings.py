"""adjutant-tasks's settings: the profile's ``plugins.tasks`` section."""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs
from attrs import validators as v

if TYPE_CHECKING:
    from adjutant_hookspecs import Kernel

__all__ = ["TasksSettings", "tasks_settings"]


@attrs.frozen
class TasksSettings:
    """How the task runner works (profile: ``"plugins": {"tasks": {...}}``)."""

    #: Run queued tasks in this process when the kernel starts (only one process at a
    #: time runs them: the one holding the runner lock in the data home).
    workers: bool = True
    #: Attempts of a task whose failures are retryable, the first included.
    max_attempts: int = attrs.field(default=3, validator=[v.ge(1), v.le(100)])
    #: Seconds before the first retry; doubled for each further one.
    retry_backoff_s: float = attrs.field(default=1.0, validator=[v.ge(0.0), v.le(3600.0)])
    #: How often the runner looks for tasks queued and cancels asked by other processes.
    poll_s: float = attrs.field(default=0.5, validator=[v.ge(0.01), v.le(60.0)])


def tasks_settings(kernel: Kernel) -> TasksSettings:
    """This kernel's `TasksSettings` (the defaults where adjutant-tasks is not loaded)."""
    try:
        return kernel.plugin_settings(TasksSettings)
    except LookupError:
        return TasksSettings()
