"""``tool.call``: one registered tool call as a durable task, through the pipeline.

Inputs: ``tool``, ``args`` (JSON object), ``cwd`` (optional: the working directory
of the call, whose cages apply). Where the step needs an approval, the task waits for
a human (``waiting_for_human``) across restarts; see ``_human``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from adjutant_hookspecs import TaskContext, TaskFailed

__all__ = ["ToolCallCapability"]


class ToolCallCapability:
    name = "tool.call"
    description = "one tool call through the safety pipeline (waits for approval durably)"
    resource = "tools"
    timeout_s = 600.0
    retryable = False

    async def run(self, context: TaskContext) -> Mapping[str, Any]:
        tool, args = context.inputs.get("tool"), context.inputs.get("args", {})
        if not isinstance(tool, str) or not isinstance(args, Mapping):
            raise TaskFailed("tool.call needs `tool` (a name) and `args` (an object)")
        cwd = context.inputs.get("cwd")
        result = await context.call_tool(
            "call", tool, args, cwd=cwd if isinstance(cwd, str) else None)
        if result.status != "ok":
            raise TaskFailed(f"{tool}: {result.status}: {(result.stderr or '').strip()}")
        return {"status": result.status, "stdout": result.stdout}
