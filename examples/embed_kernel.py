"""Embed Adjutant's operator in an application.

In order, what an app does (each step is marked ``# 1.`` ... below):

1. a `Kernel` with exactly the plugins the app chooses (``load_installed=False``):
   its own tool plugin, plus the guard and the write-gate when they are installed;
2. the log store the operator needs (nothing runs without a durable record):
   adjutant-lmdb when installed, else the in-memory one of `adjutant.scripted`
   (gone when the process ends: for a demo or a dry mode only);
3. the model provider, chosen through the profile (``ModelPreset(provider=...)``):
   here a `ScriptedProvider`, so the example needs no model;
4. `Copilot` with an `Approver` that decides in code;
5. the AG-UI event stream, read by a subscriber task;
6. cancelling a run.

Run ``python examples/embed_kernel.py`` (asyncio) or ``--trio`` (needs ``trio``).
"""

from __future__ import annotations

import importlib
import json
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import anyio

import adjutant_hookspecs as ah
from adjutant import (
    Approver,
    Copilot,
    Kernel,
    ModelPreset,
    PlanPacket,
    Profile,
    StepDecision,
    StepPacket,
    Subscription,
    to_ag_ui,
)
from adjutant.scripted import ScriptedProvider, plugin

PATH = {"type": "string", "minLength": 1, "x-adjutant-role": "path"}


class Note:
    """A tool of the host application: write a note (a write: always asked)."""

    declaration = ah.ToolDeclaration(
        name="host.note",
        version="1.0",
        summary="Write a note to {path}",  # the question's first words
        description="Write a text note to a file in the workspace.",
        args_schema={"type": "object", "required": ["path", "text"],
                     "additionalProperties": False,
                     "properties": {"path": PATH, "text": {"type": "string"}}},
        safety=ah.ToolSafety(writes=True, level="write"),
        examples=({"path": "notes/todo.txt", "text": "buy milk"},),
    )

    async def dry_run(self, call: ah.ToolCall, ctx: ah.ToolContext) -> ah.ExecutionResult:
        preview = f"write {len(call.args['text'])} characters to {call.args['path']}"
        return ah.ExecutionResult(tool=call.tool, args=call.args, status="dry_run",
                                  dry_run_diff=preview)

    async def execute(self, call: ah.ToolCall, ctx: ah.ToolContext) -> ah.ExecutionResult:
        target = anyio.Path(ctx.cwd, call.args["path"])
        await target.parent.mkdir(parents=True, exist_ok=True)
        await target.write_text(call.args["text"])
        return ah.ExecutionResult(tool=call.tool, args=call.args, status="ok",
                                  stdout=f"wrote {call.args['path']}\n")


class HostPlugin:
    """A plugin can be any object with hook implementations: no package needed."""

    name = "host"

    @ah.hookimpl
    def register_tools(self, register: Callable[[Any], None]) -> None:
        register(Note())


class NotesOnly(Approver):
    """# 4. Consent decided in code: notes under notes/ yes, anything else no."""

    async def approve_plan(self, packet: PlanPacket) -> Literal["execute", "step", "deny"]:
        return "step"  # judge every step on its own

    async def approve_step(self, packet: StepPacket) -> StepDecision:
        path = str(packet.args.get("path", ""))
        if packet.tool == "host.note" and path.startswith("notes/"):
            return StepDecision("grant")
        return StepDecision("deny")


def chosen_plugins(provider: ScriptedProvider) -> tuple[list[object], list[str]]:
    """# 1. and 2. The app's plugins, the first-party ones it wants if installed, and a
    log store; returns the plugins and what is missing."""
    plugins: list[object] = [HostPlugin()]
    missing = []
    for module in ("adjutant_guard", "adjutant_write_gate", "adjutant_lmdb"):
        try:
            plugins.append(importlib.import_module(module))
        except ImportError:
            missing.append(module.replace("_", "-"))
    durable = "adjutant-lmdb" not in missing
    # 3. the provider is registered by a plugin; the profile says which one to use
    plugins.append(plugin(provider) if not durable else _provider_only(provider))
    return plugins, missing


