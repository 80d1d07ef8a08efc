"""`TaskQueue`: tasks kept in the profile's key/value store (LMDB by default).

Every change is one ``put`` of the whole task, durable when it returns: a process
killed at any point leaves each task as it was last written, never half of it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from ._model import FINISHED, Task, canonical_json, input_hash, new_task_id

if TYPE_CHECKING:
    from adjutant_hookspecs import KeyValueStore, TaskCapability

__all__ = ["TaskQueue", "TaskStateError", "UnknownTaskError"]

TASK = "tasks/t/"
CHECKPOINT = "tasks/c/"
IDEMPOTENCY = "tasks/k/"


class UnknownTaskError(LookupError):
    """No task has that id."""


class TaskStateError(ValueError):
    """The task cannot do that in its status (cancel a finished task, retry a done one)."""


class TaskQueue:
    """The durable queue of one data home.

    :param kv: the profile's key/value store.
    :param home: the data home (artifacts go to ``runs/YYYY-MM-DD/copilot/<id>/``).
    """

    def __init__(self, kv: KeyValueStore, home: Path, *,
                 clock: Callable[[], float] = time.time) -> None:
        self.kv = kv
        self.home = home
        self.clock = clock

    # -- reading ------------------------------------------------------------------------

    async def get(self, task_id: str) -> Task | None:
        if not task_id or "/" in task_id:
            return None
        raw = await self.kv.get(TASK + task_id)
        return None if raw is None else msgspec.json.decode(raw, type=Task)

    async def require(self, task_id: str) -> Task:
        task = await self.get(task_id)
        if task is None:
            raise UnknownTaskError(f"no task {task_id!r} (adjutant tasks list shows them)")
        return task

    async def all(self) -> list[Task]:
        """Every task, oldest first."""
        return [msgspec.json.decode(raw, type=Task) async for _, raw in self.kv.scan(TASK)]

    # -- writing ------------------------------------------------------------------------

    async def save(self, task: Task) -> Task:
        task = msgspec.structs.replace(task, updated_at=self.clock())
        await self.kv.put(TASK + task.id, msgspec.json.encode(task))
        return task

    def artifact_dir(self, task_id: str, created: float) -> Path:
        day = time.strftime("%Y-%m-%d", time.localtime(created))
        return self.home / "runs" / day / "copilot" / task_id

    async def enqueue(self, capability: TaskCapability, inputs: Mapping[str, Any], *,
                      run_at: float | None = None, parent_run: str | None = None,
                      idempotency_key: str | None = None,
                      max_attempts: int = 3) -> tuple[Task, bool]:
        """Queue ``capability`` with ``inputs``; returns the task and whether it is new
        (False: a task with ``idempotency_key`` exists, and that one is returned)."""
        if not isinstance(inputs, Mapping):
            raise TypeError(f"task inputs must be a JSON object, got {type(inputs).__name__}")
        try:
            plain = msgspec.json.decode(canonical_json(dict(inputs)))
        except (TypeError, msgspec.EncodeError) as exc:
            raise ValueError(f"task inputs must be JSON values: {exc}") from None
        now = self.clock()
        task_id = new_task_id(now)
        if idempotency_key is not None:
            if not idempotency_key or len(idempotency_key.encode()) > 200:
                raise ValueError("an idempotency key must be 1 to 200 bytes")
            key = IDEMPOTENCY + idempotency_key
            known = await self.kv.get(key)
            if known is not None:
                existing = await self.get(known.decode())
                if existing is not None:
                    return existing, False
                task_id = known.decode()  # the key was written, the task was not: make it
            else:
                await self.kv.put(key, task_id.encode())  # the key first: a crash between
                # the two writes leaves a key naming a task still to be made, never a
                # task a second delivery would make again
        task = Task(id=task_id, capability=capability.name, inputs=plain,
                    input_hash=input_hash(plain), status="queued",
                    resource=capability.resource, timeout_s=float(capability.timeout_s),
                    max_attempts=max_attempts if capability.retryable else 1,
                    created_at=now, updated_at=now, run_at=now if run_at is None else run_at,
                    artifacts=str(self.artifact_dir(task_id, now)), parent_run=parent_run,
                    idempotency_key=idempotency_key)
        return await self.save(task), True

    async def cancel(self, task_id: str) -> Task:
        """Cancel a task: one not running ends at once; a running one is asked to stop
        (the runner stops it and marks it ``cancelled``)."""
        task = await self.require(task_id)
        if task.status in FINISHED:
            raise TaskStateError(f"task {task_id} is already {task.status}")
        if task.status == "running":
            return await self.save(msgspec.structs.replace(task, cancel_requested=True))
        now = self.clock()
        return await self.save(msgspec.structs.replace(
            task, status="cancelled", finished_at=now, message="cancelled before it ran"
            if task.attempts == 0 else "cancelled"))

    async def retry(self, task_id: str) -> Task:
        """Queue a failed or cancelled task again, with its attempts counted afresh."""
        task = await self.require(task_id)
        if task.status not in ("failed", "cancelled"):
            raise TaskStateError(f"task {task_id} is {task.status}: only a failed or "
                                 "cancelled task is retried")
        return await self.save(msgspec.structs.replace(
            task, status="queued", attempts=0, error=None, finished_at=None,
            cancel_requested=False, run_at=self.clock(), message="retried by the user"))

    # -- checkpoints --------------------------------------------------------------------

    async def save_checkpoint(self, task_id: str, state: Any) -> None:
        await self.kv.put(CHECKPOINT + task_id, msgspec.json.encode(state))

    async def load_checkpoint(self, task_id: str) -> Any:
        raw = await self.kv.get(CHECKPOINT + task_id)
        return None if raw is None else msgspec.json.decode(raw)
