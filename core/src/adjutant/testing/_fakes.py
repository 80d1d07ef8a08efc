"""Small real tools for tests of operators, policies and frontends: `FakeRead` and
`FakeWrite` work on the files below the call's working directory (no cage of their
own: they exist to be judged by the pipeline, not to defend themselves), and
`fake_tools` registers them as a plugin::

    async with Harness(fake_tools(FakeRead("notes.read"), FakeWrite("notes.write"))) as h:
        ...
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from adjutant_hookspecs import (
    ARG_ROLE,
    ExecutionResult,
    ToolCall,
    ToolContext,
    ToolDeclaration,
    ToolSafety,
    hookimpl,
)

__all__ = ["FakeRead", "FakeWrite", "fake_tools"]

#: A path argument the policies judge (``x-adjutant-role: path``).
PATH = {"type": "string", "minLength": 1, ARG_ROLE: "path"}


class FakeRead:
    """Reads a text file (``path``, relative to the working directory or absolute).
    Preview: ``read PATH``; a missing file is an error result."""

    def __init__(self, name: str = "fake.read") -> None:
        self.declaration = ToolDeclaration(
            name=name, version="1", description="Read a text file.",
            args_schema={"type": "object", "properties": {"path": PATH}, "required": ["path"],
                         "additionalProperties": False},
            examples=({"path": "notes.txt"},))

    async def dry_run(self, call: ToolCall, ctx: ToolContext) -> ExecutionResult:
        return ExecutionResult(tool=call.tool, args=call.args, status="dry_run",
                               dry_run_diff=f"read {call.args['path']}")

    async def execute(self, call: ToolCall, ctx: ToolContext) -> ExecutionResult:
        try:
            text = _read(Path(ctx.cwd, call.args["path"]))
        except OSError as exc:
            return ExecutionResult(tool=call.tool, args=call.args, status="error",
                                   stderr=f"{call.tool}: {exc.strerror or exc}\n")
        return ExecutionResult(tool=call.tool, args=call.args, status="ok", stdout=text)


class FakeWrite:
    """Writes ``text`` (default empty) to ``path``. Preview: ``create PATH`` for a new
    file, then the unified diff (``(no change)`` when there is none).

    :param level: ``write`` or ``destructive`` (what the policies see).
    """

    def __init__(self, name: str = "fake.write",
                 level: Literal["write", "destructive"] = "write") -> None:
        self.declaration = ToolDeclaration(
            name=name, version="1", description="Write a text file.",
            args_schema={"type": "object",
                         "properties": {"path": PATH, "text": {"type": "string"}},
                         "required": ["path"], "additionalProperties": False},
            safety=ToolSafety(writes=True, level=level),
            examples=({"path": "notes.txt", "text": "hello\n"},))

    async def dry_run(self, call: ToolCall, ctx: ToolContext) -> ExecutionResult:
        path = call.args["path"]
        target = Path(ctx.cwd, path)
        old = _read(target) if _exists(target) else None
        diff = "".join(difflib.unified_diff((old or "").splitlines(True),
                                            call.args.get("text", "").splitlines(True),
                                            f"a/{path}", f"b/{path}"))
        preview = (f"create {path}\n" if old is None else "") + (diff or "(no change)")
        return ExecutionResult(tool=call.tool, args=call.args, status="dry_run",
                               dry_run_diff=preview)

    async def execute(self, call: ToolCall, ctx: ToolContext) -> ExecutionResult:
        target = Path(ctx.cwd, call.args["path"])
        _write(target, call.args.get("text", ""))
        return ExecutionResult(tool=call.tool, args=call.args, status="ok",
                               artifacts=(str(target),))


# Small synchronous file operations: a fake tool's files are tiny and local.
def _read(path: Path) -> str:
    return path.read_text()


def _exists(path: Path) -> bool:
    return path.is_file()


def _write(path: Path, text: str) -> None:
    path.write_text(text)


def fake_tools(*tools: Any, name: str = "fake-tools") -> Any:
    """A plugin (named ``name``) that registers ``tools``."""

    class FakeTools:
        @hookimpl
        def register_tools(self, register: Callable[[Any], None]) -> None:
            for tool in tools:
                register(tool)

    plugin = FakeTools()
    plugin.name = name  # type: ignore[attr-defined]
    return plugin
