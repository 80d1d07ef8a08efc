"""``wordcount.count``: lines, words and bytes of one file, like ``wc``.

An out-of-tree Adjutant tool plugin. The ``adjutant`` entry point names this
module; the kernel calls `register_tools` when it loads it. Importing it stays
cheap: anyio is imported on the first call, not here.
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from adjutant_hookspecs import (
    ExecutionResult,
    Tool,
    ToolCall,
    ToolContext,
    ToolDeclaration,
    ToolSafety,
    hookimpl,
)

__all__ = ["MAX_BYTES", "WordCount", "register_tools"]

#: Larger files are refused: the whole file is read into memory to count it.
MAX_BYTES = 10 * 1024 * 1024

# Map ASCII whitespace (what `wc` splits on) to b" " and every other byte to b"x";
# words are then the " x" boundaries, counted in C without a list of words.
_WORDS = bytes(0x20 if b in b" \t\n\v\f\r" else 0x78 for b in range(256))


class _Refused(Exception):
    """The call cannot run; the message is the result's stderr."""


class WordCount:
    """The ``wordcount.count`` tool (read-only, confined to the context's cwd)."""

    declaration = ToolDeclaration(
        name="wordcount.count",
        version="0.1.0",
        summary="Count the lines, words and bytes of {path}",
        description="Count the lines, words and bytes of a file in the working directory, "
        "like `wc`.",
        args_schema={
            "type": "object",
            "properties": {
                "path": {
                    "type": "string",
                    "minLength": 1,
                    "description": "File path relative to the working directory.",
                    "x-adjutant-role": "path",  # so the guard cages it
                },
            },
            "required": ["path"],
            "additionalProperties": False,
        },
        safety=ToolSafety(writes=False, level="read", network=False),
        supports_dry_run=True,
        examples=({"path": "notes.txt"}, {"path": "src/main.py"}),
    )

    async def dry_run(self, call: ToolCall, ctx: ToolContext) -> ExecutionResult:
        started = time.monotonic_ns()
        try:
            target, st = _locate(call.args, ctx)
        except _Refused as exc:
            return _result(call, started, status="error", stderr=str(exc))
        # Approvals bind to this text: it names exactly what execute will read.
        preview = f"read {target} ({st.st_size} bytes)"
        return _result(call, started, status="dry_run", dry_run_diff=preview)

    async def execute(self, call: ToolCall, ctx: ToolContext) -> ExecutionResult:
        from anyio import to_thread  # first use only: keeps plugin loading cheap

        started = time.monotonic_ns()
        try:
            target, st = _locate(call.args, ctx)
            data = await to_thread.run_sync(_read, target, st)
        except _Refused as exc:
            return _result(call, started, status="error", stderr=str(exc))
        lines, words, size = _count(data)
        width = len(str(size))  # GNU wc pads every column to the width of the byte count
        out = f"{lines:>{width}} {words:>{width}} {size:>{width}} {call.args['path']}\n"
        return _result(call, started, status="ok", stdout=out)


def _locate(args: dict[str, Any], ctx: ToolContext) -> tuple[Path, os.stat_result]:
    """The resolved file for ``args["path"]``, refused unless it is a regular file
    under ``ctx.cwd`` (after following symlinks) and at most `MAX_BYTES`."""
    path = args.get("path")
    if not isinstance(path, str) or not path or "\0" in path:
        raise _Refused("wordcount.count: `path` must be a non-empty string")
    if os.path.isabs(path):
        raise _Refused(
            f"wordcount.count: {path!r} is absolute; give a path relative to the working directory"
        )
    root = Path(os.path.realpath(ctx.cwd))
    target = Path(os.path.realpath(root / path))  # resolves `..` and every symlink
    # Checked before stat so that nothing about files outside the cwd leaks out.
    if not target.is_relative_to(root):
        raise _Refused(
            f"wordcount.count: {path!r} resolves outside the working "
            f"directory {str(root)!r}; refused"
        )
    try:
        st = target.stat()
    except FileNotFoundError:
        raise _Refused(f"wordcount.count: no such file: {path!r}") from None
    except OSError as exc:
        raise _Refused(f"wordcount.count: cannot read {path!r}: {exc.strerror}") from None
    if not stat.S_ISREG(st.st_mode):
        raise _Refused(f"wordcount.count: {path!r} is not a regular file")
    if st.st_size > MAX_BYTES:
        raise _Refused(
            f"wordcount.count: {path!r} is {st.st_size} bytes; the limit is {MAX_BYTES} (10 MiB)"
        )
    return target, st


def _read(target: Path, checked: os.stat_result) -> bytes:
    """Read the file that `_locate` checked, refusing if it was swapped or grew since.

    O_NOFOLLOW and the inode comparison close the window between the check and the
    open; O_NONBLOCK keeps a FIFO swapped in from hanging the worker thread.
    """
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(target, flags | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise _Refused(f"wordcount.count: cannot open {str(target)!r}: {exc.strerror}") from None
    with open(fd, "rb") as file:
        st = os.fstat(fd)
        if (st.st_dev, st.st_ino) != (checked.st_dev, checked.st_ino):
            raise _Refused(f"wordcount.count: {str(target)!r} changed while being checked")
        data = file.read(MAX_BYTES + 1)
    if len(data) > MAX_BYTES:
        raise _Refused(f"wordcount.count: {str(target)!r} grew past {MAX_BYTES} bytes")
    return data


def _count(data: bytes) -> tuple[int, int, int]:
    """``wc``'s three counts: newlines, whitespace-separated words, bytes."""
    marks = data.translate(_WORDS)
    return data.count(b"\n"), marks.count(b" x") + marks.startswith(b"x"), len(data)


def _result(call: ToolCall, started: int, **fields: Any) -> ExecutionResult:
    elapsed = (time.monotonic_ns() - started) // 1_000_000
    return ExecutionResult(tool=call.tool, args=dict(call.args), duration_ms=elapsed, **fields)


@hookimpl
def register_tools(register: Callable[[Tool], None]) -> None:
    register(WordCount())
