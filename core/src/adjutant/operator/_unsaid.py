"""What the request did not say: the files a writing step lists that the request never
names outside the text it quotes and that are not here to be meant, and an append to a
file the request says to create."""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Mapping

import msgspec

from adjutant_hookspecs import Plan, ToolDeclaration

from ._words import QUOTED, hinted, named_paths

__all__ = ["created_as_said", "listed_as_said"]

_log = logging.getLogger("adjutant.planner")


def listed_as_said(plan: Plan, asked: str, tools: Mapping[str, ToolDeclaration],
                   cwd: str) -> Plan:
    """``plan`` without the items of a writing step's optional list of paths that no
    one stated: one that is not here and not named ("comit whatever is staged as '...'"
    had committed the path "staged"), or one hinted at only by the words of a quoted
    sentence ("commit all tracked changes with the message 'Add ... roster notes'" had
    committed notes.txt). A list left empty goes."""
    # a quoted sentence is content; a quoted name ("commit 'notes.txt' as ...") a place
    outside = QUOTED.sub(lambda q: " " if len(q[0].split()) >= 3 else q[0][1:-1], asked)
    named = set(named_paths(outside))
    steps = []
    for step in plan.steps:
        declaration = tools.get(step.tool)
        if declaration is None or declaration.safety.level == "read":
            steps.append(step)
            continue
        schema = declaration.args_schema
        args = dict(step.args)
        for key, spec in schema.get("properties", {}).items():
            value = args.get(key)
            if not (isinstance(spec, Mapping) and spec.get("x-adjutant-role") == "paths"
                    and isinstance(value, list) and key not in schema.get("required", ())):
                continue
            kept = [p for p in value if not isinstance(p, str) or p in named or (
                hinted(p, outside) and os.path.lexists(os.path.join(cwd, p)))]
            if kept != value:
                _log.info("unsaid paths: %s.%s drops %r, which no one stated", step.tool,
                          key, [p for p in value if p not in kept])
                if kept:
                    args[key] = kept
                else:
                    del args[key]
        steps.append(step if args == step.args else msgspec.structs.replace(step, args=args))
    return Plan(steps=tuple(steps))


#: An order to make a new file: "Create docs/stalls.md ...", "make a new file called x".
_CREATE = re.compile(r"^\W*(?:please\s+)?(?:create|make|start|add)\s+(?:a\s+)?(?:new\s+)?"
                     r"(?:file\s+)?(?:called\s+|named\s+)?(\S+)", re.IGNORECASE)


def created_as_said(plan: Plan, asked: str, tools: Mapping[str, ToolDeclaration],
                    cwd: str) -> Plan:
    """``plan`` with a one-step append to the file the request says to create, which is
    not here, as the sibling tool that creates files with the same arguments ("Create
    docs/stalls.md ... with exactly this one line: ..." had been `fs.append`)."""
    if len(plan.steps) != 1 or not (made := _CREATE.match(asked)):
        return plan
    step = plan.steps[0]
    chosen = tools.get(step.tool)
    path = step.args.get("path")
    if chosen is None or not isinstance(path, str) or made[1].rstrip(".,:;") != path \
            or os.path.lexists(os.path.join(cwd, path)) \
            or not chosen.description.lower().startswith("append"):
        return plan
    props = set(chosen.args_schema.get("properties", {}))
    for name, other in tools.items():
        if name.split(".")[0] == step.tool.split(".")[0] and name != step.tool \
                and other.description.lower().startswith("create") \
                and set(other.args_schema.get("properties", {})) == props:
            _log.info("created: %s of %r, which is not here, is %s", step.tool, path, name)
            return Plan(steps=(msgspec.structs.replace(step, tool=name),))
    return plan
