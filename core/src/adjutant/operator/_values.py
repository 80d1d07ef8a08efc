"""Values a plan may hold: those the request states (or the workspace holds), never one
copied from a worked example. A small model copies what it was shown: the pid of an
example became the pid to stop for "run the test suite". Pure; no model needed."""

from __future__ import annotations

import json
import logging
import os
import re
from collections.abc import Mapping, Sequence
from typing import Any

import msgspec

from adjutant_hookspecs import Plan, Response, ToolCall, ToolDeclaration, is_write

from ._declared import without_switching_again
from ._heads import declared_args
from ._here import files_called, here, inside, named_documents, workspace_paths
from ._numbers import stated_number
from ._words import QUOTED, carried_text, hinted, typing_slips

__all__ = ["argv_files_as_here", "each_listed", "inputs_as_here", "joined", "output_not_input",
           "paths_as_named", "paths_not_quoted", "quote_as_said", "searched_for",
           "stated_number", "tool_said", "without_copied_values", "without_more"]

_log = logging.getLogger("adjutant.planner")
def without_copied_values(plan: Plan, asked: str, shown: str,
                          tools: Mapping[str, ToolDeclaration],
                          cwd: str = "") -> Plan | Response:
    """``plan`` without the values it copied from the worked examples in ``shown`` (the
    prompt's text) that ``asked`` does not state and that name no file under ``cwd``:
    an optional argument holding one is left out, a step that needs one is dropped,
    and a plan left with no step becomes an answer saying what was missing. A command
    line (an ``argv`` argument) is the exception: "run the tests" names no program."""
    steps = []
    missing = []
    for step in plan.steps:
        declaration = tools.get(step.tool)
        schema = declaration.args_schema if declaration else {}
        required = set(schema.get("required", []))
        props = schema.get("properties", {})
        args = dict(step.args)
        for key, value in step.args.items():
            if props.get(key, {}).get("x-adjutant-role") == "argv":
                continue  # a command described in words ("run the tests") is inferred;
                # its preview is the exact argv
            if not _copied(value, asked, shown, cwd) or _named_tool(value, asked, tools):
                continue
            _log.info("copied value: %s.%s=%r is in an example, not in %r", step.tool, key,
                      value, asked[:80])
            if said := _tool_said(value, asked, tools, step.tool):
                _log.info("named tool: %s.%s is %r, which the request names", step.tool,
                          key, said)
                args[key] = said
                continue
            spec = props.get(key, {})
            if spec.get("type") == "integer" and (number := stated_number(
                    key, spec, re.findall(r"[a-z0-9]+", asked.lower()))) is not None:
                _log.info("stated number: %s.%s is %d, as the request says", step.tool, key,
                          number)
                args[key] = number  # an example's port for "port 8080 on ::1"
                continue
            if key in required:
                missing.append(f"the {key.replace('_', ' ')} for {step.tool}")
                args = {}
                break
            del args[key]
        else:
            steps.append(msgspec.structs.replace(step, args=args))
    if not steps:
        return Response(text=f"I could not tell {missing[0] if missing else 'what to use'}: "
                             "the request does not say. Say it, and ask again.")
    return plan if len(steps) == len(plan.steps) and all(
        a.args == b.args for a, b in zip(steps, plan.steps, strict=True)) else Plan(
        steps=tuple(steps))


def _named_tool(value: Any, asked: str, tools: Mapping[str, ToolDeclaration]) -> bool:
    """Whether ``value`` is an offered tool the request names by its verb ("every
    weekday summarize the PDFs": a schedule of `doc.summarize`, its capability)."""
    if not isinstance(value, str) or value not in tools:
        return False
    words = re.findall(r"[a-z0-9]+", asked.lower())
    return any(w.startswith(value.rsplit(".", 1)[-1][:6]) for w in words)


def _tool_said(value: Any, asked: str, tools: Mapping[str, ToolDeclaration],
               own: str) -> str:
    """For a tool name copied from an example, the one other offered tool the request
    names by its verb ("every weekday at 7:30 summarize the PDFs": `doc.summarize`, not
    the example's `fs.read`); empty when none or several ("list" is two tools')."""
    if not isinstance(value, str) or value not in tools:
        return ""
    return tool_said(asked, tools, (own, value))


