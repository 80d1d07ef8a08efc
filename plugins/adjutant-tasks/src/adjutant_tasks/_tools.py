"""``schedule.task``: queue a task capability with inputs, now, at a time, or on a cron
schedule. A write (it commits the machine to work): the pipeline asks under the mode,
and its dry-run preview says exactly what will run and when."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from adjutant_hookspecs import ExecutionResult, ToolCall, ToolContext, ToolDeclaration, ToolSafety

if TYPE_CHECKING:
    from ._plugin import TasksPlugin

__all__ = ["ScheduleTask", "when_of"]

_MAX_INPUT_BYTES = 64 << 10
_SHOWN_FIRES = 3


class _Refused(Exception):
    pass


def _at(value: str) -> float:
    """An ISO 8601 time (local time when it names no zone) as Unix seconds."""
    from datetime import datetime

    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        raise _Refused(f"`at` is not an ISO 8601 time: {value!r} (like "
                       "2026-11-26T07:30 or 2026-11-26T07:30:00+01:00)") from None
    if parsed.tzinfo is None:
        parsed = parsed.astimezone()
    return parsed.timestamp()


def _show(ts: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S %Z", time.localtime(ts))


def when_of(args: Mapping[str, Any], now: float) -> tuple[str, float | None, str | None]:
    """(words, not_before, cron) for a call's ``at`` / ``cron`` (neither: now)."""
    at, cron = args.get("at"), args.get("cron")
    if at is not None and cron is not None:
        raise _Refused("give `at` or `cron`, not both")
    if cron is not None:
        from croniter import croniter

        from ._runner import cron_next

        if not isinstance(cron, str) or not croniter.is_valid(cron):
            raise _Refused(f"`cron` is not a cron expression: {cron!r} (like '30 7 * * *': "
                           "07:30 every day)")
        fires, t = [], now
        for _ in range(_SHOWN_FIRES):
            t = cron_next(cron, t)
            fires.append(_show(t))
        return (f"on the cron schedule {cron!r} (local time), next at "
                f"{', '.join(fires)}, ...", None, cron)
    if at is not None:
        if not isinstance(at, str):
            raise _Refused("`at` must be a string")
        ts = _at(at)
        if ts <= now:
            return f"now ({_show(ts)} has passed)", None, None
        return f"at {_show(ts)}", ts, None
    return "now", None, None


