"""``fs.read``, ``fs.write``, ``fs.append`` and ``fs.diff``: in-process, caged.

Besides the names protected below a cage (`adjutant.safety.protection.cage_refusal`, in
`locate`), each file is judged by the deny rules the guard applies
(`adjutant.safety.protection.Shield`: keys such as ``id_rsa``, the data home, git's own
files and ``.envrc`` for writes, hard links to protected files) here too, so they hold
with no policy plugin installed.
"""

from __future__ import annotations

import os
from typing import Any

from adjutant.toolkit import Located, locate, replace, walk
from adjutant.toolkit import unified_diff as _unified
from adjutant_hookspecs import ToolCall, ToolContext, ToolDeclaration, ToolSafety

from ._common import MAX_FILE_BYTES, BaseTool, Refused, as_text, get_int, get_str, path_prop

__all__ = ["FsAppend", "FsDiff", "FsRead", "FsWrite"]


def _schema(props: dict[str, Any], required: list[str], requests: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": props, "required": required,
            "additionalProperties": False, "x-adjutant-requests": requests}


def shielded(ctx: ToolContext, declaration: ToolDeclaration, located: Located, *,
             write: bool, st: os.stat_result | None = None) -> None:
    """Refuse ``located`` if core's deny rules protect it against this access."""
    from adjutant.safety.protection import Shield

    try:
        shield = Shield.for_context(ctx, declaration)
    except ValueError as exc:  # an unusable deny pattern: fail closed
        raise Refused("protection", f"the deny rules cannot be applied: {exc}") from None
    path = os.path.join(located.root, *located.parts)
    why = shield.write_refusal(path) if write else shield.read_refusal(path, st)
    if why is not None:
        raise Refused("protected", f"{why}, even inside the cage")


class FsRead(BaseTool):
    declaration = ToolDeclaration(
        name="fs.read",
        version="0.1.0",
        summary="Read {path}",
        description=(
            "Read a UTF-8 text file inside the cage (binary files are refused). Symbolic "
            "links are never followed; protected files (.env, .git/config, ...) are refused. "
            "Requests like: 'show me notes.txt', 'what is in src/app.py?'."),
        args_schema=_schema(
            {"path": path_prop("The file to read, relative to the working directory."),
             "max_bytes": {"type": "integer", "minimum": 1, "maximum": MAX_FILE_BYTES,
                           "description": "Read at most this many bytes from the start "
                                          "(default: the whole file, up to 10 MiB)."}},
            ["path"], ["show me notes.txt", "read the first kilobyte of src/app.py"]),
        safety=ToolSafety(level="read"),
        examples=({"path": "notes.txt"}, {"path": "src/app.py", "max_bytes": 1024}),
    )

    async def run(self, call: ToolCall, ctx: ToolContext, dry: bool) -> tuple[str, str]:
        located = locate(ctx.cwd, ctx.cages, get_str(call.args, "path", 4096))
        max_bytes = get_int(call.args, "max_bytes", 1, self.max_file_bytes, self.max_file_bytes)
        with walk(located) as opened:
            if opened.st is None:
                raise Refused("missing", f"{located.shown} does not exist")
            shielded(ctx, self.declaration, located, write=False, st=opened.st)
            if "max_bytes" not in call.args and opened.st.st_size > self.max_file_bytes:
                raise Refused("too-large", f"{located.shown} is {opened.st.st_size} bytes, over "
                              f"the {self.max_file_bytes}-byte limit; pass max_bytes")
            if dry:
                return "", f"read {located.shown}"
            if "max_bytes" not in call.args:
                return as_text(opened.read(self.max_file_bytes), located.shown), ""
            data = opened.read_prefix(max_bytes)
            if len(data) == max_bytes and opened.st.st_size > max_bytes:
                data = _trim_partial_utf8(data)
            return as_text(data, located.shown), ""