def tool_said(asked: str, tools: Mapping[str, ToolDeclaration], other_than: Sequence[str]) -> str:
    """The one offered tool, none of ``other_than``, that ``asked`` names by its verb
    ("summarize the PDFs": `doc.summarize`); empty when none or several."""
    named = [t for t in tools if t not in other_than and _named_tool(t, asked, tools)]
    return named[0] if len(named) == 1 else ""


def _copied(value: Any, asked: str, shown: str, cwd: str) -> bool:
    """Whether ``value`` (or an item of it) is an example's, unstated and no file here."""
    if isinstance(value, list):
        return any(_copied(v, asked, shown, cwd) for v in value)
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        return False
    text = str(value).strip()
    if len(text) < 2 or json.dumps(value) not in shown:
        return False
    words = re.findall(r"[a-z0-9]+", asked.lower())
    if all(any(w.startswith(part) for w in words)  # "TODO" in "the TODOs", "src.zip"
           for part in re.findall(r"[a-z0-9]+", text.lower())):  # in "zip the src folder"
        return False
    return not (cwd and isinstance(value, str) and "\x00" not in value
                and os.path.lexists(os.path.join(cwd, value)))


def paths_as_named(plan: Plan, asked: str, tools: Mapping[str, ToolDeclaration],
                   cwd: str = "") -> Plan:
    """``plan`` with the path of a step taking one path set to the one file ``asked``
    names, where the step's path is neither named nor hinted at by it ("what does the
    CHANGELOG say about 1.0?" had been a read of README.md, a file of the examples that
    is also here)."""
    named = list(dict.fromkeys((here(cwd, p) if cwd else None) or p
                               for p in named_documents(asked)))
    called = files_called(asked, cwd) if cwd and not named else []
    if len(named) != 1 and len(called) != 1:
        return plan
    steps = []
    for step in plan.steps:
        props = declared_args(tools, step.tool)
        keys = [k for k, v in props.items() if isinstance(v, Mapping)
                and v.get("x-adjutant-role") == "path"]
        value = step.args.get(keys[0]) if len(keys) == 1 else None
        if called and isinstance(value, str) and "content" in step.args \
                and called[0].startswith(value.rstrip("/") + "/") \
                and os.path.isdir(os.path.join(cwd, value)):
            # text written to a folder: the file in it the request calls by name ("add
            # a line to the guide in docs": docs/guide.md)
            _log.info("named path: %s.%s %r is a folder; %r names %r", step.tool, keys[0],
                      value, asked[:80], called[0])
            step = msgspec.structs.replace(step, args={**step.args, keys[0]: called[0]})
        elif named and isinstance(value, str) and value != named[0] \
                and not hinted(value, asked):
            _log.info("named path: %s.%s %r is not what %r names: %r", step.tool, keys[0],
                      value, asked[:80], named[0])
            step = msgspec.structs.replace(step, args={**step.args, keys[0]: named[0]})
        steps.append(step)
    return Plan(steps=tuple(steps))


#: The shortest name (with its extension) in which one typing slip is mended to the one
#: file here it is a slip from: shorter names are a slip from too many others.
SLIPPED_NAME = 8


