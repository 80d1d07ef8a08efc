"""The Tasks view's endpoints: adjutant-tasks' durable queue, as ``adjutant tasks
list|show`` shows it, and what the user does with a task.

The runner may live in another process (``adjutant tasks run``), whose bus the dock
cannot see, so the page polls the queue (every 1.5 s while the view is open), as the
Co-Pilot panel does.

- ``GET /api/tasks`` (``?status=open|all``, default all; ``limit``, default 50): ``{tasks,
  runner}``, newest first; each task with its status, progress, message, error,
  outputs, artifact folder and files, and the question it waits for (tool, arguments,
  preview, reasons, digest); nesting: ``parent_task`` (the task it is nested in),
  ``children`` (its nested tasks' ids) and ``waiting_on`` (the child it waits for).
  Handed-off tasks' news is copied from the Celery ledger first when no runner is
  alive. Without adjutant-tasks: 503 naming what to install.
- ``POST /api/tasks/answer`` ``{task, action: "approve"|"deny", digest}``: the step the
  task waits for, answered bound to ``digest`` (the question the page showed): a
  question that changed since is refused (409) and the page shows the new one. Logged
  first (``dock_task``), then as ``adjutant tasks approve`` does it (``tasks_answer``).
- ``POST /api/tasks/cancel`` and ``/api/tasks/retry`` ``{task}``: as ``adjutant tasks
  cancel|retry`` (409 when the task's status does not allow it).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import anyio.to_thread
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from . import _peers
from ._records import DockTaskRecord
from ._state import dock_of, error, read_json

if TYPE_CHECKING:
    from adjutant_hookspecs import Kernel

__all__ = ["TASKS_MISSING", "routes"]

TASKS_MISSING = ("the Tasks view needs the adjutant-tasks plugin: pip install adjutant-tasks "
                 "(then restart the dock)")
#: A task id as the queue makes them (20 hex digits).
_TASK_ID = frozenset("0123456789abcdef")
#: The most artifact file names shown per task.
MAX_FILES = 20
DIGEST_LEN = 64


def _installed(kernel: Kernel) -> bool:
    return _peers.declares(kernel, "task.queued")


def _task_id(value: Any) -> str | None:
    return value if isinstance(value, str) and len(value) == 20 and set(value) <= _TASK_ID \
        else None


def _files(folder: str) -> list[dict[str, Any]]:
    """The artifact folder's files (names and sizes; blocking; never followed out)."""
    if not folder:
        return []
    found: list[dict[str, Any]] = []
    try:
        with os.scandir(folder) as entries:
            for entry in sorted(entries, key=lambda e: e.name):
                if len(found) >= MAX_FILES:
                    break
                if entry.is_file(follow_symlinks=False):
                    found.append({"name": entry.name,
                                  "size": entry.stat(follow_symlinks=False).st_size})
    except OSError:
        return []
    return found


def _shown(task: Any) -> dict[str, Any]:
    import msgspec

    shown: dict[str, Any] = msgspec.to_builtins(task)
    shown["files"] = _files(task.artifacts)
    shown["finished"] = task.finished
    return shown


async def _plugin(kernel: Kernel) -> Any:
    from adjutant_tasks import tasks_of

    return tasks_of(kernel)