def _trim_partial_utf8(data: bytes) -> bytes:
    """A cut at ``max_bytes`` may split a UTF-8 character: drop its first bytes."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.reason == "unexpected end of data" and exc.start >= len(data) - 3:
            return data[:exc.start]
    return data


def _lines(text: str) -> str:
    n = text.count("\n") + (not text.endswith("\n") and bool(text))
    return f"{n} line" + ("" if n == 1 else "s")


def _summary(shown: str, old: str | None, content: str, *, append: bool) -> str:
    """A write in plain words: "Append 1 line to notes.md", "Create todo.md (3 lines)"."""
    if append:
        return f"Append {_lines(content)} to {shown}"
    if old is None:
        return f"Create {shown} ({_lines(content)})"
    if old == content:
        return f"Leave {shown} as it is (same content)"
    return f"Replace {shown} ({_lines(old)} now, {_lines(content)} after)"


class FsWrite(BaseTool):
    declaration = ToolDeclaration(
        name="fs.write",
        version="0.1.0",
        summary="Write {path}",
        description=(
            "Create or replace a UTF-8 text file inside the cage, atomically. The preview is "
            "the exact unified diff. The parent directory must exist; links are never "
            "followed; protected files are refused. Requests like: 'write a todo list to "
            "todo.md', 'replace notes.txt with this text'."),
        args_schema=_schema(
            {"path": path_prop("The file to create or replace, relative to the working "
                               "directory."),
             "content": {"type": "string", "maxLength": MAX_FILE_BYTES,
                         "description": "The complete new content of the file (UTF-8)."}},
            ["path", "content"], ["write a todo list to todo.md", "replace notes.txt"]),
        safety=ToolSafety(writes=True, level="write"),
        examples=({"path": "todo.md", "content": "- write tests\n- ship\n"},
                  {"path": "notes.txt", "content": "hello\nworld, again\n"}),
    )

    append = False

    async def run(self, call: ToolCall, ctx: ToolContext, dry: bool) -> tuple[str, str]:
        located = locate(ctx.cwd, ctx.cages, get_str(call.args, "path", 4096))
        content = get_str(call.args, "content", self.max_file_bytes, allow_empty=True)
        if len(content.encode("utf-8", "surrogatepass")) > self.max_file_bytes:
            raise Refused("too-large", f"the content is over {self.max_file_bytes} bytes")
        shielded(ctx, self.declaration, located, write=True)
        with walk(located, write=True) as opened:
            old = None
            if opened.st is not None:
                old = as_text(opened.read(self.max_file_bytes), located.shown)
            elif self.append:
                raise Refused("missing", f"{located.shown} does not exist; use fs.write to "
                              "create it")
            new = (old or "") + content if self.append else content
            data = new.encode("utf-8")
            if len(data) > self.max_file_bytes:
                raise Refused("too-large", f"{located.shown} would be over "
                              f"{self.max_file_bytes} bytes")
            if dry:
                summary = _summary(located.shown, old, content, append=self.append)
                if old is None:
                    return summary, f"create {located.shown} ({len(data)} bytes)\n" + _unified(
                        located.shown, None, new)
                return summary, (_unified(located.shown, old, new)
                                 or f"no change to {located.shown}")
            replace(opened, data)
        verb = "appended to" if self.append else "created" if old is None else "wrote"
        return f"{verb} {located.shown} ({len(data)} bytes)\n", ""


class FsAppend(FsWrite):
    declaration = ToolDeclaration(
        name="fs.append",
        version="0.1.0",
        summary="Append to {path}",
        description=(
            "Append UTF-8 text to the end of an existing text file inside the cage, "
            "atomically (the whole file is rewritten). The preview is the exact unified "
            "diff. Requests like: 'add a line to notes.txt', 'append this entry to the log'."),
        args_schema=_schema(
            {"path": path_prop("The existing file to append to, relative to the working "
                               "directory."),
             "content": {"type": "string", "maxLength": MAX_FILE_BYTES,
                         "description": "The text to add at the end (include the newline)."}},
            ["path", "content"], ["add 'buy milk' to notes.txt", "append a line to the log"]),
        safety=ToolSafety(writes=True, level="write"),
        examples=({"path": "notes.txt", "content": "buy milk\n"},
                  {"path": "src/app.py", "content": "print('done')\n"}),
    )

    append = True


class FsDiff(BaseTool):
    declaration = ToolDeclaration(
        name="fs.diff",
        version="0.1.0",
        summary="Compare {a} with {b}",
        description=(
            "Show the unified diff between two UTF-8 text files inside the cage. Requests "
            "like: 'how does notes.txt differ from notes.old?', 'compare a.py and b.py'."),
        args_schema=_schema(
            {"a": path_prop("The old file, relative to the working directory."),
             "b": path_prop("The new file, relative to the working directory.")},
            ["a", "b"], ["how does notes.txt differ from notes.old?", "diff a.py and b.py"]),
        safety=ToolSafety(level="read"),
        examples=({"a": "notes.old", "b": "notes.txt"}, {"a": "src/app.py", "b": "notes.txt"}),
    )

    async def run(self, call: ToolCall, ctx: ToolContext, dry: bool) -> tuple[str, str]:
        texts: list[str] = []
        shown: list[str] = []
        for key in ("a", "b"):
            located = locate(ctx.cwd, ctx.cages, get_str(call.args, key, 4096))
            with walk(located) as opened:
                if opened.st is None:
                    raise Refused("missing", f"{located.shown} does not exist")
                shielded(ctx, self.declaration, located, write=False, st=opened.st)
                if dry:
                    texts.append("")
                else:
                    texts.append(as_text(opened.read(self.max_file_bytes), located.shown))
            shown.append(located.shown)
        if dry:
            return "", f"diff {shown[0]} {shown[1]}"
        import difflib

        lines = difflib.unified_diff(texts[0].splitlines(keepends=True),
                                     texts[1].splitlines(keepends=True),
                                     f"a/{shown[0]}", f"b/{shown[1]}")
        return "".join(x if x.endswith("\n") else x + "\n\\ No newline at end of file\n"
                       for x in lines), ""
