"""`TasksPlugin`: adjutant-tasks as the kernel sees it. One instance per kernel (the
entry point names the class); the kernel's queue and its in-process runner live on
that instance and nowhere else."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

from adjutant_hookspecs import Command, hookimpl, lazy

if TYPE_CHECKING:
    from adjutant_hookspecs import Event, Kernel, TaskCapability, Tool

    from ._notify import Notifier
    from ._queue import Task, TaskQueue
    from ._runner import Runner

__all__ = ["TasksPlugin", "tasks_of"]


class TasksPlugin:
    """Durable tasks: settings, ``task.*`` events, the ``tasks`` command, the
    ``schedule.task`` and ``doc.summarize`` tools, the ``doc.summarize`` capability,
    and the kernel's queue from ``startup`` to ``shutdown``."""

    name = "tasks"

    def __init__(self) -> None:
        self.kernel: Kernel | None = None
        self._queue: TaskQueue | None = None
        self.runner: Runner | None = None
        self._stop: Callable[[], Awaitable[None]] | None = None
        self._stop_watch: Callable[[], Awaitable[None]] | None = None
        self._notifier: Notifier | None = None

    @hookimpl
    def register_settings(self, register: Callable[[type[Any]], None]) -> None:
        from ._settings import TasksSettings

        register(TasksSettings)

    @hookimpl
    def register_events(self, register: Callable[[type[Event]], None]) -> None:
        from ._events import TASK_EVENTS
        from ._notify import Notification

        events: tuple[type[Event], ...] = (*TASK_EVENTS, Notification)
        for event in events:
            register(event)

    @hookimpl
    def register_commands(self, register: Callable[[Command], None]) -> None:
        register(Command(name="tasks", help="durable tasks: list, show, cancel, retry, "
                         "approve, deny, watch, run the queue",
                         run=lazy("adjutant_tasks._cli:run"),
                         configure=lazy("adjutant_tasks._cli:configure")))
        register(Command(name="automations", help="automation flows: list, add, enable, "
                         "disable, run", run=lazy("adjutant_tasks._autocli:run"),
                         configure=lazy("adjutant_tasks._autocli:configure")))

    @hookimpl
    def register_tools(self, register: Callable[[Tool], None]) -> None:
        from ._doctool import DocSummarize
        from ._tools import ScheduleTask

        register(ScheduleTask(self))
        register(DocSummarize(self))

    @hookimpl
    def register_task_capabilities(self, register: Callable[[TaskCapability], None]) -> None:
        from ._summarize import SummarizeCapability
        from ._toolcall import ToolCallCapability

        register(SummarizeCapability())
        register(ToolCallCapability())
        from ._automations import AutomationCapability

        register(AutomationCapability(notify=self.notify))

    @hookimpl
    async def startup(self, kernel: Kernel) -> None:
        from ._settings import tasks_settings

        settings = tasks_settings(kernel)  # a bad plugins.tasks section stops the start
        self.kernel = kernel
        if (kernel.home / "automations").is_dir():  # each stored flow as a tool
            self.mount_flows()
        if settings.run_in_process:
            # Not at start-up (every `adjutant` command starts the kernel, `tasks list`
            # too): the first run of an operator here (chat, dock, `adjutant run`)
            # starts the runner when tasks are open, so what a crash left resumes.
            from adjutant_hookspecs import RunStarted

            runs = kernel.bus.subscribe(types=[RunStarted])  # now: the first run is seen
            self._stop_watch = _spawn(lambda: self._resume_on_first_run(runs))

    @hookimpl
    async def shutdown(self, kernel: Kernel) -> None:
        watch, self._stop_watch = self._stop_watch, None
        if watch is not None:
            await watch()
        stop, self._stop = self._stop, None
        if stop is not None:
            await stop()
        self.runner, self._queue, self.kernel = None, None, None
        self._notifier = None

    # -- the queue, for tools, commands and other plugins ---------------------------------

    async def notify(self, note: Any, *, source: str = "tasks") -> Any:
        """A notification (a flow's step, a task waiting for a human): always on the bus,
        on the desktop where it has one (`adjutant_tasks._notify`), throttled."""
        return await self.notifier.send(note, source=source)

    @property
    def notifier(self) -> Notifier:
        """This kernel's `Notifier` (made on first use)."""
        if self._notifier is None:
            from ._notify import Notifier

            self._notifier = Notifier(self.started())
        return self._notifier

    def mount_flows(self) -> dict[str, str]:
        """(Re)mount each stored flow as the tool ``flow.<name>``; returns those refused."""
        from ._flowtool import flow_tools

        kernel = self.started()
        return kernel.mount_tools(kernel.plugin_name(self), "flow.", flow_tools(self))

    def started(self) -> Kernel:
        if self.kernel is None:
            raise RuntimeError("adjutant-tasks: the kernel is not started (async with kernel)")
        return self.kernel

    @property
    def queue(self) -> TaskQueue:
        """This kernel's durable queue (in the profile's key/value store)."""
        if self._queue is None:
            from ._queue import TaskQueue, key_value_store

            self._queue = TaskQueue(key_value_store(self.started()))
        return self._queue

    async def submit(self, capability: str, inputs: Mapping[str, Any], *,
                     not_before: float | None = None, parent_run: str | None = None,
                     idempotency_key: str | None = None) -> tuple[Task, bool]:
        """Queue ``capability`` with ``inputs`` (see `adjutant_tasks._runner.enqueue`)
        and make sure something runs the queue."""
        from ._runner import enqueue
        from ._settings import tasks_settings

        kernel = self.started()
        task, new = await enqueue(kernel, self.queue, capability, inputs,
                                  settings=tasks_settings(kernel), not_before=not_before,
                                  parent_run=parent_run, idempotency_key=idempotency_key)
        self.ensure_runner()
        return task, new

    async def _resume_on_first_run(self, runs: AsyncIterator[Any]) -> None:
        async for _ in runs:
            try:
                if await self.queue.open_ids():
                    self.ensure_runner()
            except LookupError:  # no key/value store: no queue to run
                pass
            return

    def ensure_runner(self) -> None:
        """Run the queue in this process, in the background, unless another process
        does (``adjutant tasks run``) or ``run_in_process`` is off."""
        from ._runner import Runner, runner_pid
        from ._settings import tasks_settings

        kernel = self.started()
        if self.runner is not None:
            if self.runner.serving:
                self.runner.wake()
                return
            if self._stop is not None:  # started, not yet serving: it will look
                return
        settings = tasks_settings(kernel)
        if not settings.run_in_process or runner_pid(kernel.home) is not None:
            return
        self.runner = runner = Runner(kernel, self.queue, settings)
        self._stop = _spawn(runner.serve)


def tasks_of(kernel: Kernel) -> TasksPlugin:
    """This kernel's `TasksPlugin` instance, whatever name it was loaded under."""
    for info in kernel.plugins:
        plugin = kernel.plugin(info.name)
        if isinstance(plugin, TasksPlugin):
            return plugin
    raise LookupError("adjutant-tasks is not loaded in this kernel")


def _spawn(function: Callable[[], Awaitable[None]]) -> Callable[[], Awaitable[None]]:
    from adjutant import spawn_service

    return spawn_service(function, name="adjutant-tasks runner", plugin="tasks")