async def listing(request: Request) -> Response:
    kernel = dock_of(request).kernel
    if not _installed(kernel):
        return error(503, TASKS_MISSING, missing=TASKS_MISSING)
    params = request.query_params
    if unknown := set(params) - {"status", "limit"}:
        return error(400, f"unknown parameter(s): {', '.join(sorted(unknown))} (status, limit)")
    status = params.get("status", "all")
    if status not in ("open", "all"):
        return error(400, f"status is open or all, not {status!r}")
    raw = params.get("limit", "50")
    if not raw.isdigit() or not 1 <= int(raw) <= 1000:
        return error(400, f"limit must be a whole number from 1 to 1000, not {raw!r}")
    from adjutant_tasks import tasks_settings
    from adjutant_tasks._runner import runner_pid

    plugin = await _plugin(kernel)
    try:
        queue = plugin.queue
        settings = tasks_settings(kernel)
        if settings.broker is not None:  # handed-off tasks: their news first
            from adjutant_tasks._celery import reconcile_if_owner

            await reconcile_if_owner(kernel, queue, settings)
        tasks = [task async for task in queue.all()]
    except LookupError as exc:  # no key/value store: what to install
        return error(503, str(exc))
    children: dict[str, list[str]] = {}  # nested tasks (``run_child``), by parent
    for t in tasks:
        if t.parent_task is not None:
            children.setdefault(t.parent_task, []).append(t.id)
    if status == "open":
        tasks = [t for t in tasks if not t.finished]
    tasks.reverse()  # ids sort by creation: newest first
    tasks = tasks[:int(raw)]
    shown = await anyio.to_thread.run_sync(lambda: [_shown(t) for t in tasks])
    for entry in shown:
        entry["children"] = children.get(entry["id"], [])
    pid = runner_pid(Path(kernel.home))
    here = plugin.runner is not None and plugin.runner.serving
    return JSONResponse({"tasks": shown, "runner": {
        "alive": here or pid is not None, "pid": os.getpid() if here else pid,
        "here": here, "broker": None if settings.broker is None else
        _label(settings.broker)}})


def _label(broker: str) -> str:
    from adjutant_tasks._celery import broker_label

    return broker_label(broker)


async def _find(kernel: Kernel, given: Any) -> tuple[Any, Any, Response | None]:
    """The plugin and the task the body names, or the refusal."""
    from adjutant_tasks import UnknownTaskError

    task_id = _task_id(given.get("task"))
    if task_id is None:
        return None, None, error(400, "send {\"task\": a task's id (20 hex digits)}")
    plugin = await _plugin(kernel)
    try:
        task = await plugin.queue.get(task_id)
    except LookupError as exc:
        return None, None, error(503, str(exc))
    if task is None:
        return None, None, error(404, str(UnknownTaskError(f"no task {task_id!r}")))
    return plugin, task, None


async def answer(request: Request) -> Response:
    dock = dock_of(request)
    kernel = dock.kernel
    if not _installed(kernel):
        return error(503, TASKS_MISSING, missing=TASKS_MISSING)
    body = await read_json(request)
    given = body if isinstance(body, dict) else {}
    action, digest = given.get("action"), given.get("digest")
    if action not in ("approve", "deny") or not (
            isinstance(digest, str) and len(digest) == DIGEST_LEN
            and set(digest) <= _TASK_ID):
        return error(400, "send {\"task\", \"action\": \"approve\" or \"deny\", \"digest\": "
                     "the digest of the question shown}")
    plugin, task, refused = await _find(kernel, given)
    if refused is not None:
        return refused
    from adjutant_tasks import TaskControlError, answer_task

    await dock.copilot.log.record(DockTaskRecord(task_id=task.id, action=action,
                                                 digest=digest))
    try:
        after = await answer_task(kernel, plugin.queue, task, action, digest=digest,
                                  by=f"user (the dock, pid {os.getpid()})")
    except TaskControlError as exc:
        now = await plugin.queue.get(task.id)
        return error(409, str(exc), task=None if now is None else _shown(now))
    return JSONResponse({"task": await anyio.to_thread.run_sync(_shown, after)})


async def _change(request: Request, op: str) -> Response:
    dock = dock_of(request)
    kernel = dock.kernel
    if not _installed(kernel):
        return error(503, TASKS_MISSING, missing=TASKS_MISSING)
    body = await read_json(request)
    plugin, task, refused = await _find(kernel, body if isinstance(body, dict) else {})
    if refused is not None:
        return refused
    from adjutant_tasks import TaskControlError, change_task

    await dock.copilot.log.record(DockTaskRecord(task_id=task.id, action=op))
    try:
        after = await change_task(kernel, plugin.queue, task, op)  # type: ignore[arg-type]
    except TaskControlError as exc:
        return error(409, str(exc))
    return JSONResponse({"task": await anyio.to_thread.run_sync(_shown, after)})


async def cancel(request: Request) -> Response:
    return await _change(request, "cancel")


async def retry(request: Request) -> Response:
    return await _change(request, "retry")


routes = [
    Route("/api/tasks", listing),
    Route("/api/tasks/answer", answer, methods=["POST"]),
    Route("/api/tasks/cancel", cancel, methods=["POST"]),
    Route("/api/tasks/retry", retry, methods=["POST"]),
]