def inputs_as_here(plan: Plan, tools: Mapping[str, ToolDeclaration], cwd: str) -> Plan:
    """``plan`` with each path it reads that is not here as the one file here it names
    in another case, without its folder ("bundle the readme and the guide" had been
    an archive of readme.md and guide.md: README.md, docs/guide.md) or with one typing
    slip in a long enough name ("setings.json"). Only what a step reads: a read tool's
    path, any tool's list of paths; a path a write makes stays, but for the one name of
    a file here in another case."""
    files: dict[str, list[str]] = {}
    for path in workspace_paths(cwd):
        files.setdefault(os.path.basename(path).lower(), []).append(path)

    def found(value: Any) -> Any:
        if not isinstance(value, str) or not value.strip("./") or os.path.isabs(value) or \
                ".." in value.split("/") or os.path.lexists(os.path.join(cwd, value)):
            return value  # what is here, and what is asked outside (the cage says no)
        if real := here(cwd, value):
            return real
        name = os.path.basename(value.rstrip("/")).lower()
        same = files.get(name, [])
        if not same and len(name) >= SLIPPED_NAME:  # "setings.json": config/settings.json
            same = [p for slip in typing_slips(name) for p in files.get(slip, [])]
        return same[0] if len(set(same)) == 1 else value

    steps = []
    for step in plan.steps:
        declaration = tools.get(step.tool)
        props = declaration.args_schema.get("properties", {}) if declaration else {}
        args = dict(step.args)
        for key, value in step.args.items():
            role = props.get(key, {}).get("x-adjutant-role") if isinstance(
                props.get(key), Mapping) else None
            if role == "paths" and isinstance(value, list):
                args[key] = [found(v) for v in value]
            elif role == "path" and declaration is not None and not is_write(declaration):
                args[key] = found(value)
            elif role == "path" and isinstance(value, str) and _path_key(step, tools) == key \
                    and not os.path.isabs(value) and ".." not in value.split("/"):
                args[key] = here(cwd, value) or value  # "add x to Notes.txt": notes.txt (h42),
                # not a second file beside it; a move's two names may differ in case only
        if args != step.args:
            _log.info("read here: %s %r is %r", step.tool, step.args, args)
            step = msgspec.structs.replace(step, args=args)
        steps.append(step)
    return Plan(steps=tuple(steps))


def _path_key(step: ToolCall, tools: Mapping[str, ToolDeclaration]) -> str | None:
    """The one argument of ``step`` taking one path, if it has exactly one."""
    props = tools[step.tool].args_schema.get("properties", {}) if step.tool in tools else {}
    keys = [k for k, v in props.items() if isinstance(v, Mapping)
            and v.get("x-adjutant-role") == "path"]
    return keys[0] if len(keys) == 1 else None


def paths_not_quoted(plan: Plan, asked: str, tools: Mapping[str, ToolDeclaration]) -> Plan:
    """``plan`` with a later step's path that the request names only inside quoted text
    (content, not a place) set to the step before's path: "open the guide in docs and
    then add a line at the end: 'Logs are written to logs/app.log.'" had appended to
    logs/app.log, the text's own words."""
    outside = QUOTED.sub(" ", asked)
    # quoted sentences only: a quoted name ("then create 'report.md'") is a place
    quoted = " ".join(q for q in QUOTED.findall(asked) if len(q.split()) >= 3)
    names = " ".join(q for q in QUOTED.findall(asked) if len(q.split()) < 3)
    steps: list[ToolCall] = []
    for step in plan.steps:
        key = _path_key(step, tools)
        value = step.args.get(key) if key else None
        before = steps[-1] if steps else None
        earlier = before.args.get(_path_key(before, tools) or "") if before else None
        if isinstance(value, str) and value in quoted and value not in outside + names \
                and os.path.basename(value) not in outside and isinstance(earlier, str) \
                and earlier != value:
            _log.info("quoted path: %s.%s %r is in the quoted text; the step before's %r",
                      step.tool, key, value, earlier)
            step = msgspec.structs.replace(step, args={**step.args, key: earlier})
        steps.append(step)
    return plan if all(a is b for a, b in zip(steps, plan.steps, strict=True)) else Plan(
        steps=tuple(steps))


def output_not_input(plan: Plan, asked: str, tools: Mapping[str, ToolDeclaration],
                     cwd: str) -> Plan:
    """``plan`` with a step's output (its one path) that is not here taken out of its
    inputs (its list of paths), and the files here ``asked`` names that the inputs lack
    put in: "bundle config/settings.json with the logs folder into debug-bundle.zip"
    had zipped debug-bundle.zip and logs."""
    steps = []
    for step in plan.steps:
        props = tools[step.tool].args_schema.get("properties", {}) if step.tool in tools else {}
        lists = [k for k, v in props.items() if isinstance(v, Mapping)
                 and v.get("x-adjutant-role") == "paths"]
        key, items = _path_key(step, tools), step.args.get(lists[0]) if lists else None
        out = step.args.get(key) if key else None
        if isinstance(items, list) and isinstance(out, str) and out in items \
                and not os.path.lexists(os.path.join(cwd, out)):
            named = [real for p in named_documents(asked)
                     if (real := here(cwd, p)) and inside(cwd, real)]
            kept = [i for i in items if i != out]
            kept += [p for p in dict.fromkeys(named) if p not in kept and p != out]
            kept.sort(key=lambda p: (asked.find(p) % (len(asked) + 1)))  # as asked
            if kept:
                _log.info("output: %s %r is its own input; inputs %r", step.tool, out, kept)
                step = msgspec.structs.replace(step, args={**step.args, lists[0]: kept})
        steps.append(step)
    return Plan(steps=tuple(steps))


