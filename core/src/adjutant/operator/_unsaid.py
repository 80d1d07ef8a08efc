"""What the request did not say: the files a writing step lists that the request never
names outside the text it quotes and that are not here to be meant, a commit to start
from that is neither said nor here, and an append to a file the request says to
create."""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Mapping

import msgspec

from adjutant_hookspecs import Plan, ToolCall, ToolDeclaration

from ._grammar import ONE_WORD
from ._refs import git_names
from ._values import stated_number
from ._words import QUOTED, hinted, named_paths, with_digits

__all__ = ["created_as_said", "listed_as_said", "numbers_as_said", "refs_as_said",
           "unsaid_dropped"]

_log = logging.getLogger("adjutant.planner")
#: A file's name with an ending ("NOTES.md"), not a word ("staged").
_ENDING = re.compile(r"\w\.[A-Za-z0-9]{1,8}$")


def listed_as_said(plan: Plan, asked: str, tools: Mapping[str, ToolDeclaration],
                   cwd: str) -> Plan:
    """``plan`` without the items of a step's optional list of paths that no one
    stated: for a write, one that is not here and not named ("comit whatever is staged
    as '...'" had committed the path "staged"), or one hinted at only by the words of a
    quoted sentence ("commit all tracked changes with the message 'Add ... roster
    notes'" had committed notes.txt); for a read, one neither named nor hinted at (a
    search "for the literal text average(counts):.1f" had been narrowed to notes.txt,
    todo.md and README.md thirty times over, from the CLI: it searches everywhere).
    Each item once; a list left empty goes."""
    # a quoted sentence is content; a quoted name ("commit 'notes.txt' as ...") a place
    outside = QUOTED.sub(lambda q: " " if len(q[0].split()) >= 3 else q[0][1:-1], asked)
    named = set(named_paths(outside))
    return Plan(steps=tuple(_listed(step, tools[step.tool], outside, named, cwd)
                            if step.tool in tools else step for step in plan.steps))


def _listed(step: ToolCall, declaration: ToolDeclaration, outside: str, named: set[str],
            cwd: str) -> ToolCall:
    """``step`` with its optional lists of paths as `listed_as_said` keeps them."""
    reads = declaration.safety.level == "read"
    schema = declaration.args_schema
    args = dict(step.args)
    for key, spec in schema.get("properties", {}).items():
        value = args.get(key)
        if not (isinstance(spec, Mapping) and spec.get("x-adjutant-role") == "paths"
                and isinstance(value, list) and key not in schema.get("required", ())):
            continue
        kept = list(dict.fromkeys(p for p in value if not isinstance(p, str) or p in named
                                  or ((hinted(p, outside) or re.search(  # or said whole:
                                      rf"(?<![\w./-]){re.escape(p)}(?![\w-])", outside))
                                      and (reads or _ENDING.search(p) or os.path.lexists(
                                          os.path.join(cwd, p))))))  # "grep X in h"; once
    # each: a write's file with an ending of its own may be made by a step before it ("create
    # a feature branch and commit a notes file": NOTES.md, written first)
        if kept != value:
            _log.info("unsaid paths: %s.%s drops %r, which no one stated", step.tool, key,
                      [p for p in value if p not in kept])
            if kept:
                args[key] = kept
            else:
                del args[key]
    return step if args == step.args else msgspec.structs.replace(step, args=args)


def unmade_dropped(plan: Plan, asked: str, tools: Mapping[str, ToolDeclaration],
                   cwd: str) -> Plan:
    """``plan`` without the items of a write's optional list of paths that are not
    here, that the request does not name, and that no step before writes: "..., and if
    they pass commit all tracked changes as 'Tests pass'" had committed a made-up
    tests.py (from the CLI; the commit then failed), where `listed_as_said`, seeing one
    clause, kept it for a step before that might have written it."""
    named = set(named_paths(QUOTED.sub(lambda q: q[0][1:-1], asked)))
    made: set[str] = set()
    steps = []
    for step in plan.steps:
        declaration = tools.get(step.tool)
        schema = getattr(declaration, "args_schema", {})
        args = dict(step.args)
        for key, spec in schema.get("properties", {}).items():
            value = args.get(key)
            if declaration is None or declaration.safety.level == "read" or not (
                    isinstance(spec, Mapping) and spec.get("x-adjutant-role") == "paths"
                    and isinstance(value, list) and key not in schema.get("required", ())):
                continue
            kept = [p for p in value if not isinstance(p, str) or p in named or p in made
                    or os.path.lexists(os.path.join(cwd, p))]
            if kept != value:
                _log.info("unmade paths: %s.%s drops %r: not here, not named, not written "
                          "before", step.tool, key, [p for p in value if p not in kept])
                args = {k: v for k, v in args.items() if k != key} | (
                    {key: kept} if kept else {})
        made |= {v for v in step.args.values() if isinstance(v, str)}
        steps.append(step if args == step.args else msgspec.structs.replace(step, args=args))
    return Plan(steps=tuple(steps))


