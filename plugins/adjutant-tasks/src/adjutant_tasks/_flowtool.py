"""Each stored flow as a tool, ``flow.<name>``: calling it queues one run of the flow
with the definition its preview showed (pinned by its sha256). A write, like
``schedule.task``: it commits the machine to work; every step of the run goes
through the pipeline again when it runs."""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, Any

from adjutant_hookspecs import ExecutionResult, ToolCall, ToolContext, ToolDeclaration, ToolSafety

from ._queue import canonical_json

if TYPE_CHECKING:
    from ._plugin import TasksPlugin

__all__ = ["FlowTool", "flow_tools"]


class FlowTool:
    def __init__(self, plugin: TasksPlugin, flow: dict[str, Any]) -> None:
        self.plugin, self.flow = plugin, flow
        self.version = hashlib.sha256(canonical_json(flow)).hexdigest()
        steps = ", ".join(f"{s.get('id', n)}" for n, s in enumerate(flow["steps"]))
        self.declaration = ToolDeclaration(
            name=f"flow.{flow['name']}", version="0.1.0",
            summary=f"Run the automation {flow['name']}",
            description=(f"Run the automation flow {flow['name']!r} (steps: {steps}) as a "
                         "durable task; each of its steps goes through the safety "
                         "pipeline and waits for approval where needed."),
            args_schema={"type": "object", "properties": {
                "input": {"type": "object", "description": "The flow's input variables."}},
                "additionalProperties": False},
            safety=ToolSafety(writes=True, level="write"))

    def _preview(self, inputs: dict[str, Any]) -> str:
        shown = json.dumps(inputs, sort_keys=True, ensure_ascii=False)
        lines = [f"queue automation {self.flow['name']} (definition sha256 {self.version})",
                 f"input: {shown}", "steps:"]
        lines += [f"  {json.dumps(s, sort_keys=True, ensure_ascii=False)}"
                  for s in self.flow["steps"]]
        return "\n".join(lines) + "\n"

    async def dry_run(self, call: ToolCall, ctx: ToolContext) -> ExecutionResult:
        inputs = dict(call.args.get("input") or {})
        return ExecutionResult(tool=call.tool, args=dict(call.args), status="dry_run",
                               dry_run_diff=self._preview(inputs),
                               summary=f"Run automation {self.flow['name']}")

    async def execute(self, call: ToolCall, ctx: ToolContext) -> ExecutionResult:
        inputs = dict(call.args.get("input") or {})
        task, _ = await self.plugin.submit("automation.run", {
            "flow": self.flow["name"], "definition": self.flow, "input": inputs,
            "cwd": ctx.cwd}, parent_run=ctx.run_id)
        return ExecutionResult(tool=call.tool, args=dict(call.args), status="ok",
                               stdout=json.dumps({"task": task.id, "status": task.status})
                               + "\n")


def flow_tools(plugin: TasksPlugin) -> list[FlowTool]:
    from ._automations import FlowStore

    return [FlowTool(plugin, flow) for flow in FlowStore(plugin.started().home).all()]