#: "grep the app log for errors": the place searched, then what is searched for.
_PLACE_FOR = re.compile(r"\b(?:the|my|our)\s+(?P<place>[\w-]+(?:\s+[\w-]+)?)\s+for\s+(?:the\s+"
                        r"(?:word|string|text)\s+)?(?P<what>[\w.-]+)|^\W*(?:grep|search)\s+"
                        r"(?:in\s+|through\s+)?(?P<folder>[\w./-]+)\s+for\s+(?:the\s+(?:word|"
                        r"string|text)\s+)?(?P<term>[\w.-]+)", re.IGNORECASE)


def searched_for(plan: Plan, asked: str, tools: Mapping[str, ToolDeclaration],
                 cwd: str = "") -> Plan:
    """``plan`` with a ``pattern`` that is the words of the place searched ("grep the
    app log for errors" had searched for "app log", "grep src for todo" for "src") as
    what the request searches for ("error": a plural said of what lines hold is
    searched in the singular), and that place, where it is a path here, searched."""
    said = _PLACE_FOR.search(asked)
    if said is None:
        return plan
    place, what = said["place"] or said["folder"], said["what"] or said["term"]
    what = what[:-1] if len(what) > 4 and what.endswith("s") and not what.endswith(
        ("ss", "us", "is", "ys")) else what  # "errors", not "status", "analysis", "keys"
    within = [place] if cwd and said["folder"] and inside(cwd, place) and os.path.exists(
        os.path.join(cwd, place)) else []
    steps = tuple(msgspec.structs.replace(step, args={
        **step.args, "pattern": what, **({"paths": within} if within and not step.args.get(
            "paths") and "paths" in declared_args(tools, step.tool) else {})})
                  if isinstance(step.args.get("pattern"), str)
                  and step.args["pattern"].lower() == place.lower() else step
                  for step in plan.steps)
    return plan if steps == plan.steps else Plan(steps=steps)


#: What joins the names of a list: "src/app.py and src/util.py", "a.md, b.md & c.md".
_LIST_JOIN = re.compile(r"\s*(?:,\s*and|,|and|&)\s+(?:the\s+|also\s+)?", re.IGNORECASE)


def each_listed(plan: Plan, asked: str, tools: Mapping[str, ToolDeclaration],
                cwd: str) -> Plan:
    """A plan of one read of one path, where the request lists that path with others
    here ("can you read src/app.py and src/util.py for me"), as one read of each, in
    the request's order: a tool taking one path is called once per path."""
    if len(plan.steps) != 1 or (key := _path_key(step := plan.steps[0], tools)) is None \
            or is_write(tools[step.tool]) or not isinstance(step.args.get(key), str):
        return plan
    text, at = QUOTED.sub(lambda m: " " * len(m.group(0)), asked), 0
    run: list[str] = []
    for name in named_documents(asked):
        start = text.find(name, at)
        if start < 0:
            continue
        if run and not _LIST_JOIN.fullmatch(text[at:start]):
            if step.args[key] in run:
                break
            run = []
        run, at = [*run, name], start + len(name)
    found = [real for p in run if (real := here(cwd, p)) and inside(cwd, real)]
    if not (2 <= len(found) == len(run) <= 4) or len(set(found)) < len(found) \
            or (here(cwd, step.args[key]) or step.args[key]) not in found:
        return plan
    _log.info("listed: %r names %s; %s of each", asked[:80], ", ".join(found), step.tool)
    return Plan(steps=tuple(msgspec.structs.replace(step, args={**step.args, key: p})
                            for p in found))


