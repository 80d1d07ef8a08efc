"""``adjutant automations list|add|enable|disable|run``: the stored flows from a shell.

``add FILE`` checks and stores a flow (``<home>/automations/<name>.json``; a cron
trigger becomes a schedule of ``automation.run``); ``enable``/``disable`` switch it
(a disabled flow's schedule and event trigger do not fire); ``run NAME`` queues one run
and, when no runner is alive, runs the queue here until nothing is due, then says
where the run stands (``waiting_for_human``: ``adjutant tasks approve ID``)."""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from adjutant_hookspecs import Kernel

__all__ = ["configure", "run"]


def configure(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="automations_command", metavar="ACTION")
    sub.add_parser("list", help="the stored flows")
    add = sub.add_parser("add", help="store a flow from a JSON file (- : standard input)")
    add.add_argument("file")
    for name in ("enable", "disable"):
        one = sub.add_parser(name, help=f"{name} a flow's triggers")
        one.add_argument("flow")
    runs = sub.add_parser("run", help="run a flow now (a durable task)")
    runs.add_argument("flow")
    runs.add_argument("--input", default="{}", help="the flow's input, a JSON object")
    for child in sub.choices.values():
        child.add_argument("--json", action="store_true", help="JSON output")


def _out(args: argparse.Namespace, value: Any, text: str) -> None:
    print(json.dumps(value, ensure_ascii=False) if args.json else text)


async def run(kernel: Kernel, args: argparse.Namespace) -> int:
    from ._automations import FlowError, FlowStore
    from ._plugin import tasks_of

    action = getattr(args, "automations_command", None)
    if action is None:
        print("adjutant automations: error: name an action: list, add, enable, disable, "
              "run", file=sys.stderr)
        return 2
    store = FlowStore(kernel.home)
    plugin = tasks_of(kernel)
    try:
        if action == "list":
            flows = store.all()
            _out(args, flows, "\n".join(
                f"{f['name']:<24} {'enabled' if f.get('enabled', True) else 'disabled':<9}"
                f"{json.dumps(f.get('trigger')):<28} {len(f['steps'])} steps"
                for f in flows) or "no flows")
            return 0
        if action == "add":
            raw = sys.stdin.read() if args.file == "-" else open(args.file).read()  # noqa: SIM115,ASYNC230
            try:
                flow = json.loads(raw)
            except ValueError as exc:
                raise FlowError(f"{args.file} is not JSON: {exc}") from None
            flow = store.put(flow)
            await _schedule(kernel, plugin, flow)
            plugin.mount_flows()
            _out(args, flow, f"flow {flow['name']}: stored ({len(flow['steps'])} steps)")
            return 0
        if action in ("enable", "disable"):
            flow = store.get(args.flow)
            flow["enabled"] = action == "enable"
            flow = store.put(flow)
            _out(args, flow, f"flow {flow['name']}: {action}d")
            return 0
        store.get(args.flow)  # it exists
        try:
            given = json.loads(args.input)
        except ValueError:
            given = None
        if not isinstance(given, dict):
            raise FlowError("--input must be a JSON object")
        from ._runner import Runner, RunnerBusyError, enqueue
        from ._settings import tasks_settings

        settings = tasks_settings(kernel)
        task, _ = await enqueue(kernel, plugin.queue, "automation.run",
                                {"flow": args.flow, "input": given}, settings=settings)
        try:  # no runner alive: run the queue here until nothing is due
            await Runner(kernel, plugin.queue, settings).serve(until_idle=True)
        except RunnerBusyError:  # another process runs it (adjutant tasks run, a chat)
            await plugin.queue.flush()
        task = await plugin.queue.get(task.id) or task
        import msgspec

        said = f"task {task.id}: {task.status}"
        if task.status == "waiting_for_human":
            said += f" (adjutant tasks show {task.id}; adjutant tasks approve {task.id})"
        elif task.error:
            said += f": {task.error}"
        _out(args, msgspec.to_builtins(task), said)
        return 0 if task.status in ("done", "waiting_for_human", "queued") else 1
    except (FlowError, OSError) as exc:
        print(f"adjutant automations {action}: error: {exc}", file=sys.stderr)
        return 1


async def _schedule(kernel: Kernel, plugin: Any, flow: dict[str, Any]) -> None:
    """A cron trigger as the schedule ``auto-<name>`` of ``automation.run``."""
    from ._queue import Schedule
    from ._runner import cron_next

    trigger = flow.get("trigger") or {}
    sid = f"auto-{flow['name']}"
    if "cron" not in trigger:
        await plugin.queue.delete_schedule(sid)
        return
    now = time.time()
    await plugin.queue.put_schedule(Schedule(
        id=sid, capability="automation.run", inputs={"flow": flow["name"]},
        cron=trigger["cron"], next_at=cron_next(trigger["cron"], now), created_at=now))
