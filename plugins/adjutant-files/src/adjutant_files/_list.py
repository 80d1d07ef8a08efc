"""``fs.list``: what is in a directory inside the cage, walked fd-relative.

Each directory is opened with ``O_DIRECTORY|O_NOFOLLOW`` relative to its parent and
read with ``scandir`` on that descriptor, so a link swapped in mid-walk is listed as a
link, never entered. Links are shown with their target, never followed; another file
system is not entered; ``.git`` and directories whose content is protected (``.ssh``,
Adjutant's data home, ...) are listed by name only; hidden entries are left out unless
asked. The listing is capped at `MAX_ENTRIES` lines, with a marker saying how many more.
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Iterator
from fnmatch import fnmatchcase
from typing import TYPE_CHECKING

from adjutant.toolkit import Located, locate, walk
from adjutant_hookspecs import ARG_ROLE, ToolCall, ToolContext, ToolDeclaration, ToolSafety

from ._common import BaseTool, get_bool, get_int, get_str

if TYPE_CHECKING:
    from adjutant.safety.protection import Shield

__all__ = ["FsList"]

MAX_ENTRIES = 1000
MAX_DEPTH = 5
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
#: Names listed but never entered: their content is git's or nobody's business.
_NOT_ENTERED = frozenset({".git"})


class FsList(BaseTool):
    declaration = ToolDeclaration(
        name="fs.list",
        version="0.1.0",
        summary="List the files[ in {path}][ matching {glob}]",
        description=(
            "List a directory inside the cage: each entry's kind, size and modification "
            "time, optionally several levels deep and filtered by a glob. Hidden files and "
            ".git are left out unless asked; links are shown, never followed. Requests "
            "like: 'what files are in this folder?', 'list the markdown files under docs'."),
        args_schema={
            "type": "object",
            "properties": {
                "path": {"type": "string", "minLength": 1, "maxLength": 4096, ARG_ROLE: "path",
                         "description": "The directory to list, relative to the working "
                                        "directory (default: the working directory)."},
                "depth": {"type": "integer", "minimum": 1, "maximum": MAX_DEPTH,
                          "description": "How many levels to descend (default 1: only the "
                                         "directory's own entries)."},
                "glob": {"type": "string", "minLength": 1, "maxLength": 100,
                         "description": "Only entries whose name matches this glob "
                                        "(e.g. `*.md`); directories are still descended."},
                "hidden": {"type": "boolean",
                           "description": "Include hidden entries (names starting with `.`)."},
            },
            "additionalProperties": False,
            "x-adjutant-requests": ["what files are in this folder?",
                                    "list the markdown files under docs"],
        },
        safety=ToolSafety(level="read"),
        examples=({}, {"path": "docs", "glob": "*.md"}, {"path": "src", "depth": 2}),
    )

    async def run(self, call: ToolCall, ctx: ToolContext, dry: bool) -> tuple[str, str]:
        from adjutant.safety.protection import Shield

        raw = get_str(call.args, "path", 4096, default=".")
        depth = get_int(call.args, "depth", 1, MAX_DEPTH, 1)
        pattern = get_str(call.args, "glob", 100, default="", allow_empty=True)
        hidden = get_bool(call.args, "hidden")
        located = locate(ctx.cwd, ctx.cages, raw)
        with walk(located, want="dir") as opened:
            if dry:
                what = [f"depth {depth}"] + ([f"names matching {pattern}"] if pattern else [])
                what += ["hidden entries too"] if hidden else []
                return "", f"list {located.shown}/ ({', '.join(what)})"
            shield = Shield.for_context(ctx, self.declaration)
            return _listing(opened.dir_fd, opened.root_dev, located, raw, depth, pattern,
                            hidden, shield), ""


def _listing(fd: int, root_dev: int, located: Located, raw: str, depth: int, pattern: str,
             hidden: bool, shield: Shield) -> str:
    """The whole listing: a header with the count, then at most `MAX_ENTRIES` lines."""
    # Entries are named as the caller would name them next (relative to the working
    # directory, as given), so a listing feeds the next call directly.
    prefix = "" if os.path.normpath(raw) == "." else raw.rstrip("/") + "/"
    where = os.path.join(located.root, *located.parts)
    lines: list[str] = []
    more = 0
    for line in _entries(fd, root_dev, where, prefix, depth, pattern, hidden, shield):
        if len(lines) < MAX_ENTRIES:
            lines.append(line)
        else:
            more += 1
    total = len(lines) + more
    header = f"{located.shown}/: {total} entr{'y' if total == 1 else 'ies'}"
    if more:
        lines.append(f"[... {more} more entries not shown (limit {MAX_ENTRIES}) ...]")
    return "\n".join([header, *lines]) + "\n"


def _entries(fd: int, root_dev: int, where: str, prefix: str, depth: int, pattern: str,
             hidden: bool, shield: Shield) -> Iterator[str]:
    """One line per entry of the open directory ``fd`` (at absolute ``where``, named
    ``prefix`` in the listing), depth first, sorted by name."""
    with os.scandir(fd) as scan:
        entries = sorted(scan, key=lambda e: e.name)
    for entry in entries:
        name = entry.name
        if name.startswith(".") and not hidden:
            continue
        try:
            st = entry.stat(follow_symlinks=False)
        except OSError:
            continue  # gone since it was listed
        rel = prefix + name
        is_dir = stat.S_ISDIR(st.st_mode)
        if not pattern or fnmatchcase(name, pattern):
            yield _line(fd, rel, name, st)
        if not is_dir or depth <= 1 or name in _NOT_ENTERED or st.st_dev != root_dev:
            continue
        if shield.read_refusal(os.path.join(where, name), st) is not None:
            continue  # a protected directory (~/.ssh): its name only, never its content
        try:
            child = os.open(name, _DIR_FLAGS, dir_fd=fd)
        except OSError:
            continue  # swapped for a link, or unreadable: listed above, not entered
        try:
            yield from _entries(child, root_dev, os.path.join(where, name), rel + "/",
                                depth - 1, pattern, hidden, shield)
        finally:
            os.close(child)


def _line(fd: int, rel: str, name: str, st: os.stat_result) -> str:
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(st.st_mtime))
    mode = st.st_mode
    if stat.S_ISLNK(mode):
        try:
            target = os.readlink(name, dir_fd=fd)
        except OSError:
            target = "?"
        return f"link  {'':>9}  {when}  {rel} -> {target}"
    if stat.S_ISDIR(mode):
        return f"dir   {'':>9}  {when}  {rel}/"
    kind = "file" if stat.S_ISREG(mode) else "other"
    return f"{kind:<5} {_size(st.st_size):>9}  {when}  {rel}"


def _size(size: int) -> str:
    if size < 1024:
        return f"{size} B"
    value = float(size)
    for unit in ("KiB", "MiB", "GiB"):
        value /= 1024
        if value < 1024 or unit == "GiB":
            break
    return f"{value:.1f} {unit}"