def _merged(steps: list[ToolCall], tools: Mapping[str, ToolDeclaration]) -> tuple[ToolCall, ...]:
    """``steps`` without a step that is less of the one before it (some of its values,
    all the same) or, for a read, the same again, and with a read that follows a read of
    the same tool differing only in a list of fixed choices made one ("which python version
    is installed, and how many cpus?": sys.info of python and cpu, not two)."""
    out: list[ToolCall] = []
    for step in steps:
        before = out[-1] if out else None
        if before is not None and before.tool == step.tool and (len(step.args) < len(
                before.args) or (step.args == before.args and step.tool in tools
                                 and not is_write(tools[step.tool]))) and all(
                before.args.get(k) == v for k, v in step.args.items()):
            continue  # the model looping (8 logs); a write again is the stuck guard's,
            # which pauses the run and says so
        props = tools[step.tool].args_schema.get("properties", {}) if step.tool in tools else {}
        choices = [k for k, v in props.items() if isinstance(v, Mapping) and v.get(
            "type") == "array" and isinstance(v.get("items"), Mapping) and "enum" in v["items"]]
        if before is not None and before.tool == step.tool and choices \
                and not is_write(tools[step.tool]) and all(
                    before.args.get(k) == step.args.get(k) for k in {*before.args, *step.args}
                    if k not in choices) and all(isinstance(s.args.get(k, []), list)
                                                 for s in (before, step) for k in choices):
            args = {k: v for k, v in before.args.items() if k not in choices}
            args.update({k: list(dict.fromkeys([*before.args[k], *step.args[k]]))
                         for k in choices if k in before.args and k in step.args})
            out[-1] = msgspec.structs.replace(before, args=args)  # one without: all of them
            continue
        out.append(step)
    return tuple(out)


def joined(replies: Sequence[Plan | Response], asked: str,
           tools: Mapping[str, ToolDeclaration]) -> Plan | Response:
    """The replies to a request's clauses as one plan: their steps in order (a clause
    answered in words adds none; the first reply when none has a step), with the paths
    settled across them (`paths_not_quoted`: "it" in a later clause is an earlier one's
    file)."""
    steps = _merged([step for r in replies if isinstance(r, Plan) for step in r.steps], tools)
    if not steps:
        return replies[0]
    return without_switching_again(paths_not_quoted(Plan(steps=steps), asked, tools), tools) \
        if len(replies) > 1 else Plan(steps=steps)


def argv_files_as_here(plan: Plan, asked: str, tools: Mapping[str, ToolDeclaration],
                       cwd: str) -> Plan:
    """``plan`` with a command line's file the model named with an ending of its own
    ("count README lines with wc" ran ``wc README.txt``) as the one file here of the
    stem the request says; a name the request writes, or one here, stays; an option's
    file no one said and not here goes with it."""
    stems: dict[str, list[str]] = {}
    for path in workspace_paths(cwd):
        if os.path.isfile(os.path.join(cwd, path)):
            stems.setdefault(os.path.basename(path).split(".", 1)[0].lower(), []).append(path)
    said = set(re.findall(r"[a-z0-9_-]+", asked.lower()))
    steps = []
    for step in plan.steps:
        props = tools[step.tool].args_schema.get("properties", {}) if step.tool in tools \
            else {}
        args = dict(step.args)
        for key, value in step.args.items():
            if not (isinstance(value, list) and isinstance(props.get(key), Mapping)
                    and props[key].get("x-adjutant-role") == "argv"):
                continue
            items: list[Any] = []
            for item in value:
                stem, dot, _ = str(item).partition(".")
                only = stems.get(stem.lower(), [])
                if dot and "/" not in item and item not in asked and stem.lower() in said \
                        and not os.path.lexists(os.path.join(cwd, item)) and len(only) == 1:
                    _log.info("argv file: %r is %r here", item, only[0])
                    item = only[0]
                elif len(items) > 1 and items[-1].startswith("-") and items[-1] not in asked \
                        and re.fullmatch(r"[\w-]+\.[a-z]{1,4}", item) and stem.lower() not in \
                        said and not os.path.lexists(os.path.join(cwd, item)):
                    _log.info("argv file: %s %s is no file here nor said", items.pop(), item)
                    continue  # "-m test_file.py": an option's value made up
                items.append(item)
            args[key] = items
        steps.append(step if args == step.args else msgspec.structs.replace(step, args=args))
    return Plan(steps=tuple(steps))