#: An order to make a new file: "Create docs/stalls.md ...", "make a new file called x".
_CREATE = re.compile(r"^\W*(?:please\s+)?(?:create|make|start|add|write)\s+(?:a\s+)?(?:new\s+)?"
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


def refs_as_said(plan: Plan, asked: str, tools: Mapping[str, ToolDeclaration],
                 cwd: str) -> Plan:
    """``plan`` without an optional commit or branch to act from (a one-word argument
    its tool describes as a commit or a branch) that the request never says and that
    is no branch or tag here: "Create a branch named orchard-labels but keep me on the
    branch I'm on now" had started it from "current" (heldout40, after its run)."""
    steps = []
    for step in plan.steps:
        schema = getattr(tools.get(step.tool), "args_schema", {})
        args = {key: value for key, value in step.args.items() if not (
            isinstance(value, str) and key not in schema.get("required", ())
            and isinstance(spec := schema.get("properties", {}).get(key), Mapping)
            and spec.get("pattern") == ONE_WORD and not spec.get("x-adjutant-role")
            and re.search(r"\b(?:commit|branch)\b", str(spec.get("description", "")))
            and not re.match(r"(?i)head\b", value)
            and re.split(r"[~^]", value, maxsplit=1)[0].lower() not in asked.lower()
            and re.split(r"[~^]", value, maxsplit=1)[0] not in git_names(cwd))}
        if args != step.args:
            _log.info("unsaid ref: %s drops %r, said nowhere and no ref here", step.tool,
                      {k: v for k, v in step.args.items() if k not in args})
            step = msgspec.structs.replace(step, args=args)
        steps.append(step)
    return Plan(steps=tuple(steps))


#: Words that say one of a thing: a count of 1 the model wrote stays only with one.
_ONE = re.compile(r"(?<![\w.])1(?![\w.])|\b(?:one|single|first|last|latest|newest|recent|"
                  r"top|once|lone|a commit|the commit)\b", re.IGNORECASE)


def numbers_as_said(plan: Plan, asked: str, tools: Mapping[str, ToolDeclaration]) -> Plan:
    """``plan`` without an optional whole number the request says only inside a version
    or a path ("show the log of release/1.0" had listed one commit: ``max_count`` 1),
    and with a number it says nowhere as the one it says of that argument (heldout40,
    after its run: "just the first hundred bytes" had read 100000)."""
    told = with_digits(asked)
    steps = []
    for step in plan.steps:
        schema = getattr(tools.get(step.tool), "args_schema", {})
        args = {key: value for key, value in step.args.items() if not (
            isinstance(value, int) and not isinstance(value, bool)
            and key not in schema.get("required", ())
            and schema.get("properties", {}).get(key, {}).get("type") == "integer"
            and re.search(rf"(?<!\d){value}(?!\d)", told)
            and not re.search(rf"(?<![\w./-]){value}(?![\w/-]|\.\d)", told))}
        for key, value in list(args.items()):  # "the first hundred bytes": 100, not the
            spec = schema.get("properties", {}).get(key, {})  # 100000 the model wrote
            if isinstance(value, int) and not isinstance(value, bool) and spec.get(
                    "type") == "integer" and not re.search(rf"(?<!\d){value}(?!\d)", told) \
                    and (said := stated_number(key, spec, re.findall(r"[a-z0-9]+",
                                                                     told.lower()))) is not None:
                args[key] = said
            elif value == 1 and spec.get("type") == "integer" and key not in schema.get(
                    "required", ()) and not _ONE.search(told):
                del args[key]  # "only inside src" says no count (heldout46, after its run)
        if args != step.args:
            _log.info("unsaid number: %s %r is %r as said", step.tool, step.args, args)
            step = msgspec.structs.replace(step, args=args)
        steps.append(step)
    return Plan(steps=tuple(steps))


def unsaid_dropped(plan: Plan, asked: str, tools: Mapping[str, ToolDeclaration],
                   cwd: str) -> Plan:
    """``plan`` with what the request did not say taken out (this module's rules)."""
    plan = created_as_said(listed_as_said(plan, asked, tools, cwd), asked, tools, cwd)
    return numbers_as_said(refs_as_said(plan, asked, tools, cwd), asked, tools)
