"""Heads a request names by its shape rather than by its words: the command runner
when it says which program to use, the scheduler when it says "every weekday".
`Planner.decide` takes them over the model's choice, and logs it."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from adjutant_hookspecs import ToolDeclaration

from ._words import named_programs

__all__ = ["declared_args", "runner_among", "timer_among"]


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