#: The request's own words asking to keep what follows ("remember that", "note:"): a
#: text kept opening with them wrote the ask down too ("remember i like commit messages
#: in the imperative mood" remembered "remember i like ...").
_ASKED_TO_KEEP = re.compile(r"(?:please\s+)?(?:(?:remember|keep in mind)(?:\s+that\b)?|"
                            r"(?:note|jot down|write down)(?:\s+(?:for|in|about) (?:this|the|"
                            r"my|our) (?:project|repo|repository|folder))?(?:\s+that\b|\s*:))"
                            r"\s+", re.IGNORECASE)


def _led_by(value: str, content: str) -> str:
    """``content`` as ``value`` opens with it: without its full stop when the model left
    that out ("... root\n\nEnd." for "... root."; heldout38, after its run)."""
    bare = content.rstrip(".!?")
    return bare if not value.lower().startswith(content.lower()) else content


def without_more(plan: Plan, content: str, tools: Mapping[str, ToolDeclaration],
                 others: Sequence[str] = (), asked: str = "") -> Plan:
    """``plan`` with each text value that starts with the ``content`` the request
    carries (or quotes) and goes on past it cut back to it: a small model, given
    "replace the notes with: X", wrote X and then paragraphs of its own. What goes on
    to hold ``others`` (the request's other quoted texts) is the request's, and kept.
    A value that is the whole request (``asked``: "Note for this project: the report is
    run with ..." written down as it was said), and on past it, is what it carries; a
    text opening with the request's own ask to keep it ("remember i like ...") loses
    that ask (with no ``content`` too)."""
    steps = []
    whole = asked.strip().rstrip(".!").lower()
    for step in plan.steps:
        props = getattr(tools.get(step.tool), "args_schema", {}).get("properties", {})
        args = dict(step.args)
        for key, value in step.args.items():
            if content and whole and isinstance(value, str) \
                    and value.strip().lower().startswith(whole) \
                    and not props.get(key, {}).get("x-adjutant-role"):
                _log.info("carried text: %s.%s is the whole request; what it carries",
                          step.tool, key)
                args[key] = content + ("\n" if value.endswith("\n") else "")
            elif content and isinstance(value, str) \
                    and not props.get(key, {}).get("x-adjutant-role") \
                    and value.lower().startswith(said := _led_by(value, content).lower()) \
                    and value[len(said):].strip(" \t\n.!?;,:") \
                    and not any(o.lower() in value[len(said):].lower() for o in others):
                _log.info("carried text: %s.%s went on past what the request says; cut",
                          step.tool, key)
                args[key] = content + ("\n" if value[len(said)] == "\n" else "")
            elif "\n" in content and isinstance(value, str) and value.strip() != content \
                    and not props.get(key, {}).get("x-adjutant-role") and _shares_a_line(
                        value, content):  # lines carried, the model's own among them
                _log.info("carried text: %s.%s is not the lines the request carries",
                          step.tool, key)
                args[key] = content + "\n"
            elif isinstance(value, str) and (verb := _ASKED_TO_KEEP.match(value)) \
                    and asked.lower().startswith(verb.group(0).lower()) \
                    and not props.get(key, {}).get("x-adjutant-role") \
                    and value[verb.end():].strip():  # "remember i like ..." kept as said
                _log.info("carried text: %s.%s opens with the request's own verb; cut",
                          step.tool, key)
                args[key] = value[verb.end():]
        steps.append(step if args == step.args else msgspec.structs.replace(step, args=args))
    return Plan(steps=tuple(steps))


def _shares_a_line(value: str, content: str) -> bool:
    """Whether ``value`` holds a line of three words or more of ``content``."""
    ours = {line.strip() for line in content.splitlines() if len(line.split()) >= 3}
    return any(line.strip() in ours for line in value.splitlines())


#: "remember that our staging port is 8443", "jot down that fractions come first":
#: what to keep, as said.
_KEEP_THAT = re.compile(r"\b(?:remember|notes?|jot(?: down)?|write down|keep in mind|make a "
                        r"note|record)(?:\s+(?:for|in|about) (?:this|the|my|our) (?:project|"
                        r"repo|repository|folder))?\s+that\s+(?P<said>(?:[^.!?\n]|\.(?=\w))+)",
                        re.IGNORECASE)


