"""Two small tool declarations the provider's grammar tests plan with (a read with a
required path, a list with an optional name filter)."""

from __future__ import annotations

from adjutant_hookspecs import ToolDeclaration, ToolSafety

READ = ToolDeclaration(
    name="fs.read", version="1", description="Read a text file.",
    args_schema={"type": "object", "properties": {"path": {"type": "string"},
                                                  "max_bytes": {"type": "integer"}},
                 "required": ["path"], "additionalProperties": False},
    safety=ToolSafety(level="read"))
LIST = ToolDeclaration(
    name="proc.list", version="1", description="List processes.",
    args_schema={"type": "object", "properties": {"name": {"type": "string"}},
                 "additionalProperties": False},
    safety=ToolSafety(level="read"))
