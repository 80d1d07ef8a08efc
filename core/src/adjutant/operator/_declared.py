"""Arguments as their tools declare them: a free-form object (a schedule's ``inputs``)
holding only what its capability takes, no optional argument left empty, no value
opening with the word its argument is named by, no step switching to the branch the
step before made and switched to. Pure; no model."""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from typing import Any

import msgspec

from adjutant_hookspecs import Plan, Response, ToolCall, ToolDeclaration

__all__ = ["as_declared", "nested_as_declared", "without_switching_again"]

_log = logging.getLogger("adjutant.planner")


def as_declared(plan: Plan | Response, tools: Mapping[str, ToolDeclaration]) -> Plan | Response:
    """``plan`` with its object arguments as declared (`nested_as_declared`) again, once
    a capability is the one asked for ("queue the pdf summary ..." had kept inputs of
    the made-up "pdf.summary", heldout43), and no value opening with the word its
    argument is named by ("use the key seed-library-weekly": not "key seed-...")."""
    if not isinstance(plan, Plan):
        return plan
    steps: list[ToolCall] = []
    for step in without_switching_again(plan, tools).steps:
        if (declaration := tools.get(step.tool)) is not None:
            required = declaration.args_schema.get("required", [])
            empty = [k for k, v in step.args.items() if v in ([], {}, "") and k not in required]
            if empty:  # "paths": [] (heldout45, after its run)
                _log.info("empty: %s drops %s", step.tool, empty)
                step = msgspec.structs.replace(step, args={
                    k: v for k, v in step.args.items() if k not in empty})
            step = nested_as_declared(step, declaration.args_schema, tools)
            named = {k: v.split(" ", 1)[1] for k, v in step.args.items() if isinstance(v, str)
                     and " " in v and v.split(" ", 1)[0].lower() == k.rsplit("_", 1)[-1]
                     and re.fullmatch(r"[\w.:/-]+", v.split(" ", 1)[1])}
            if named:
                _log.info("named: %s %r without the words naming them", step.tool, named)
                step = msgspec.structs.replace(step, args={**step.args, **named})
        steps.append(step)
    return Plan(steps=tuple(steps))


def without_switching_again(plan: Plan, tools: Mapping[str, ToolDeclaration]) -> Plan:
    """``plan`` without a step that only switches to the branch the step before made
    and switched to ("create branch X and switch to it": the branch switches; heldout45,
    after its run)."""
    steps: list[ToolCall] = []
    for step in plan.steps:
        if steps and _switched_already(steps[-1], step, tools):
            _log.info("switched already: %s %r after %s", step.tool, step.args, steps[-1].tool)
            continue
        steps.append(step)
    return plan if len(steps) == len(plan.steps) else Plan(steps=tuple(steps))


def _switched_already(before: ToolCall, step: ToolCall,
                      tools: Mapping[str, ToolDeclaration]) -> bool:
    """Whether ``step`` only switches to the branch ``before`` made and switched to (a
    ``switch`` flag it did not turn off): its one argument is that name."""
    made = getattr(tools.get(before.tool), "args_schema", {}).get("properties", {})
    return "switch" in made and before.args.get("switch") is not False and len(
        step.args) == 1 and step.tool != before.tool and isinstance(
        name := before.args.get("name"), str) and list(step.args.values()) == [name] and \
        set(getattr(tools.get(step.tool), "args_schema", {}).get("required", [])) == set(step.args)


def nested_as_declared(step: ToolCall, schema: Mapping[str, Any],
                        tools: Mapping[str, ToolDeclaration]) -> ToolCall:
    """``step`` with each free-form object argument (a schedule's ``inputs``) holding
    only what belongs there: a key that is the step's own argument moved up to it
    ("inputs": {"cron": ...} is the schedule's cron), and, where another argument names
    an offered tool (its ``capability``), no key that tool does not declare (the model
    had filled a summary's inputs with a diff's ``ref`` and ``staged``)."""
    props = schema.get("properties", {})
    args = dict(step.args)
    named = [tools[v] for k, v in args.items() if isinstance(v, str) and v in tools
             and v != step.tool]
    for key, spec in props.items():
        value = args.get(key)
        if not (isinstance(spec, Mapping) and spec.get("type") == "object"
                and "properties" not in spec and isinstance(value, dict)):
            continue
        inner = dict(value)
        for name in list(inner):  # "key" is its idempotency_key, the one so ending
            own = [p for p in props if p == name or p.endswith(f"_{name}")]
            if len(own) == 1 and own[0] != key and own[0] not in args:
                args[own[0]] = inner.pop(name)
        if len(named) == 1:
            declared = named[0].args_schema.get("properties", {})
            inner = {k: v for k, v in inner.items() if k in declared}
        if inner != value:
            _log.info("nested: %s.%s %r holds %r", step.tool, key, value, inner)
            if inner:
                args[key] = inner
            else:
                del args[key]
    return step if args == step.args else msgspec.structs.replace(step, args=args)
