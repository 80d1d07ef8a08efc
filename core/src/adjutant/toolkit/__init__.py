"""What every tool that touches files needs, so no author writes their own: a path
confined to the run's cages and opened without following a link, text read and
written atomically, the unified diff a write previews, and refusals named by rule.

The same code the shipped file tools (adjutant-files) run::

    from adjutant.toolkit import Refused, read_text, refusal, unified_diff, write_text

    async def dry_run(self, call, ctx):
        try:
            old = read_text(ctx, call.args["path"], missing_ok=True)
        except Refused as exc:
            return refusal(call, exc)
        new = (old or "") + call.args["text"]
        return ExecutionResult(tool=call.tool, args=dict(call.args), status="dry_run",
                               dry_run_diff=unified_diff(call.args["path"], old, new))

Every path is resolved relative to a directory descriptor of its cage root, one
component at a time, never following a link (``..`` refused); the file must be a
regular file on the cage's file system; protected names (``.env``, ``.ssh``...) are
refused even inside the cage; a write goes to a temporary file beside the target,
then replaces it, and is refused if the file changed since it was read or has other
hard links. Should a tool check ``ctx.cages`` itself? Yes: the guard judges the
arguments before the call, but only the tool sees what it finally opens.
"""

from __future__ import annotations

from adjutant_hookspecs import ExecutionResult, ToolCall, ToolContext

from ._cage import (
    PROTECTED_NAMES,
    Located,
    Opened,
    check_file,
    current,
    discard,
    locate,
    protected_reason,
    replace,
    same_file,
    stage,
    walk,
)
from ._refused import MAX_PATH_CHARS, Refused, unified_diff

__all__ = [
    "ANYTHING",
    "DEFAULT_LIMIT",
    "MAX_PATH_CHARS",
    "PROTECTED_NAMES",
    "Located",
    "Opened",
    "Refused",
    "check_file",
    "confine",
    "current",
    "discard",
    "locate",
    "protected_reason",
    "read_text",
    "refusal",
    "replace",
    "same_file",
    "stage",
    "unified_diff",
    "walk",
    "write_text",
]

#: Files larger than this are refused unless a caller passes its own ``limit``.
DEFAULT_LIMIT = 10 << 20


def confine(ctx: ToolContext, path: str) -> Located:
    """Where ``path`` (relative to ``ctx.cwd``, or absolute) lies inside ``ctx.cages``:
    refused (`Refused`) when it is outside every cage, climbs with ``..`` or names a
    protected file. Lexical only: `walk` (or `read_text`/`write_text`) opens it."""
    return locate(ctx.cwd, ctx.cages, path)


def read_text(ctx: ToolContext, path: str, *, limit: int = DEFAULT_LIMIT,
              missing_ok: bool = False) -> str | None:
    """The UTF-8 text of the file at ``path``, confined and opened without links;
    None when it does not exist and ``missing_ok``. Refused: outside the cages, a
    link on the way, not a regular file, over ``limit`` bytes, binary."""
    located = confine(ctx, path)
    with walk(located) as opened:
        if opened.st is None:
            if missing_ok:
                return None
            raise Refused("missing", f"{located.shown} does not exist")
        data = opened.read(limit)
    if b"\x00" in data[:8192]:
        raise Refused("binary", f"{located.shown} is a binary file, not text")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise Refused("binary", f"{located.shown} is not UTF-8 text") from None


#: `write_text`'s default ``expect``: whatever the file holds now.
ANYTHING = object()


def write_text(ctx: ToolContext, path: str, text: str, *, expect: object = ANYTHING) -> None:
    """Give the file at ``path`` the content ``text``, atomically, confined and never
    through a link or into a file with other hard links. ``expect``: what the file
    held when the dry-run previewed the change (a string, or None for "does not
    exist"); a file that no longer holds it is refused, so what runs is what was
    approved."""
    located = confine(ctx, path)
    with walk(located, write=True) as opened:
        if expect is not ANYTHING:
            now = None if opened.st is None else opened.read(DEFAULT_LIMIT).decode(
                "utf-8", errors="replace")
            if now != expect:
                raise Refused("changed", f"{located.shown} changed since it was previewed; "
                              "nothing was written")
        replace(opened, text.encode("utf-8"))


def refusal(call: ToolCall, exc: Refused) -> ExecutionResult:
    """``status="error"`` naming the rule: what a tool returns for a `Refused` call
    (the operator reports it as the tool's own refusal)."""
    return ExecutionResult(tool=call.tool, args=dict(call.args), status="error",
                           stderr=f"{call.tool}: refused: {exc}\n")
