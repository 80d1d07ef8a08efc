"""The write-gate: every write-intent step needs an explicit approval, in every mode.

It vetoes nothing; it demands consent. ``pre_tool_use`` answers ``ask`` for every
write, which the kernel enforces twice (before asking the user, and again right
before execution, where only an approval token bound to the exact previewed effect
lets the step run). ``confirmation_details`` fills the packet the user sees, with the
standing grants (``file:``, ``tool:``) that would answer the question next time: the
operator answers it with such a grant as with a yes, bound to the previewed digest.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING, Any

from adjutant.safety.regular import NotRegularFile, file_kind, open_regular
from adjutant_hookspecs import hookimpl, lazy_exports

if TYPE_CHECKING:  # msgspec structs, imported when a hook first runs (`--help` never)
    from adjutant_hookspecs import ExecutionResult, ToolCall, ToolDeclaration, Verdict, is_write

__all__ = ["EXCERPT_BYTES", "confirmation_details", "is_write", "pre_tool_use"]
__getattr__ = lazy_exports(__name__, {"is_write": "adjutant_hookspecs"})

#: How much of a target's current content the packet shows.
EXCERPT_BYTES = 4096


@hookimpl
def pre_tool_use(call: ToolCall, declaration: ToolDeclaration, mode: str) -> Verdict | None:
    from adjutant_hookspecs import Verdict, is_write

    if not is_write(declaration):
        return None
    return Verdict(decision="ask", policy="write-gate",
                   reason=f"{call.tool} writes: every write needs your explicit approval "
                   f"(mode {mode})")


def _targets(call: ToolCall, declaration: ToolDeclaration, cwd: str) -> list[str]:
    """Arguments the schema marks as paths, made absolute (not resolved: show what
    the model asked for; the guard judges where it really lands)."""
    from adjutant_hookspecs import ARG_ROLE

    out = []
    for name, schema in declaration.args_schema.get("properties", {}).items():
        role, value = schema.get(ARG_ROLE), call.args.get(name)
        values = [value] if role == "path" else value if role == "paths" else []
        for item in values if isinstance(values, list) else []:
            if isinstance(item, str) and "\x00" not in item:
                out.append(os.path.normpath(os.path.join(cwd, os.path.expanduser(item))))
    return out


def _current(path: str) -> dict[str, Any]:
    """What is at ``path`` now, for the packet. Never blocks: a named pipe, socket or
    device is described, not opened (a blocking open of a FIFO would hang the request,
    and the dock or MCP server with it), and a link is described, not followed."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return {"path": path, "state": "does not exist"}
    except OSError as exc:
        return {"path": path, "state": f"unreadable: {exc.strerror}"}
    if stat.S_ISLNK(st.st_mode):
        try:
            return {"path": path, "state": f"symlink to {os.readlink(path)}"}
        except OSError as exc:
            return {"path": path, "state": f"unreadable link: {exc.strerror}"}
    if stat.S_ISDIR(st.st_mode):
        return {"path": path, "state": "directory"}
    if not stat.S_ISREG(st.st_mode):
        return {"path": path, "state": f"{file_kind(st.st_mode)}, not a regular file: "
                "a write to it is refused"}
    try:
        with open_regular(path, follow_links=False) as handle:
            head = handle.read(EXCERPT_BYTES + 1)
            size = os.fstat(handle.fileno()).st_size
    except NotRegularFile as exc:  # swapped since the lstat
        return {"path": path, "state": f"{exc.kind}, not a regular file: a write to it "
                "is refused"}
    except OSError as exc:
        return {"path": path, "state": f"unreadable: {exc.strerror}"}
    if b"\x00" in head:
        return {"path": path, "state": f"binary, {size} bytes"}
    text = head[:EXCERPT_BYTES].decode("utf-8", errors="replace")
    return {"path": path, "state": f"{size} bytes", "excerpt": text,
            "truncated": size > EXCERPT_BYTES}


def _standing(call: ToolCall, declaration: ToolDeclaration, cwd: str) -> dict[str, str]:
    """The standing grants that would answer this question next time
    (`adjutant.safety.standing`): this tool, and this file when the step writes one
    file named as itself (no link or ``..`` on the way, one name)."""
    from adjutant.safety.standing import FILE, TOOL, file_target, grantable
    from adjutant_hookspecs import RoleProblem, role_values

    try:
        values = role_values(declaration.args_schema, call.args)
    except RoleProblem:
        return {}
    if not grantable(declaration.safety.level, (v.role for v in values)):
        return {}  # a program, an address or a destructive tool: asked every time
    offers = {"tool": f"{TOOL}{call.tool}"}
    paths = [v.value for v in values if v.role == "path"]
    files = {file_target(p, cwd) for p in paths}
    if len(files) == 1 and None not in files:
        offers["file"] = f"{FILE}{files.pop()}"
    return offers


@hookimpl
def confirmation_details(call: ToolCall, declaration: ToolDeclaration,
                         preview: ExecutionResult, cwd: str) -> dict[str, Any] | None:
    from adjutant_hookspecs import is_write

    if not is_write(declaration):
        return None
    targets = _targets(call, declaration, cwd)
    current = [_current(t) for t in targets]
    existing = [c for c in current if c["state"] != "does not exist"]
    destructive = declaration.safety.level == "destructive"
    inside = all(Path(t).is_relative_to(cwd) for t in targets)
    verb = "deletes or overwrites" if destructive else "modifies"
    impact = []
    if created := len(current) - len(existing):
        impact.append(f"creates {created} file(s)")
    if existing:
        impact.append(f"{verb} {len(existing)} existing path(s)")
    if destructive or not inside:
        risk = "high"
    elif existing:
        risk = "medium"
    else:
        risk = "low"
    return {
        "gate": "write-gate",
        "targets": targets,
        "standing": _standing(call, declaration, cwd),
        "current": current,
        "proposed": dict(call.args),
        "impact": ", ".join(impact) or "effects not tied to a path argument: read the preview",
        "risk": risk,
    }
