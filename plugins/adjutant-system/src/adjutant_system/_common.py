"""Shared helpers: results, refusals that name their rule, and schema building."""

from __future__ import annotations

import re
from typing import Any

from adjutant_hookspecs import ExecutionResult, ToolCall

__all__ = ["ESCALATION", "clean", "object_schema", "preview", "refuse"]

#: Programs that run a command as another user (or ask a privileged service to). The
#: guard policy refuses these too, wrappers included; this is defence in depth.
ESCALATION = frozenset({
    "sudo", "sudoedit", "su", "doas", "pkexec", "run0", "systemd-run", "machinectl", "dzdo",
    "ksu", "please", "pleaseedit", "runuser", "sg", "newgrp", "calife", "busctl", "dbus-send",
    "gdbus", "qdbus",
})

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def refuse(call: ToolCall, rule: str, detail: str) -> ExecutionResult:
    """A refused call: ``status="error"``, stderr naming the rule that refused it."""
    return ExecutionResult(tool=call.tool, args=dict(call.args), status="error",
                           stderr=f"{call.tool}: refused by rule `{rule}`: {detail}")


def preview(call: ToolCall, text: str) -> ExecutionResult:
    return ExecutionResult(tool=call.tool, args=dict(call.args), status="dry_run",
                           dry_run_diff=text)


def clean(text: str, limit: int = 512) -> str:
    """Control characters removed and length capped: safe to show in a preview."""
    text = _CONTROL.sub("?", text)
    return text if len(text) <= limit else text[:limit] + "..."


def object_schema(properties: dict[str, Any], required: list[str],
                  requests: list[str]) -> dict[str, Any]:
    """A strict object schema with natural-language requests that the tool answers."""
    return {"type": "object", "properties": properties, "required": required,
            "additionalProperties": False, "x-adjutant-requests": requests}


def int_arg(call: ToolCall, name: str, default: int | None, low: int,
            high: int) -> int | str:
    """The integer argument, or the reason it is not acceptable (bool is no integer)."""
    value = call.args.get(name, default)
    if isinstance(value, bool) or not isinstance(value, int):
        return f"`{name}` must be an integer"
    if not low <= value <= high:
        return f"`{name}` must be between {low} and {high}"
    return value
