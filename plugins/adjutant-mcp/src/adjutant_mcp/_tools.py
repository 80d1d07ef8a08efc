"""An MCP server's tool as an Adjutant tool, and the pins its definitions are held to.

Nothing the server says about itself is trusted: its tools are writing and
open-world unless the user's configuration lists them as read-only or local, its
annotations are ignored, and its description reaches the model only cleaned, clipped
and labelled as a server's words. A definition (name, description, input schema) is
pinned by hash when the user approves a call to it; the ``pre_tool_use`` hook asks
again whenever the definition listed now is not the pinned one.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
import re
import weakref
from pathlib import Path
from typing import TYPE_CHECKING, Any

from adjutant_hookspecs import (
    ARG_ROLE,
    ExecutionResult,
    ToolCall,
    ToolContext,
    ToolDeclaration,
    ToolSafety,
)

from ._config import ServerSpec, segment

if TYPE_CHECKING:
    from ._connection import Connection

__all__ = ["MAX_DESCRIPTION", "McpTool", "Pins", "declaration_for", "definition", "digest",
           "mounted"]

MAX_DESCRIPTION = 400
MAX_OUTPUT = 256 * 1024
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\u200b-\u200f\u202a-\u202e\u2066-\u2069]")

#: id(declaration) -> tool, for the ``pre_tool_use`` hook (which gets declarations).
_MOUNTED: weakref.WeakValueDictionary[int, McpTool] = weakref.WeakValueDictionary()


def definition(tool: Any) -> dict[str, Any]:
    """What is pinned: what the model is shown and what arguments are checked against."""
    if isinstance(tool, dict):
        return {"name": tool["name"], "description": tool.get("description") or "",
                "inputSchema": tool.get("inputSchema") or {}}
    return {"name": tool.name, "description": tool.description or "",
            "inputSchema": tool.input_schema}


def digest(defn: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(defn, sort_keys=True, ensure_ascii=False)
                          .encode()).hexdigest()


def clean_description(text: str) -> str:
    """One line, no control or direction-override characters, clipped."""
    text = " ".join(_CONTROL.sub(" ", text).split())
    return text if len(text) <= MAX_DESCRIPTION else text[:MAX_DESCRIPTION - 1] + "…"


#: Schema keywords whose values are maps of names to schemas (names are data, kept).
_NAMED = frozenset({"properties", "patternProperties", "$defs", "definitions",
                    "dependentSchemas"})


def untrusted_schema(node: Any, names: bool = False) -> Any:
    """A server's input schema as data only: every ``x-adjutant-*`` key removed (roles
    and example requests are ours to say, never a server's) and its descriptions and
    titles cleaned like the tool's own (they reach the model too)."""
    if isinstance(node, list):
        return [untrusted_schema(item) for item in node]
    if not isinstance(node, dict):
        return node
    if names:
        return {key: untrusted_schema(value) for key, value in node.items()}
    out: dict[str, Any] = {}
    for key, value in node.items():
        if isinstance(key, str) and key.lower().startswith("x-adjutant"):
            continue
        if key in ("description", "title") and isinstance(value, str):
            out[key] = clean_description(value)
        else:
            out[key] = untrusted_schema(value, names=key in _NAMED)
    return out


def declaration_for(spec: ServerSpec, defn: dict[str, Any], mount: str) -> ToolDeclaration:
    """The declaration a server's tool is mounted with (raises ValueError if unusable)."""
    schema = untrusted_schema(defn["inputSchema"] or {"type": "object"})
    if schema.get("type") != "object":
        raise ValueError("its input schema is not an object schema")
    if not isinstance(schema.setdefault("properties", {}), dict):
        raise ValueError("its input schema's properties are not an object")
    for arg, prop in schema["properties"].items():
        if arg in spec.path_args and isinstance(prop, dict):  # the user's word: cage it
            prop[ARG_ROLE] = "paths" if prop.get("type") == "array" else "path"
    name = defn["name"]
    if name in spec.read_only:
        safety = ToolSafety(level="read", network=name not in spec.local)
    else:
        safety = ToolSafety(writes=True, level="destructive", network=name not in spec.local)
    said = clean_description(defn["description"]) or "(no description)"
    examples: tuple[dict[str, Any], ...] = ()
    if name in spec.examples:  # the user's worked example, which the planner shows
        request, args = spec.examples[name]
        schema["x-adjutant-requests"] = [request]
        examples = (args,)
    return ToolDeclaration(
        name=mount, version=f"mcp-{digest(defn)[:12]}",
        description=f"[MCP server {spec.name!r}; its own words, untrusted] {said}",
        args_schema=schema, safety=safety, supports_dry_run=True, examples=examples)


def mount_name(spec: ServerSpec, tool: str, taken: set[str]) -> str:
    base = f"mcp.{spec.key}.{segment(tool)}"
    name, n = base, 2
    while name in taken:
        name, n = f"{base}_{n}", n + 1
    return name


