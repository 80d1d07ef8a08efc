"""What the Tasks view's tests share: a dock whose kernel loads adjutant-tasks (its
runner in the dock's process, as ``adjutant dock`` runs it) and a few task
capabilities that do real work in their artifact folders."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any

import anyio
import pytest

tasks = pytest.importorskip("adjutant_tasks", reason="the Tasks view shows its queue")

from dockkit import Dock, start_dock  # noqa: E402

from adjutant_hookspecs import TaskContext, TaskFailed, hookimpl  # noqa: E402

#: What a task may say: a bidi override, a terminal escape and markup, all shown as text.
HOSTILE = "report \u202etxt.exe\u202c \x1b[2J <img src=x onerror=\"document.title='owned'\">"


class Report:
    """``test.report``: writes ``report.txt``, says how far it is (``HOSTILE`` in its
    message), then holds at half way until the test lets it go (or it is cancelled)."""

    name, resource, timeout_s, retryable = "test.report", "cpu", 120.0, False

    def __init__(self) -> None:
        self.go = anyio.Event()

    async def run(self, context: TaskContext) -> Mapping[str, Any]:
        (context.artifacts / "report.txt").write_text("the report\n")
        await context.progress(0.5, HOSTILE)
        await self.go.wait()
        return {"pages": 3, "said": "<b>not bold</b>"}


class Broken:
    """``test.broken``: fails, saying it may not be retried."""

    name, resource, timeout_s, retryable = "test.broken", "other", 10.0, False

    async def run(self, context: TaskContext) -> Mapping[str, Any]:
        raise TaskFailed("the input is not a PDF", retryable=False)


class Parent:
    """``test.parent``: runs ``tool.call`` with its inputs as a nested task
    (``TaskContext.run_child``) and returns the child's outputs."""

    name, resource, timeout_s, retryable = "test.parent", "parent", 30.0, False
    needs_human = True

    async def run(self, context: TaskContext) -> Mapping[str, Any]:
        return {"child": dict(await context.run_child("write", "tool.call",
                                                      dict(context.inputs)))}


class Capabilities:
    def __init__(self) -> None:
        self.report = Report()

    @hookimpl
    def register_task_capabilities(self, register: Callable[[Any], None]) -> None:
        register(self.report)
        register(Broken())
        register(Parent())


@contextlib.asynccontextmanager
async def tasks_dock(**options: Any) -> AsyncIterator[tuple[Dock, Any, Capabilities]]:
    """A dock with adjutant-tasks (retry back-off 0) and `Capabilities`."""
    import adjutant_lmdb
    from adjutant import ModelPreset, Profile
    from adjutant.testing import ScriptedProvider

    plugin, caps = tasks.TasksPlugin(), Capabilities()
    profile = Profile(model=ModelPreset(provider=ScriptedProvider().name),
                      stores={"kv": "lmdb"},
                      plugins={"tasks": {"retry_backoff_s": 0.0, "poll_s": 0.1}})
    async with start_dock(plugins=(adjutant_lmdb, plugin, caps), profile=profile,
                          **options) as dock:
        yield dock, plugin, caps


async def until(check: Callable[[], Any], limit: float = 20.0) -> Any:
    """Poll ``check`` (async) until it returns something truthy (the queue is in
    another store's hands: polled, as the page does)."""
    with anyio.fail_after(limit):
        while not (found := await check()):  # noqa: ASYNC110
            await anyio.sleep(0.05)
    return found


def write_call(workspace: Any, text: str = "from a task\n") -> dict[str, Any]:
    """``tool.call`` inputs: the dock's fake ``notes.write`` of ``b.txt``."""
    return {"tool": "notes.write", "cwd": str(workspace),
            "args": {"path": "b.txt", "text": text}}