def _provider_only(provider: ScriptedProvider) -> object:
    class Provider:
        name = "scripted-provider"

        @ah.hookimpl
        def register_providers(self, register: Callable[[Any], None]) -> None:
            register(provider)

    return Provider()


async def watch(events: Subscription, on_text: Callable[[], None] | None = None) -> None:
    """# 5. A UI-like consumer with its own cursor (a slow one never blocks the operator):
    every event as an AG-UI client gets it."""
    async for envelope in events:
        event = to_ag_ui(envelope)
        name = event.get("name", event["type"])
        detail = ""
        if name == "adjutant.approval.requested":
            detail = event["value"]["interrupt"]["message"]
        elif name == "adjutant.approval.decided":
            detail = event["value"]["decision"]
        elif name == "adjutant.step.denied":
            detail = f"{event['value']['tool']} by {event['value']['by']}"
        elif event["type"] == "RUN_FINISHED":
            detail = json.dumps(event.get("result"))
        elif event["type"] == "RUN_ERROR":
            detail = event["message"]
        print(f"  event {name} {detail}".rstrip())
        if event["type"] == "TEXT_MESSAGE_CONTENT" and on_text is not None:
            on_text()
        if event["type"] in ("RUN_FINISHED", "RUN_ERROR"):
            return


async def main() -> None:
    plan = ah.Plan(steps=(
        ah.ToolCall(tool="host.note", args={"path": "notes/todo.txt", "text": "buy milk"}),
        ah.ToolCall(tool="host.note", args={"path": "README.md", "text": "overwritten"}),
    ))
    provider = ScriptedProvider(plan, "a long answer that will never finish",
                                delay=0.05)
    plugins, missing = chosen_plugins(provider)
    if missing:
        print(f"not installed: {', '.join(missing)}"
              + (" (the action log is in memory: demo only)"
                 if "adjutant-lmdb" in missing else ""))
    profile = Profile(model=ModelPreset(provider=provider.name, model="script"))
    with tempfile.TemporaryDirectory(prefix="adjutant-embed-") as tmp:
        workspace = Path(tmp, "workspace")
        await anyio.Path(workspace).mkdir()
        env = {"HOME": str(Path.home()), "XDG_CACHE_HOME": str(Path(tmp, "cache"))}
        async with Kernel(plugins=plugins, load_installed=False, env=env,
                          home=Path(tmp, "data"), profile=profile) as kernel:
            copilot = Copilot(kernel, approver=NotesOnly(), cwd=str(workspace))
            await copilot.set_mode("execute-with-confirmation", channel="user")

            print("run 1: a plan of two writes, judged by the approver")
            async with anyio.create_task_group() as tg:
                tg.start_soon(watch, kernel.bus.subscribe())  # subscribe before the run
                outcome = await copilot.handle("note that I must buy milk")
            print(f"outcome: {outcome.status}; "
                  + ", ".join(f"{r.tool} {r.args['path']}: {r.status}"
                              for r in outcome.results))

            print("run 2: cancelled while the model is answering")
            async with anyio.create_task_group() as tg:
                # 6. cancel: from a button, a signal, a timeout; here at the first token
                tg.start_soon(watch, kernel.bus.subscribe(), copilot.cancel)
                outcome = await copilot.handle("tell me a long story")
            print(f"outcome: {outcome.status} ({outcome.error})")
            records = [r["kind"] for r in await copilot.log.records(run_id=outcome.run_id)]
            print(f"the action log of run 2: {', '.join(records)}")


if __name__ == "__main__":
    backend = "trio" if "--trio" in sys.argv[1:] else "asyncio"
    if backend == "trio":
        try:
            import trio  # noqa: F401  (anyio runs on it; it is not a dependency of ours)
        except ImportError:
            sys.exit("--trio needs trio, which is not installed: pip install trio "
                     "(or run without --trio, on asyncio)")
    anyio.run(main, backend=backend)
