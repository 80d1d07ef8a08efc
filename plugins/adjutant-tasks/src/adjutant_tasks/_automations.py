"""Automations: flows of steps, stored in the data directory, run as durable tasks.

A flow is ``<home>/automations/<name>.json``::

    {"name": "morning", "enabled": true,
     "trigger": {"cron": "30 7 * * *"} | {"event": "task.finished"} | null,
     "cwd": "/home/me/project",
     "steps": [
       {"id": "s1", "tool": "fs.read", "args": {"path": "inbox.json"}},
       {"id": "c", "condition": {"value": "${s1.data.count}", "op": "gt", "than": 0},
        "else": "return"},
       {"id": "w", "tool": "fs.write", "args": {"path": "out.md", "content": "${s1.data.title}"}},
       {"id": "both", "calls": [{"tool": ..., "args": ...}, ...]},
       {"id": "d", "delay": 60},
       {"id": "n", "notify": {"title": "done", "body": "${s1.data.title}", "priority": "low"}},
       {"id": "sub", "flow": "other", "input": {"x": "${s1.data.id}"}},
       {"id": "op", "ask": "summarize ${s1.data.title}"},
       {"id": "r", "return": {"id": "${s1.data.id}"}, "when": {...}}]}

A run is one task of capability ``automation.run`` (inputs: the flow's name and its
input). Its first attempt copies the definition into its checkpoint: a run keeps
the version it started with (an edit does not change or strand a paused run).

Variables: ``${s1.data.id}``, ``${items[0].title}``, ``${input.x}`` resolve against
the flow's input and the results of earlier steps; one that does not resolve stays
literal. A value is data: it is put into a tool's arguments as a JSON value after
the arguments were parsed, never through a shell and never parsed again, and the
pipeline (schema, policies, cages on resolved paths, the write-gate) checks the
arguments it ends up in. Fail fast: the first step that fails ends the run.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from adjutant_hookspecs import TaskContext, TaskFailed

from ._queue import canonical_json

__all__ = ["AutomationCapability", "FlowError", "FlowStore", "resolve", "validate_flow"]

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
_VAR = re.compile(r"\$\{([^{}]+)\}")
_PATH = re.compile(r"([A-Za-z_][A-Za-z0-9_-]*)|\[(\d+)\]|\.")
_KINDS = ("tool", "calls", "condition", "delay", "notify", "flow", "ask", "return")
_OPS: dict[str, Callable[[Any, Any], Any]] = {"eq": lambda a, b: a == b, "ne": lambda a, b: a != b,
        "gt": lambda a, b: a > b, "ge": lambda a, b: a >= b,
        "lt": lambda a, b: a < b, "le": lambda a, b: a <= b,
        "contains": lambda a, b: b in a, "truthy": lambda a, b: bool(a),
        "falsy": lambda a, b: not a}


class FlowError(ValueError):
    """A flow definition that cannot run (named, with the step at fault)."""


def validate_flow(flow: Any) -> dict[str, Any]:
    """``flow`` checked (JSON object, known step kinds, unique ids); returned as plain
    JSON values. Raises `FlowError`."""
    if not isinstance(flow, dict):
        raise FlowError("a flow is a JSON object")
    name = flow.get("name")
    if not isinstance(name, str) or not _NAME.match(name):
        raise FlowError(f"a flow's name is letters, digits, '_', '.', '-': {name!r}")
    steps = flow.get("steps")
    if not isinstance(steps, list) or not steps:
        raise FlowError(f"flow {name}: `steps` is a non-empty list")
    seen: set[str] = set()
    for n, step in enumerate(steps):
        if not isinstance(step, dict):
            raise FlowError(f"flow {name}: step {n} is not an object")
        sid = step.get("id", f"step{n + 1}")
        if not isinstance(sid, str) or not _NAME.match(sid) or sid in seen:
            raise FlowError(f"flow {name}: step {n}: a unique id is needed, got {sid!r}")
        seen.add(sid)
        kinds = [k for k in _KINDS if k in step]
        if len(kinds) != 1:
            raise FlowError(f"flow {name}: step {sid}: one of {', '.join(_KINDS)}, not "
                            f"{kinds or 'none'}")
        if "tool" in step and (not isinstance(step["tool"], str)
                               or not isinstance(step.get("args", {}), dict)):
            raise FlowError(f"flow {name}: step {sid}: `tool` is a name, `args` an object")
        if "calls" in step and (not isinstance(step["calls"], list) or not step["calls"] or any(
                not isinstance(c, dict) or not isinstance(c.get("tool"), str)
                or not isinstance(c.get("args", {}), dict) for c in step["calls"])):
            raise FlowError(f"flow {name}: step {sid}: `calls` is a list of "
                            "{\"tool\": name, \"args\": {...}}")
        if "flow" in step and (not isinstance(step["flow"], str)
                               or not _NAME.match(step["flow"])):
            raise FlowError(f"flow {name}: step {sid}: `flow` names a stored flow")
        if "condition" in step:
            cond = step["condition"]
            if not isinstance(cond, dict) or cond.get("op", "truthy") not in _OPS:
                raise FlowError(f"flow {name}: step {sid}: a condition is "
                                f"{{value, op ({', '.join(_OPS)}), than}}")
        if "delay" in step and (not isinstance(step["delay"], int | float)
                                or isinstance(step["delay"], bool) or step["delay"] < 0):
            raise FlowError(f"flow {name}: step {sid}: `delay` is seconds (>= 0)")
    trigger = flow.get("trigger")
    if trigger is not None:
        if not isinstance(trigger, dict) or not (set(trigger) <= {"cron", "event"}):
            raise FlowError(f"flow {name}: a trigger is {{\"cron\": ...}} or "
                            "{\"event\": ...}")
        if "cron" in trigger:
            from croniter import croniter

            if not croniter.is_valid(trigger["cron"]):
                raise FlowError(f"flow {name}: not a cron expression: {trigger['cron']!r}")
    result: dict[str, Any] = json.loads(canonical_json(flow))
    return result


class FlowStore:
    """The flows of one data home: ``<home>/automations/<name>.json``."""

    def __init__(self, home: Path) -> None:
        self.root = home / "automations"

    def path(self, name: str) -> Path:
        if not _NAME.match(name):
            raise FlowError(f"no flow {name!r}")
        return self.root / f"{name}.json"

    def all(self) -> list[dict[str, Any]]:
        if not self.root.is_dir():
            return []
        found = []
        for path in sorted(self.root.glob("*.json")):
            try:
                found.append(validate_flow(json.loads(path.read_text())))
            except (OSError, ValueError):
                continue
        return found

    def get(self, name: str) -> dict[str, Any]:
        try:
            return validate_flow(json.loads(self.path(name).read_text()))
        except FileNotFoundError:
            raise FlowError(f"no flow {name!r} (adjutant automations list)") from None

    def put(self, flow: Any) -> dict[str, Any]:
        checked = validate_flow(flow)
        self.root.mkdir(parents=True, exist_ok=True, mode=0o700)
        path = self.path(checked["name"])
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(checked, indent=2, sort_keys=True) + "\n")
        tmp.replace(path)  # atomic: a reader sees the old or the new flow
        return checked


# -- variables ------------------------------------------------------------------------------

_MISSING = object()


def _lookup(scope: Mapping[str, Any], path: str) -> Any:
    value: Any = scope
    pos = 0
    path = path.strip()
    while pos < len(path):
        m = _PATH.match(path, pos)
        if m is None or m.end() == pos:
            return _MISSING
        pos = m.end()
        if m.group(1) is not None:
            if not isinstance(value, Mapping) or m.group(1) not in value:
                return _MISSING
            value = value[m.group(1)]
        elif m.group(2) is not None:
            i = int(m.group(2))
            if not isinstance(value, list) or i >= len(value):
                return _MISSING
            value = value[i]
    return value


def resolve(value: Any, scope: Mapping[str, Any]) -> Any:
    """``value`` with its ``${...}`` variables put in as data: a string that is one
    variable becomes that value (any JSON type); a variable inside a longer string
    is put in as text (JSON for non-strings). Unresolved variables stay literal."""
    if isinstance(value, dict):
        return {k: resolve(v, scope) for k, v in value.items()}
    if isinstance(value, list):
        return [resolve(v, scope) for v in value]
    if not isinstance(value, str) or "${" not in value:
        return value
    whole = _VAR.fullmatch(value)
    if whole is not None:
        found = _lookup(scope, whole.group(1))
        return value if found is _MISSING else found

    def one(m: re.Match[str]) -> str:
        found = _lookup(scope, m.group(1))
        if found is _MISSING:
            return m.group(0)
        return found if isinstance(found, str) else json.dumps(found, ensure_ascii=False)

    return _VAR.sub(one, value)


def _data(stdout: str) -> Any:
    try:
        return json.loads(stdout)
    except ValueError:
        return stdout


def _holds(cond: Mapping[str, Any], scope: Mapping[str, Any]) -> bool:
    left, right = resolve(cond.get("value"), scope), resolve(cond.get("than"), scope)
    try:
        return bool(_OPS[str(cond.get("op", "truthy"))](left, right))
    except TypeError:
        return False


async def _spent(context: TaskContext, runs: list[str]) -> tuple[int, float]:
    """Tokens (every call) and metered cost (only calls that cost money or left the
    machine: a local model's calls cost nothing) of the chain's operator runs, from
    core's budget ledger."""
    if not runs:
        return 0, 0.0
    import datetime as dt

    from adjutant.providers import Ledger

    from ._queue import key_value_store

    ledger = Ledger(key_value_store(context.kernel))
    wanted, tokens, cost = set(runs), 0, 0.0
    today = dt.date.today()
    for day in (today - dt.timedelta(days=1), today):
        for entry in await ledger.day(day):
            if entry.get("run_id") in wanted:
                tokens += int(entry.get("tokens") or 0)
                if entry.get("metered"):
                    cost += float(entry.get("cost") or 0.0)
    return tokens, cost


# -- the capability ----------------------------------------------------------------------------

class _Later(Exception):
    """A delay step: the run goes on at ``at`` (durably: the task is queued for then)."""

    def __init__(self, at: float) -> None:
        super().__init__(f"resumes at {at}")
        self.at = at


def _plan_digest(calls: Any) -> str:
    """What an ``ask`` step's kept plan is bound to: sha256 of its calls."""
    import hashlib

    return hashlib.sha256(canonical_json(calls)).hexdigest()


class AutomationCapability:
    """``automation.run``: one run of a flow, step by step, checkpointed after each."""

    name = "automation.run"
    description = "one run of an automation flow (adjutant automations)"
    resource = "flow"
    timeout_s = 3600.0
    retryable = False

    def __init__(self, notify: Any = None) -> None:
        self.notify = notify

    async def run(self, context: TaskContext) -> Mapping[str, Any]:
        state = await context.load_checkpoint()
        if state is None:  # the first attempt pins the definition it runs
            name = context.inputs.get("flow")
            definition = context.inputs.get("definition")
            if definition is None:
                if not isinstance(name, str):
                    raise TaskFailed("automation.run needs `flow` (a flow's name)")
                try:
                    definition = FlowStore(context.kernel.home).get(name)
                except FlowError as exc:
                    raise TaskFailed(str(exc)) from None
            version = __import__("hashlib").sha256(canonical_json(definition)).hexdigest()
            state = {"definition": definition, "version": version, "results": {},
                     "next": 0, "calls": {}}
            await context.save_checkpoint(state)
        flow = state["definition"]
        state.setdefault("started", time.time())
        scope: dict[str, Any] = {"input": dict(context.inputs.get("input") or {}),
                                 **dict(context.inputs.get("input") or {}),
                                 **state["results"]}
        steps = flow["steps"]
        given = context.inputs.get("cwd")
        cwd = flow.get("cwd") or (given if isinstance(given, str) else None)
        ran: list[str] = []
        while state["next"] < len(steps):
            n = state["next"]
            step = steps[n]
            sid = step.get("id", f"step{n + 1}")
            await context.progress(n / len(steps), f"step {sid}")
            await self._guard(context, state, flow, sid, step, scope)
            if "when" in step and not _holds(step["when"], scope):
                result: dict[str, Any] = {"status": "skipped"}
            else:
                try:
                    outcome = await self._step(context, state, sid, step, scope, cwd)
                except TaskFailed as exc:
                    if not step.get("continue_on_error"):
                        raise  # fail fast
                    outcome = ("ok", {"status": "failed", "error": str(exc)})
                    failed = [k for k, v in state["results"].items()
                              if v.get("status") == "failed"] + [sid]
                    run = len(state["results"]) + 1
                    if run >= 2 and len(failed) * 2 > run:
                        errors = "; ".join(
                            f"{k}: {(state['results'].get(k) or outcome[1])['error'][:120]}"
                            for k in failed)
                        raise TaskFailed(f"aborted: {len(failed)} of {run} steps failed: "
                                         f"{errors}") from None
                if outcome is not None and outcome[0] == "return":
                    state["results"][sid] = {"status": "ok", "data": outcome[1]}
                    await context.save_checkpoint(state)
                    return {"flow": flow["name"], "version": state["version"],
                            "returned": outcome[1], "early": True, "steps": [*ran, sid]}
                result = outcome[1] if outcome is not None else {"status": "ok"}
            state["results"][sid] = result
            scope[sid] = result
            state["next"] = n + 1
            state["calls"] = {}
            ran.append(sid)
            await context.save_checkpoint(state)
        return {"flow": flow["name"], "version": state["version"], "early": False,
                "results": state["results"]}

    async def _guard(self, context: TaskContext, state: dict[str, Any], flow: Mapping[str, Any],
                     sid: str, step: Mapping[str, Any], scope: Mapping[str, Any]) -> None:
        """The guardrails of a long chain, before each step: the same call a third time
        ("I seem to be stuck"), over its time limit ("still working on X?"), over its
        token or cost budget. Each pauses the run for the user (``waiting_for_human``);
        a deny stops it."""
        ctx: Any = context
        limits = flow.get("limits") or {}
        asks: list[tuple[str, str, str]] = []
        if "tool" in step and state.get("counted") != state["next"]:
            key = canonical_json([step["tool"], resolve(step.get("args", {}), scope)]).decode()
            seen = state.setdefault("seen", {})
            if seen.get(key, 0) >= 2:
                asks.append((f"{sid}:stuck", "guardrail.stuck",
                             f"I seem to be stuck: {step['tool']} is about to run a third "
                             f"time with the same input (step {sid} of {flow['name']}). "
                             "Go on?"))
        limit = float(limits.get("time_s", 3600.0))
        since = float(state.get("time_ok_at", state["started"]))
        if time.time() - since > limit:
            asks.append((f"{sid}:time:{since:.0f}", "guardrail.time",
                         f"Still working on {flow['name']}? It has run for "
                         f"{time.time() - state['started']:.0f} s, over its limit of "
                         f"{limit:g} s (next: step {sid}). Go on?"))
        if limits.get("tokens") is not None or limits.get("cost_usd") is not None:
            spent = await _spent(context, state.get("runs", []))
            over = None
            if limits.get("tokens") is not None and spent[0] > int(limits["tokens"]):
                over = f"{spent[0]:,} tokens, over its budget of {int(limits['tokens']):,}"
            elif limits.get("cost_usd") is not None and spent[1] > float(limits["cost_usd"]):
                over = f"${spent[1]:.4f}, over its budget of ${float(limits['cost_usd']):.4f}"
            if over is not None:
                asks.append((f"{sid}:budget:{spent[0]}:{spent[1]:.6f}", "guardrail.budget",
                             f"{flow['name']} has spent {over} (next: step {sid}). "
                             "Go on?"))
        for name, what, question in asks:
            if not await ctx.confirm(name, what, question):
                raise TaskFailed(f"stopped by the user: {question}")
            if what == "guardrail.time":
                state["time_ok_at"] = time.time()
            elif what == "guardrail.stuck":
                state["seen"][key] = 0
            await context.save_checkpoint(state)
        if "tool" in step and state.get("counted") != state["next"]:  # once a step,
            state["seen"][key] = state["seen"].get(key, 0) + 1  # not again on resume
            state["counted"] = state["next"]

    async def _step(self, context: TaskContext, state: dict[str, Any], sid: str,
                    step: Mapping[str, Any], scope: Mapping[str, Any],
                    cwd: str | None) -> tuple[str, Any] | None:
        ctx: Any = context
        if "tool" in step:
            args = resolve(step.get("args", {}), scope)
            result = await ctx.call_tool(sid, step["tool"], args, cwd=cwd)
            if result.status != "ok":
                raise TaskFailed(f"step {sid} ({step['tool']}): {result.status}: "
                                 f"{(result.stderr or '').strip()[:300]}")
            return "ok", {"status": "ok", "data": _data(result.stdout),
                          "stdout": result.stdout}
        if "calls" in step:  # mixed execution: the safe calls run while a risky one waits
            from ._human import WaitingForHuman

            done: dict[str, Any] = state["calls"]
            waiting: WaitingForHuman | None = None
            for i, call in enumerate(step["calls"]):
                key = str(i)
                if key in done:
                    continue
                args = resolve(call.get("args", {}), scope)
                try:
                    result = await ctx.call_tool(f"{sid}.{i}", call["tool"], args, cwd=cwd)
                except WaitingForHuman as wait:
                    waiting = waiting or wait
                    continue
                if result.status != "ok":
                    raise TaskFailed(f"step {sid}.{i} ({call['tool']}): {result.status}: "
                                     f"{(result.stderr or '').strip()[:300]}")
                done[key] = {"status": "ok", "data": _data(result.stdout),
                             "stdout": result.stdout}
                await context.save_checkpoint(state)
            if waiting is not None:
                raise waiting
            return "ok", {"status": "ok", "data": [done[str(i)]["data"]
                                                    for i in range(len(step["calls"]))]}
        if "condition" in step:
            holds = _holds(step["condition"], scope)
            if not holds:
                otherwise = step.get("else", "continue")
                if otherwise == "return":
                    return "return", resolve(step.get("returns"), scope)
                if otherwise == "fail":
                    raise TaskFailed(f"step {sid}: the condition does not hold")
            return "ok", {"status": "ok", "data": {"result": holds}}
        if "delay" in step:
            due = state.setdefault("due", {})
            if sid not in due:
                due[sid] = time.time() + float(step["delay"])
                await context.save_checkpoint(state)
            if time.time() < due[sid]:
                raise _Later(due[sid])
            return "ok", {"status": "ok"}
        if "notify" in step:
            note = resolve(step["notify"], scope)
            sent = None
            if self.notify is not None:
                sent = await self.notify(note, source=f"task {context.task_id}")
            return "ok", {"status": "ok", "data": {"sent": sent}}
        if "flow" in step:
            from adjutant_hookspecs import ChildTaskFailed

            try:
                outputs = await context.run_child(
                    sid, "automation.run", {"flow": step["flow"], "cwd": cwd,
                                            "input": resolve(step.get("input", {}), scope)})
            except ChildTaskFailed as exc:
                raise TaskFailed(f"step {sid}: flow {step['flow']} {exc.status}: "
                                 f"{exc.error}") from None
            return "ok", {"status": "ok", "data": dict(outputs)}
        if "ask" in step:
            kept = state.setdefault("plans", {}).get(sid)
            if kept is not None:  # answered: the plan asked about, never a new one
                return await self._kept_plan(context, state, sid, kept, cwd)
            from ._human import WaitingForHuman

            prompt = resolve(step["ask"], scope)
            try:
                outcome = await ctx.ask_operator(sid, str(prompt), cwd=cwd)
            except WaitingForHuman as wait:
                planned = None if wait.outcome is None else wait.outcome.plan
                if planned is not None:
                    # The plan the user is asked about is kept, bound to its digest:
                    # after the answer that plan runs (each write still bound to the
                    # preview approved), and the model is not asked again.
                    calls = [{"tool": c.tool, "args": dict(c.args), "explain": c.explain}
                             for c in planned.steps]
                    done = {str(i): {"status": r.status, "stdout": r.stdout}
                            for i, r in enumerate(wait.outcome.results) if r.status == "ok"}
                    state["plans"][sid] = {"calls": calls, "digest": _plan_digest(calls),
                                           "done": done, "text": wait.outcome.text or ""}
                    state.setdefault("runs", []).append(wait.outcome.run_id)
                    await context.save_checkpoint(state)
                raise
            state.setdefault("runs", []).append(outcome.run_id)
            if outcome.status not in ("executed", "answered", "ok", "responded"):
                raise TaskFailed(f"step {sid}: the operator's run {outcome.status}: "
                                 f"{outcome.error or ''}")
            return "ok", {"status": "ok", "data": {
                "text": outcome.text, "results": [r.stdout for r in outcome.results]}}
        if "return" in step:
            return "return", resolve(step["return"], scope)
        raise TaskFailed(f"step {sid}: unknown kind")

    async def _kept_plan(self, context: TaskContext, state: dict[str, Any], sid: str,
                         kept: dict[str, Any], cwd: str | None) -> tuple[str, Any]:
        """An ``ask`` step resumed after its question was answered: the plan kept when
        it was asked (checked against its digest), each call not yet done through the
        pipeline with the answer bound to its preview; a call that ran before the
        question (a read the pipeline let through) does not run again."""
        ctx: Any = context
        calls = kept["calls"]
        if _plan_digest(calls) != kept["digest"]:
            raise TaskFailed(f"step {sid}: the plan kept for approval changed at rest "
                             "(its sha256 no longer matches): refused, nothing run")
        done: dict[str, Any] = kept["done"]
        for i, call in enumerate(calls):
            if str(i) in done:
                continue
            result = await ctx.call_tool(sid, call["tool"], call["args"], cwd=cwd)
            done[str(i)] = {"status": result.status, "stdout": result.stdout,
                            "stderr": result.stderr}
            await context.save_checkpoint(state)
        results = [done[str(i)] for i in range(len(calls))]
        if results and all(r["status"] == "denied" for r in results):
            raise TaskFailed(f"step {sid}: the operator's run denied: "
                             f"{(results[0].get('stderr') or '').strip()[:300]}")
        return "ok", {"status": "ok", "data": {
            "text": kept.get("text", ""), "results": [r["stdout"] for r in results]}}
