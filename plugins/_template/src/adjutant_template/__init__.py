"""``template.echo``: a read-only tool. Replace it with yours.

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

__all__ = ["Echo", "register_tools"]


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


def _error(call: ToolCall, message: str) -> ExecutionResult:
    return ExecutionResult(tool=call.tool, args=dict(call.args), status="error", stderr=message)


@hookimpl
def register_tools(register: Callable[[Tool], None]) -> None:
    """Called once when the kernel loads the plugin: hand it every tool."""
    register(Echo())
