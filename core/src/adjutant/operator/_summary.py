"""A step in plain words ("Append 1 line to notes.md"), shown first in every question
and in history, before the tool's name, arguments and preview.

Where it comes from, best first: the dry-run's own ``summary`` (only running it knows
"1 line" or "new file"), the declaration's ``summary`` template filled with the
arguments, else the tool's name and its first arguments. Every value is made printable
(bidi and invisible characters escaped, one line, cut): the words are built from what
the model proposed, so they get the same care as the arguments themselves.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from typing import Any

from adjutant_hookspecs import ExecutionResult, ToolDeclaration

from ..safety.terminal import printable

__all__ = ["fill", "summarize"]

_LIMIT = 160
_VALUE = 60
_OPTIONAL = re.compile(r"\[([^\[\]]*)\]")
_FIELD = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


def _value(value: Any) -> str:
    if isinstance(value, list | tuple):
        if all(isinstance(v, str) for v in value):
            text = shlex.join(value) if value and not any(" " in v for v in value[1:]) \
                else ", ".join(value)
        else:
            text = ", ".join(map(str, value))
    else:
        text = str(value)
    shown = printable(text, multiline=False)
    return shown if len(shown) <= _VALUE else shown[:_VALUE - 1] + "…"


def _given(value: Any) -> bool:
    return value is not None and value != "" and value != [] and value is not False


def fill(template: str, args: Mapping[str, Any]) -> str | None:
    """``template`` with each ``{field}`` replaced by its argument (printable, cut);
    a ``[...]`` part kept only when all its fields are given. None when a field outside
    brackets is missing (the template does not fit this call)."""
    def optional(match: re.Match[str]) -> str:
        names = _FIELD.findall(match.group(1))
        return match.group(1) if all(_given(args.get(n)) for n in names) else ""

    text = _OPTIONAL.sub(optional, template)
    if any(not _given(args.get(n)) for n in _FIELD.findall(text)):
        return None
    return _FIELD.sub(lambda m: _value(args[m.group(1)]), text)


def summarize(tool: str, args: Mapping[str, Any], declaration: ToolDeclaration | None,
              preview: ExecutionResult | None) -> str:
    """The step in plain words, one line of at most 160 characters."""
    text = None
    if preview is not None and preview.summary:
        text = printable(preview.summary, multiline=False)
    elif declaration is not None and declaration.summary:
        text = fill(declaration.summary, args)
    if not text:
        shown = ", ".join(f"{printable(k, multiline=False)} {_value(v)}"
                          for k, v in list(args.items())[:3] if _given(v))
        text = f"{printable(tool, multiline=False)}" + (f" ({shown})" if shown else "")
    return text if len(text) <= _LIMIT else text[:_LIMIT - 1] + "…"
