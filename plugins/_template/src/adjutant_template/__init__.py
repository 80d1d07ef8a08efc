"""``template.echo``, a read-only tool, and ``template.append``, a write. Replace them
with yours.

The ``adjutant`` entry point names this module; the kernel imports it at start-up
and calls each ``@hookimpl`` function here; other hooks of
``adjutant_hookspecs.AdjutantSpec`` (``register_policies``, ``startup``, ...) are
written the same way. Keep it cheap to import: heavy libraries (HTTP clients,
models, numpy, anyio) go inside the methods that use them, as
``tests/test_plugin.py`` checks.

A plugin that keeps something per kernel (a connection, a cache, a service) or has
settings of its own is a class instead: the entry point names it (``module:Class``),
each kernel gets one instance holding that state, and ``register_settings`` declares
an attrs class read with ``kernel.plugin_settings``. adjutant-tts's ``_plugin.py`` is
that shape, and the plugin guide shows it.
"""

from __future__ import annotations

from collections.abc import Callable

from adjutant_hookspecs import (
    ExecutionResult,
    Tool,
    ToolCall,
    ToolContext,
    ToolDeclaration,
    ToolSafety,
    hookimpl,
)

__all__ = ["Append", "Echo", "register_tools"]


class Echo:
    """Return the ``text`` argument. Read-only, no side effects."""

    # What the operator plans with and the safety pipeline checks: a strict schema,
    # an honest safety level, examples that fit the schema (checked at registration).
    # Mark paths with "x-adjutant-role": "path" so policies can judge them. `summary`
    # says a call in plain words, first in every question ("Echo hello").
    declaration = ToolDeclaration(
        name="template.echo",
        version="0.1.0",
        summary="Echo {text}",
        description="Echo the given text back.",
        args_schema={
            "type": "object",
            "properties": {"text": {"type": "string", "description": "The text to echo."}},
            "required": ["text"],
            "additionalProperties": False,
        },
        safety=ToolSafety(writes=False, level="read", network=False),
        examples=({"text": "hello"},),
    )

    async def dry_run(self, call: ToolCall, ctx: ToolContext) -> ExecutionResult:
        # Describe exactly what execute would do, and do none of it: an approval is
        # bound to this preview, so it must be the same every time for the same call.
        text = call.args.get("text")
        if not isinstance(text, str):
            return _error(call, "template.echo: `text` must be a string")
        return ExecutionResult(tool=call.tool, args=dict(call.args), status="dry_run",
                               dry_run_diff=f"echo {text!r}")

    async def execute(self, call: ToolCall, ctx: ToolContext) -> ExecutionResult:
        # Checked here too: a tool can be called without the kernel's schema check
        # (directly, as in the tests). A failure is a result, never a raise.
        text = call.args.get("text")
        if not isinstance(text, str):
            return _error(call, "template.echo: `text` must be a string")
        return ExecutionResult(tool=call.tool, args=dict(call.args), status="ok",
                               stdout=f"{text}\n")


class Append:
    """Add a line to the end of an existing text file: a write, so the operator shows
    its exact diff and asks before it runs, in every mode. Files are touched through
    `adjutant.toolkit` (imported on use): confined to the run's cages, opened without
    following links, written atomically and only if the file still holds what the
    preview showed."""

    declaration = ToolDeclaration(
        name="template.append",
        version="0.1.0",
        summary="Add a line to {path}",
        description="Add one line of text to the end of an existing text file.",
        args_schema={
            "type": "object",
            "properties": {
                "path": {"type": "string", "minLength": 1, "x-adjutant-role": "path",
                         "description": "The file, relative to the working directory."},
                "line": {"type": "string", "description": "The line to add."},
            },
            "required": ["path", "line"],
            "additionalProperties": False,
        },
        safety=ToolSafety(writes=True, level="write", network=False),
        examples=({"path": "notes.txt", "line": "buy milk"},),
    )

    async def dry_run(self, call: ToolCall, ctx: ToolContext) -> ExecutionResult:
        from adjutant.toolkit import Refused, refusal, unified_diff

        try:
            path, old, new = _appended(call, ctx)
        except Refused as exc:
            return refusal(call, exc)
        return ExecutionResult(tool=call.tool, args=dict(call.args), status="dry_run",
                               dry_run_diff=unified_diff(path, old, new),
                               summary=f"Add 1 line to {path}")

    async def execute(self, call: ToolCall, ctx: ToolContext) -> ExecutionResult:
        from adjutant.toolkit import Refused, refusal, write_text

        try:
            path, old, new = _appended(call, ctx)
            write_text(ctx, path, new, expect=old)  # refused if it changed meanwhile
        except Refused as exc:
            return refusal(call, exc)
        return ExecutionResult(tool=call.tool, args=dict(call.args), status="ok",
                               stdout=f"added a line to {path}\n")


def _appended(call: ToolCall, ctx: ToolContext) -> tuple[str, str, str]:
    """The path, the file's text now, and its text with the line added."""
    from adjutant.toolkit import Refused, read_text

    path, line = call.args.get("path"), call.args.get("line")
    if not isinstance(path, str) or not isinstance(line, str) or "\n" in line:
        raise Refused("argument", "`path` and `line` must be strings, `line` a single line")
    old = read_text(ctx, path) or ""
    return path, old, old + ("\n" if old and not old.endswith("\n") else "") + line + "\n"


def _error(call: ToolCall, message: str) -> ExecutionResult:
    return ExecutionResult(tool=call.tool, args=dict(call.args), status="error", stderr=message)


@hookimpl
def register_tools(register: Callable[[Tool], None]) -> None:
    """Called once when the kernel loads the plugin: hand it every tool."""
    register(Echo())
    register(Append())
