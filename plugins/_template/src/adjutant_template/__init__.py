"""``template.echo``: a copyable Adjutant plugin skeleton (see README.md to copy it).

When you copy this package:

- rename ``adjutant_template`` (this folder), the ``template.`` prefix of tool names
  and the entry point in ``pyproject.toml`` to your plugin's name;
- keep this module cheap to import: the kernel imports every installed plugin at
  start-up, so import heavy dependencies (HTTP clients, models, numpy, anyio)
  inside the methods that use them, as ``tests/test_plugin.py`` checks;
- replace `Echo` with your own tools, or implement other hooks from
  ``adjutant_hookspecs.AdjutantSpec`` (``register_providers``, ``register_policies``,
  ...) the same way: a ``@hookimpl`` function that calls ``register``.
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
    """``template.echo``: return the ``text`` argument. Read-only, no side effects."""

    # The declaration is what the operator plans with and what the safety pipeline
    # checks: keep the schema strict, the safety level honest and the examples valid.
    declaration = ToolDeclaration(
        name="template.echo",
        version="0.1.0",
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
        return ExecutionResult(
            tool=call.tool, args=dict(call.args), status="dry_run", dry_run_diff=f"echo {text!r}"
        )

    async def execute(self, call: ToolCall, ctx: ToolContext) -> ExecutionResult:
        # Checked here too: a tool can be called without the kernel's schema check
        # (directly, as in the tests), and reports a bad call as a result, not a raise.
        text = call.args.get("text")
        if not isinstance(text, str):
            return _error(call, "template.echo: `text` must be a string")
        return ExecutionResult(
            tool=call.tool, args=dict(call.args), status="ok", stdout=f"{text}\n"
        )


def _error(call: ToolCall, message: str) -> ExecutionResult:
    return ExecutionResult(tool=call.tool, args=dict(call.args), status="error", stderr=message)


@hookimpl
def register_tools(register: Callable[[Tool], None]) -> None:
    """Called once when the kernel loads the plugin: hand it every tool."""
    register(Echo())
