"""`TasksPlugin`: adjutant-tasks as the kernel sees it. One instance per kernel (the
entry point names the class); the kernel's queue and runner live on that instance."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from adjutant_hookspecs import Command, hookimpl, lazy

if TYPE_CHECKING:
    from adjutant_hookspecs import Event, Kernel, TaskCapability, Tool

    from ._queue import TaskQueue
    from ._runner import TaskRunner

__all__ = ["TasksPlugin", "runner_for"]


class TasksPlugin:
    """Durable tasks: the ``task.*`` events, settings, the ``tasks`` command, the
    ``schedule.task`` and ``doc.summarize`` tools, and the runner from ``startup`` to
    ``shutdown``."""

    name = "tasks"

    def __init__(self) -> None:
        self.runner: TaskRunner | None = None
        #: False: this process does not run tasks (``adjutant tasks list`` sets it
        #: before the kernel starts: a listing never starts a model).
        self.run_workers = True
        self._stop: Callable[[], Awaitable[None]] | None = None

    @hookimpl
    def register_settings(self, register: Callable[[type[Any]], None]) -> None:
        from ._settings import TasksSettings

        register(TasksSettings)

    @hookimpl
    def register_events(self, register: Callable[[type[Event]], None]) -> None:
        from ._events import TASK_EVENTS

        for event in TASK_EVENTS:
            register(event)

    @hookimpl
    def register_commands(self, register: Callable[[Command], None]) -> None:
        register(Command(name="tasks", help="durable tasks: list, show, cancel, retry, "
                         "watch, work", run=lazy("adjutant_tasks._cli:run"),
                         configure=lazy("adjutant_tasks._cli:configure"),
                         needs=frozenset({"stores", "events", "settings_schemas",
                                          "task_capabilities", "providers"})))

    @hookimpl
    async def startup(self, kernel: Kernel) -> None:
        from adjutant.operator import key_value_store

        from ._queue import TaskQueue
        from ._runner import TaskRunner
        from ._settings import tasks_settings

        settings = tasks_settings(kernel)  # a bad plugins.tasks section stops the start
        kv = key_value_store(kernel)
        if kv is None:
            return  # no store: the commands and tools say so
        runner = TaskRunner(kernel, TaskQueue(kv, kernel.home), settings)
        self.runner = runner
        if settings.workers and self.run_workers:
            await self.start_workers()

    async def start_workers(self) -> bool:
        """Recover and run tasks in the background of this process (False: another
        process holds the runner lock, or no store)."""
        from ._spawn import spawn

        runner = self.runner
        if runner is None or self._stop is not None:
            return self._stop is not None
        if not runner.acquire():
            return False
        await runner.recover()
        self._stop = spawn(runner.serve, "adjutant-tasks runner")
        return True

    @hookimpl
    async def shutdown(self, kernel: Kernel) -> None:
        stop, self._stop = self._stop, None
        if stop is not None:
            await stop()
        if self.runner is not None:
            self.runner.release()
        self.runner = None


def plugin_of(kernel: Kernel) -> TasksPlugin | None:
    """This kernel's `TasksPlugin` instance, whatever name it was loaded under."""
    for info in kernel.plugins:
        plugin = kernel.plugin(info.name)
        if isinstance(plugin, TasksPlugin):
            return plugin
    return None


def runner_for(kernel: Kernel) -> TaskRunner:
    """The task runner of a started kernel with the adjutant-tasks plugin."""
    plugin = plugin_of(kernel)
    if plugin is None or plugin.runner is None:
        raise LookupError("no task queue in this kernel: load the adjutant-tasks plugin and "
                          "a key/value store (adjutant-lmdb), and start the kernel")
    return plugin.runner


def queue_for(kernel: Kernel) -> TaskQueue:
    return runner_for(kernel).queue