class ScheduleTask:
    """The ``schedule.task`` tool of one `TasksPlugin`."""

    declaration = ToolDeclaration(
        name="schedule.task",
        version="0.1.0",
        summary="Queue {capability}[ at {at}][ on the schedule {cron}]",
        description=(
            "Queue a durable task: a registered task capability with its inputs, to run "
            "now, at a time (`at`, ISO 8601), or repeatedly on a cron schedule (`cron`, "
            "local time). The task survives a restart; `adjutant tasks list` shows it. "
            "Requests like: 'every morning at 7:30 summarize the PDFs in ~/inbox', "
            "'at 18:00 run the backup task'."),
        args_schema={
            "type": "object",
            "properties": {
                "capability": {"type": "string", "minLength": 1, "maxLength": 200,
                               "description": "The task capability to run (e.g. "
                                              "`doc.summarize`)."},
                "inputs": {"type": "object",
                           "description": "The capability's inputs (JSON values)."},
                "at": {"type": "string", "minLength": 1, "maxLength": 64,
                       "description": "When to run it, ISO 8601 (default: now)."},
                "cron": {"type": "string", "minLength": 1, "maxLength": 200,
                         "description": "A cron expression: run it on this schedule."},
                "idempotency_key": {"type": "string", "minLength": 1, "maxLength": 200,
                                    "description": "Queued twice with the same key, it "
                                                   "runs once."},
            },
            "required": ["capability"],
            "additionalProperties": False,
            "x-adjutant-requests": ["every morning at 7:30 summarize the PDFs in inbox",
                                    "at 18:00 run the backup task"],
        },
        safety=ToolSafety(writes=True, level="write"),
        examples=({"capability": "doc.summarize",
                   "inputs": {"paths": ["/home/me/inbox/report.pdf"]}},
                  {"capability": "doc.summarize",
                   "inputs": {"paths": ["/home/me/inbox/report.pdf"]},
                   "cron": "30 7 * * *"}),
    )

    def __init__(self, plugin: TasksPlugin, *, clock: Callable[[], float] = time.time) -> None:
        self.plugin = plugin
        self.clock = clock

    def _check(self, call: ToolCall, ctx: ToolContext) -> tuple[
            str, dict[str, Any], str, float | None, str | None]:
        from ._runner import capability

        args = call.args
        props = self.declaration.args_schema["properties"]
        if unknown := sorted(k for k in args if k not in props):
            raise _Refused(f"unknown argument(s) {', '.join(map(repr, unknown))}")
        name = args.get("capability")
        if not isinstance(name, str) or not name:
            raise _Refused("`capability` must be a capability's name")
        try:
            capability(self.plugin.started(), name)
        except LookupError as exc:
            raise _Refused(str(exc)) from None
        inputs = args.get("inputs", {})
        if not isinstance(inputs, dict):
            raise _Refused("`inputs` must be an object")
        from ._queue import canonical_json

        try:
            size = len(canonical_json(inputs))
        except (TypeError, ValueError) as exc:
            raise _Refused(f"`inputs` must be JSON values: {exc}") from None
        if size > _MAX_INPUT_BYTES:
            raise _Refused(f"`inputs` is larger than {_MAX_INPUT_BYTES} bytes")
        _check_paths(inputs, ctx)
        key = args.get("idempotency_key")
        if key is not None and (not isinstance(key, str) or "/" in key):
            raise _Refused("`idempotency_key` must be a string without '/'")
        words, not_before, cron = when_of(args, self.clock())
        return name, inputs, words, not_before, cron

    @staticmethod
    def _preview(name: str, inputs: Mapping[str, Any], words: str,
                 key: str | None) -> str:
        shown = json.dumps(inputs, sort_keys=True, ensure_ascii=False, indent=2)
        lines = [f"queue task capability {name}", f"when: {words}", f"inputs: {shown}"]
        if key:
            lines.append(f"idempotency key: {key} (queued before with it: runs once)")
        return "\n".join(lines) + "\n"

    async def dry_run(self, call: ToolCall, ctx: ToolContext) -> ExecutionResult:
        try:
            name, inputs, words, _, _ = self._check(call, ctx)
        except _Refused as exc:
            return _refused(call, exc)
        preview = self._preview(name, inputs, words, call.args.get("idempotency_key"))
        return ExecutionResult(tool=call.tool, args=dict(call.args), status="dry_run",
                               dry_run_diff=preview, summary=f"Queue {name} {words}")

    async def execute(self, call: ToolCall, ctx: ToolContext) -> ExecutionResult:
        try:
            name, inputs, words, not_before, cron = self._check(call, ctx)
        except _Refused as exc:
            return _refused(call, exc)
        plugin = self.plugin
        if cron is not None:
            from ._runner import add_schedule

            schedule = await add_schedule(plugin.started(), plugin.queue, name, inputs, cron,
                                          now=self.clock(), parent_run=ctx.run_id)
            plugin.ensure_runner()
            return ExecutionResult(
                tool=call.tool, args=dict(call.args), status="ok",
                stdout=f"schedule {schedule.id}: {name} {words}\n")
        task, new = await plugin.submit(name, inputs, not_before=not_before,
                                        parent_run=ctx.run_id,
                                        idempotency_key=call.args.get("idempotency_key"))
        said = (f"queued task {task.id}: {name} {words}" if new else
                f"already queued as task {task.id} (status {task.status}): same "
                "idempotency key")
        return ExecutionResult(tool=call.tool, args=dict(call.args), status="ok",
                               stdout=said + "\n")


def _check_paths(value: Any, ctx: ToolContext) -> None:
    """The path rules apply to a task's inputs too: an absolute path (or ``~/...``)
    anywhere in them must be inside a cage of this call (a task runs later, with no
    working directory, so it is resolved now, links included)."""
    import os

    if isinstance(value, dict):
        for item in value.values():
            _check_paths(item, ctx)
    elif isinstance(value, list):
        for item in value:
            _check_paths(item, ctx)
    elif isinstance(value, str) and (value.startswith("/") or value.startswith("~/")):
        real = os.path.realpath(os.path.expanduser(value))
        cages = [os.path.realpath(cage) for cage in ctx.cages]
        if not any(real == cage or real.startswith(cage.rstrip("/") + "/")
                   for cage in cages):
            raise _Refused(f"the inputs name {value!r}, outside the cage "
                           f"({', '.join(ctx.cages) or 'no cage'}) [rule: path-outside-cage]")


def _refused(call: ToolCall, exc: Exception) -> ExecutionResult:
    return ExecutionResult(tool=call.tool, args=dict(call.args), status="error",
                           stderr=f"schedule.task: refused: {exc}\n")
