"""Shared test helpers: a cage with the files the examples need, and call shortcuts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from adjutant_hookspecs import ExecutionResult, ToolCall, ToolContext


def make_cage(root: Path) -> ToolContext:
    """A cage at ``root/proj`` holding what every example refers to."""
    cage = root / "proj"
    (cage / "src").mkdir(parents=True)
    (cage / "out").mkdir()
    (cage / "notes.txt").write_text("hello\nworld\n")
    (cage / "notes.old").write_text("hello\n")
    (cage / "src" / "app.py").write_text("def main():\n    return 1  # TODO\n")
    return ToolContext(cwd=str(cage), cages=(str(cage),))


async def run(tool: Any, ctx: ToolContext, dry: bool = False, **args: Any) -> ExecutionResult:
    call = ToolCall(tool=tool.declaration.name, args=args)
    return await (tool.dry_run(call, ctx) if dry else tool.execute(call, ctx))


def snapshot(root: Path) -> dict[str, bytes | str]:
    """Every entry under root: file bytes, link targets, directories."""
    out: dict[str, bytes | str] = {}
    for path in sorted(root.rglob("*")):
        key = str(path.relative_to(root))
        if path.is_symlink():
            out[key] = "link:" + str(path.readlink())
        elif path.is_dir():
            out[key] = "dir"
        elif not path.is_file():
            out[key] = "special"
        else:
            out[key] = path.read_bytes()
    return out