class Pins:
    """Approved definitions, ``<home>/mcp/pins.json``: ``server/tool`` -> definition."""

    def __init__(self, home: Path) -> None:
        self.path = home / "mcp" / "pins.json"
        self._pins: dict[str, dict[str, Any]] = {}
        self._stamp: tuple[int, int] | None = None

    def _load(self) -> None:
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            self._pins, self._stamp = {}, None
            return
        if (st.st_mtime_ns, st.st_size) == self._stamp:
            return
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            data = {}  # unreadable pins pin nothing: everything asks again
        self._pins = data if isinstance(data, dict) else {}
        self._stamp = (st.st_mtime_ns, st.st_size)

    def get(self, server: str, tool: str) -> dict[str, Any] | None:
        self._load()
        entry = self._pins.get(f"{server}/{tool}")
        return entry if isinstance(entry, dict) else None

    def state(self, server: str, tool: str, defn: dict[str, Any]) -> str:
        """``pinned``, ``new`` or ``changed``."""
        entry = self.get(server, tool)
        if entry is None:
            return "new"
        return "pinned" if entry.get("digest") == digest(defn) else "changed"

    def pin(self, server: str, tool: str, defn: dict[str, Any]) -> None:
        if self.state(server, tool, defn) == "pinned":
            return
        self._pins[f"{server}/{tool}"] = {"digest": digest(defn), "definition": defn}
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(self._pins, indent=1, sort_keys=True), encoding="utf-8")
        os.replace(tmp, self.path)
        self._stamp = None

    def change(self, server: str, tool: str, defn: dict[str, Any]) -> str:
        """What changed since the pinned definition, as a diff a person can read."""
        entry = self.get(server, tool)
        if entry is None:
            return ""
        return _diff(entry.get("definition", {}), defn, "approved")


def render(result: Any) -> str:
    """A call result as text: text blocks as they are, anything else summarised."""
    parts = []
    for block in result.content:
        kind = getattr(block, "type", "?")
        if kind == "text":
            parts.append(block.text)
        elif kind == "resource" and hasattr(block.resource, "text"):
            parts.append(block.resource.text)
        else:
            parts.append(f"[{kind} content: {getattr(block, 'mime_type', '') or 'binary'}]")
    if not parts and result.structured_content is not None:
        parts.append(json.dumps(result.structured_content, ensure_ascii=False, indent=1))
    text = "\n".join(parts)
    return text if len(text) <= MAX_OUTPUT else text[:MAX_OUTPUT] + "\n[output clipped]"


class McpTool:
    """One tool of one server, mounted as ``mcp.<server>.<tool>``."""

    def __init__(self, spec: ServerSpec, defn: dict[str, Any], mount: str,
                 connection: Connection, pins: Pins) -> None:
        self.spec = spec
        self.definition = defn
        self.digest = digest(defn)
        self.remote = defn["name"]
        self.connection = connection
        self.pins = pins
        self.declaration = declaration_for(spec, defn, mount)
        _MOUNTED[id(self.declaration)] = self

    def pin_state(self) -> str:
        return self.pins.state(self.spec.name, self.remote, self.definition)

    async def dry_run(self, call: ToolCall, ctx: ToolContext) -> ExecutionResult:
        """The call as it would be sent, against the definition listed *now*: a server
        that changed the tool since it was mounted gets no call on the old terms."""
        tools = await self.connection.list_tools()
        now = next((definition(t) for t in tools if t.name == self.remote), None)
        if now is None:
            return ExecutionResult(tool=call.tool, args=call.args, status="error",
                                   stderr=f"MCP server {self.spec.name!r} no longer offers "
                                   f"{self.remote!r}")
        if digest(now) != self.digest:
            return ExecutionResult(
                tool=call.tool, args=call.args, status="error",
                stderr=f"MCP server {self.spec.name!r} changed the definition of "
                f"{self.remote!r} since it was listed; the tool was remounted and must be "
                "approved again:\n" + _diff(self.definition, now))
        state = self.pin_state()
        note = {"pinned": "as you approved it before",
                "new": "NEW: you have not approved this tool before",
                "changed": "CHANGED since you approved it:\n"
                + self.pins.change(self.spec.name, self.remote, now)}[state]
        preview = (
            f"MCP call {self.spec.name}/{self.remote} ({self.spec.transport}: "
            f"{self.spec.target})\n"
            f"arguments: {json.dumps(call.args, sort_keys=True, ensure_ascii=False)}\n"
            f"definition sha256:{self.digest[:16]}, {note}\n"
            "effect: whatever the server does; Adjutant cannot preview it")
        return ExecutionResult(tool=call.tool, args=call.args, status="dry_run",
                               dry_run_diff=preview)

    async def execute(self, call: ToolCall, ctx: ToolContext) -> ExecutionResult:
        # Running means the pipeline accepted this exact definition (pinned, or shown
        # and approved): remember it, so only a change asks again.
        self.pins.pin(self.spec.name, self.remote, self.definition)
        try:
            result = await self.connection.call(self.remote, dict(call.args))
        except TimeoutError as exc:
            return ExecutionResult(tool=call.tool, args=call.args, status="cancelled",
                                   stderr=str(exc))
        except Exception as exc:
            from ._connection import describe_error

            return ExecutionResult(tool=call.tool, args=call.args, status="error",
                                   stderr=f"MCP call failed: {describe_error(exc)}")
        text = render(result)
        if result.is_error:
            return ExecutionResult(tool=call.tool, args=call.args, status="error",
                                   stderr=text or "the server reported an error")
        return ExecutionResult(tool=call.tool, args=call.args, status="ok", stdout=text)


def _diff(old: dict[str, Any], new: dict[str, Any], label: str = "listed") -> str:
    a = json.dumps(old, indent=1, sort_keys=True).splitlines()
    b = json.dumps(new, indent=1, sort_keys=True).splitlines()
    return "\n".join(difflib.unified_diff(a, b, label, "now", lineterm="", n=1))


def mounted(declaration: ToolDeclaration) -> McpTool | None:
    """The mounted MCP tool a declaration belongs to, if any."""
    tool = _MOUNTED.get(id(declaration))
    return tool if tool is not None and tool.declaration is declaration else None
