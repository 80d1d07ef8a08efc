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

    #: Attempts a task gets when its failures may be retried (1: no retry).
    max_attempts: int = attrs.field(default=3, validator=[v.ge(1), v.le(20)])
    #: Seconds before the first retry; doubled for each further one.
    retry_backoff_s: float = attrs.field(default=2.0, validator=[v.ge(0.0), v.le(3600.0)])
    #: Times a task interrupted by a crash is resumed before it fails.
    max_resumes: int = attrs.field(default=3, validator=[v.ge(0), v.le(100)])
    #: How often a runner looks for work queued by another process (seconds).
    poll_s: float = attrs.field(default=0.5, validator=[v.ge(0.01), v.le(60.0)])
    #: Run queued work in the process that queued it (``adjutant chat``, the dock) when
    #: no other process (``adjutant tasks run``) runs the queue.
    run_in_process: bool = True
    #: ``doc.summarize``: how long the tool waits for its task before it answers with
    #: the task id (the task goes on either way).
    summarize_wait_s: float = attrs.field(default=900.0, validator=[v.ge(0.0), v.le(86400.0)])
    #: ``doc.summarize``: tokens of document text per map step (within the model's
    #: context; None: a quarter of the context window, at most 2048).
    chunk_tokens: int | None = attrs.field(
        default=None, validator=v.optional([v.ge(128), v.le(65536)]))
    #: Hand queued tasks to Celery through this broker (``filesystem:///a/folder`` on
    #: one machine, ``redis://host:port/db`` across machines); None: the local runner
    #: runs everything. ``adjutant tasks worker`` consumes them (see ``_celery``).
    broker: str | None = attrs.field(default=None, validator=v.optional(
        v.matches_re(r"^(filesystem:///.+|rediss?://.+)$")))
    #: Seconds between a worker's heartbeats.
    heartbeat_s: float = attrs.field(default=5.0, validator=[v.ge(0.05), v.le(3600.0)])
    #: A worker whose last heartbeat is older than this many intervals has stopped
    #: consuming: it is reported, and the task it was running is published again.
    stale_after: int = attrs.field(default=3, validator=[v.ge(2), v.le(100)])
    #: Seconds the Celery ledger keeps a finished handed-off task's entries (states,
    #: claims, checkpoint) and a silent worker's heartbeat; the runner prunes older
    #: ones (hourly). At least a day: longer than the Redis broker's visibility timeout
    #: (4 h), so a message redelivered late still meets its claim and runs once.
    ledger_retention_s: float = attrs.field(default=7 * 86400.0,
                                            validator=[v.ge(86400.0), v.le(365 * 86400.0)])


def tasks_settings(kernel: Kernel) -> TasksSettings:
    """This kernel's `TasksSettings` (the defaults where adjutant-tasks is not loaded)."""
    try:
        return kernel.plugin_settings(TasksSettings)
    except LookupError:
        return TasksSettings()