def kept_as_said(plan: Plan, asked: str, tools: Mapping[str, ToolDeclaration]) -> Plan:
    """``plan`` with a recorded ``text`` made of the words the request asks to keep, or
    some, or their forms ("staging port 8443" for "remember that our staging port is
    8443"), as said, full stop and all: shorter can lose what it meant; nor longer, with
    three words or more never said. The same words in another case stay."""
    said = _KEEP_THAT.search(QUOTED.sub(" ", asked))
    whole = said["said"] + asked[said.end():said.end() + 1].strip(",;:?") if said else \
        carried_text(asked)  # "Keep this as a fact: X.", its full stop too
    if len(whole) > 2 and whole[0] == whole[-1] and whole[0] in "'\"":
        whole = whole[1:-1]  # "... completely with: 'X; Y.'" keeps X; Y.
    if not whole:
        return plan
    typed = whole.strip(" ,;:\n")  # with its full stop: "X." kept as "X" is not as said
    whole = whole.strip(" ,;:").rstrip(".!").strip()
    typed = typed if typed.startswith(whole) and typed[len(whole):] in (".", "!") else whole
    words = set(_WORD_OF.findall(whole.lower()))
    request = set(_WORD_OF.findall(asked.lower()))
    steps = []
    for step in plan.steps:
        value = step.args.get("text")
        declaration = tools.get(step.tool)
        if declaration is not None and is_write(declaration) and isinstance(value, str) \
                and "text" in declaration.args_schema.get("required", ()) \
                and (mine := set(_WORD_OF.findall(value.lower()))) and (all(
                    any(w == m or (min(len(w), len(m)) >= 4 and (w.startswith(m) or m.startswith(
                        w))) for w in words) for m in mine) or (
                    # all of it said, then words of the model's own ("PDF summaries run on
                    # Mondays\n\nPlease note that this is a general knowledge question")
                    words <= mine and len(mine - request) >= 3)) \
                and value.strip().rstrip(".!").lower() != whole.lower():
            _log.info("kept as said: %s.text %r is part of %r", step.tool, value, whole)
            step = msgspec.structs.replace(step, args={**step.args, "text": typed})
        elif declaration is not None and isinstance(value, str) and value.strip() == whole \
                and typed != whole:  # its full stop left off
            step = msgspec.structs.replace(step, args={**step.args, "text": typed})
        steps.append(step)
    return Plan(steps=tuple(steps))


_WORD_OF = re.compile(r"[a-z0-9]+")
#: The request's own words leading to a quoted value: "all tracked changes as 'wip: ..."
_LEADS_TO_QUOTE = re.compile(r"^[\w\s,-]*\b(?:as|with|saying|says|message|titled|called|"
                             r"named|reading|text)\s*:?\s*$", re.IGNORECASE)


#: Arguments that name or label a thing in a line: a fact or a file's text may say
#: "... is run with `python3 src/app.py`" whole.
_LABELS = frozenset(("message", "title", "name", "subject", "label", "summary"))


def quote_as_said(plan: Plan, asked: str, tools: Mapping[str, ToolDeclaration]) -> Plan:
    """``plan`` with a free text value copied from the request's words up to a quoted
    text, quote marks and all ("commit all tracked changes as 'wip: typo fixes'" had
    the message "all tracked changes as 'wip: typo fixes'"), as the quoted text alone."""
    steps = []
    for step in plan.steps:
        props = declared_args(tools, step.tool)
        args = dict(step.args)
        for key, value in step.args.items():
            spec = props.get(key)
            if not (key in _LABELS and isinstance(value, str) and isinstance(spec, Mapping)
                    and not spec.get("x-adjutant-role") and value in asked):
                continue
            for quote in QUOTED.findall(value):
                if value.rstrip(" .!").endswith(quote) and _LEADS_TO_QUOTE.match(
                        value.rstrip(" .!")[:-len(quote)]) and quote[1:-1].strip():
                    _log.info("quoted: %s.%s %r is the request's quote", step.tool, key, value)
                    args[key] = quote[1:-1]
        steps.append(step if args == step.args else msgspec.structs.replace(step, args=args))
    return Plan(steps=tuple(steps))
