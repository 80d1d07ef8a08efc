"""Durable tasks: the protocol of a task capability (work that outlives a request) and
the context the task runner hands it.

A capability is named work the runner can queue: summarise PDFs, OCR a scan, say a
text aloud. It names the resource it needs (``model``, ``cpu``, ...; the runner runs
one task at a time per resource), a timeout, and whether its failures may be retried.
Its ``run`` gets a `TaskContext`: the inputs, a progress callback, a checkpoint it can
save and load (a task resumed after a crash starts from its last checkpoint), the
task's artifact folder and the kernel; and, for work that needs the user, a tool call
through the operator's pipeline and a yes/no question, both of which wait for the
human durably (the attempt ends; the task waits across restarts until answered).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from pathlib import Path

    from ._kernel import Kernel

__all__ = ["ChildTaskFailed", "TaskCapability", "TaskContext", "TaskFailed"]


class TaskFailed(Exception):
    """A capability's failure with a reason; ``retryable`` says whether running it
    again may succeed (the runner retries up to its bound, and only then)."""

    def __init__(self, message: str, *, retryable: bool = False) -> None:
        super().__init__(message)
        self.retryable = retryable


class ChildTaskFailed(TaskFailed):
    """`TaskContext.run_child`: the nested task ended without its outputs: ``status``
    is ``failed`` (``error`` says why: a step the user denied, its own failure) or
    ``cancelled``. The parent's code decides what that means (raise it to fail too)."""

    def __init__(self, task_id: str, capability: str, status: str, error: str | None) -> None:
        super().__init__(f"nested task {task_id} ({capability}) {status}: "
                         f"{error or 'no reason given'}", retryable=False)
        self.task_id, self.capability, self.status, self.error = (task_id, capability,
                                                                  status, error)


@runtime_checkable
class TaskContext(Protocol):
    """What a running task sees. ``inputs`` are JSON values, as queued; ``attempt``
    counts from 1; ``artifacts`` is ``<home>/runs/YYYY-MM-DD/copilot/<task id>/``."""

    task_id: str
    inputs: Mapping[str, Any]
    attempt: int
    artifacts: Path
    kernel: Kernel

    async def progress(self, fraction: float, message: str = "") -> None:
        """Report progress (0.0 to 1.0) with a short message; kept and published."""
        ...

    async def save_checkpoint(self, state: Any) -> None:
        """Durably keep ``state`` (JSON values): a resumed task gets it back."""
        ...

    async def load_checkpoint(self) -> Any:
        """The last saved checkpoint (None: none, a fresh start)."""
        ...

    async def call_tool(self, step: str, tool: str, args: Mapping[str, Any], *,
                        cwd: str | None = None) -> Any:
        """Run one tool call through the operator's whole pipeline (schema, mode,
        policies and cages for ``cwd``, write-gate, preview, action log); returns its
        ``ExecutionResult``. Where the step needs the user's approval it is not run:
        the attempt ends (an exception the runner handles; let it through) and the task
        waits for a human with the exact preview, across restarts. Answered, the task
        runs again from its checkpoint and this call, with the same ``step`` and the
        same preview, uses the answer; a changed preview is asked again. Only where
        the task was queued (see ``TaskCapability.needs_human``)."""
        ...

    async def confirm(self, step: str, what: str, question: str) -> bool:
        """Ask the user ``question`` (about ``what``) the same durable way: True for
        yes, False for no, once answered; until then the attempt ends and the task
        waits for a human."""
        ...

    async def run_child(self, step: str, capability: str,
                        inputs: Mapping[str, Any]) -> Mapping[str, Any]:
        """Run ``capability`` with ``inputs`` as a nested task of this one and return
        its outputs. It is queued once per ``step`` (its idempotency key is this task
        and ``step``), runs on this machine, and is shown as this task's child. Until
        it has finished the attempt ends (an exception the runner handles; let it
        through) and this task waits: while the child waits for a human this task is
        ``waiting_for_human`` too, across restarts, and it is never released before
        the child has finished; then it runs again from its checkpoint and this call
        returns the child's outputs. A child that failed (a step the user denied
        included) or was cancelled raises `ChildTaskFailed`. Cancelling this task
        cancels the child."""
        ...


@runtime_checkable
class TaskCapability(Protocol):
    """Work the task runner can queue. ``name`` is unique (``doc.summarize``);
    ``resource`` names what it holds while it runs (``model``, ``cpu``); ``timeout_s``
    bounds one attempt; ``retryable``: whether failures that do not say otherwise may be
    retried. Optional: ``description`` (one line for listings); ``needs_human``
    (True: it may wait for the user through `TaskContext.call_tool` or ``confirm``, so
    it runs on the machine that queued it, never handed to another one's worker).

    ``run`` returns the outputs (JSON values). It raises `TaskFailed` to fail with a
    reason; any other exception fails the task with the exception as the reason.
    Blocking work (parsing a PDF) belongs in a worker thread (``anyio.to_thread``).
    Cancelling the caller stops the work."""

    name: str
    resource: str
    timeout_s: float
    retryable: bool

    async def run(self, context: TaskContext) -> Mapping[str, Any]: ...
