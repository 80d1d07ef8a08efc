"""``editor.patch``: apply a unified diff inside the cage, exactly or not at all.

The patch is parsed strictly (line counts must match their hunk headers, unknown
header lines are refused), every hunk must match the file exactly at its stated line
(no offset, no fuzz), every target is resolved through the cage walk, and every new
content is staged before any file is replaced. A refusal changes nothing; a failure
while replacing restores what was already replaced.

Before any of that, every path the patch names anywhere — ``---`` and ``+++``,
``diff --git``, ``rename``/``copy from``/``to``, ``Binary files`` — is judged like a
direct write (`named_paths`): inside the cage, and refused by the deny rules
(`adjutant.safety.protection.Shield.write_refusal`: ``.git/commondir``, ``.envrc``, a key
file...), in the dry-run and in the execution alike. Mode lines, deletions and
renames name no other path and are refused further on.
"""

from __future__ import annotations

import contextlib
import os
import re
from dataclasses import dataclass, field

from adjutant.toolkit import Opened, current, discard, locate, same_file, stage, walk
from adjutant.toolkit import unified_diff as unified
from adjutant_hookspecs import ToolCall, ToolContext, ToolDeclaration, ToolSafety

from ._common import MAX_FILE_BYTES, BaseTool, Refused, as_text, get_str

__all__ = ["EditorPatch", "FilePatch", "named_paths", "parse"]

MAX_PATCH_CHARS = 1 << 20
MAX_FILES = 100
_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_IGNORED_HEADERS = ("diff --git ", "index ")
_REFUSED_HEADERS = {"deleted file mode": "deletes a file", "rename ": "renames a file",
                    "copy ": "copies a file", "old mode": "changes a file mode",
                    "new mode": "changes a file mode", "Binary files": "is binary",
                    "GIT binary patch": "is binary", "similarity index": "renames a file"}
_NO_NEWLINE = "\\ No newline at end of file"


@dataclass
class Hunk:
    old_start: int
    old: list[str] = field(default_factory=list)
    new: list[str] = field(default_factory=list)


@dataclass
class FilePatch:
    path: str
    creates: bool
    hunks: list[Hunk] = field(default_factory=list)


def _malformed(lineno: int, why: str) -> Refused:
    return Refused("malformed-patch", f"line {lineno}: {why}")


def _name(raw: str, prefix: str) -> str | None:
    name = raw.split("\t", 1)[0].rstrip("\r")
    if name == "/dev/null":
        return None
    return name[len(prefix):] if name.startswith(prefix) else name


def _git_pair(rest: str) -> list[str]:
    """The paths of ``diff --git a/X b/Y``: X and Y when they can be told apart (same
    length, or a single `` b/``), else every reading (all are checked: fail closed)."""
    n = (len(rest) - 5) // 2
    if rest.startswith("a/") and rest[2 + n:5 + n] == " b/" and len(rest) == 5 + 2 * n:
        return [rest[2:2 + n], rest[5 + n:]]
    out: list[str] = []
    start = 0
    while (cut := rest.find(" b/", start)) != -1:
        out += [rest[:cut].removeprefix("a/"), rest[cut + 3:]]
        start = cut + 1
    return out or [rest]


def named_paths(text: str) -> list[tuple[int, str]]:
    """(line number, path) for every path the patch's headers name, whatever the
    header (the ones `parse` refuses too): nothing the patch names escapes the check."""
    found: list[tuple[int, str]] = []
    for number, line in enumerate(text.splitlines(), 1):
        names: list[str | None] = []
        if line.startswith(("--- ", "+++ ")):
            names.append(_name(line[4:], "a/" if line[0] == "-" else "b/"))
        elif line.startswith("diff --git "):
            names += _git_pair(line[len("diff --git "):].rstrip("\r"))
        elif line.startswith(("rename from ", "rename to ", "copy from ", "copy to ")):
            names.append(line.split(" ", 2)[2].rstrip("\r"))
        elif line.startswith("Binary files ") and line.endswith(" differ"):
            old, _, new = line[len("Binary files "):-len(" differ")].partition(" and ")
            names += [_name(old, "a/"), _name(new, "b/")]
        found += [(number, name) for name in names if name]
    return found


def parse(text: str) -> list[FilePatch]:
    """The files and hunks of a unified diff; `Refused` naming the line if malformed."""
    lines = text.splitlines()
    files: list[FilePatch] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith(_IGNORED_HEADERS) or line.startswith("new file mode 100644"):
            i += 1
            continue
        for header, what in _REFUSED_HEADERS.items():
            if line.startswith(header):
                raise Refused("unsupported-patch", f"line {i + 1}: the patch {what}")
        if not line.startswith("--- "):
            raise _malformed(i + 1, f"expected a `--- ` file header, found {line[:60]!r}")
        if i + 1 >= len(lines) or not lines[i + 1].startswith("+++ "):
            raise _malformed(i + 2, "a `--- ` header must be followed by `+++ `")
        old, new = _name(line[4:], "a/"), _name(lines[i + 1][4:], "b/")
        if new is None:
            raise Refused("unsupported-patch", f"line {i + 2}: the patch deletes {old!r}")
        if old is not None and old != new:
            raise Refused("unsupported-patch", f"line {i + 1}: renames are not supported")
        patch = FilePatch(new, creates=old is None)
        i += 2
        while i < len(lines) and lines[i].startswith("@@"):
            i = _hunk(lines, i, patch)
        if not patch.hunks:
            raise _malformed(i + 1, f"no hunk for {new!r}")
        files.append(patch)
    if not files:
        raise _malformed(1, "no file in the patch")
    if len(files) > MAX_FILES:
        raise Refused("argument-size", f"the patch changes more than {MAX_FILES} files")
    if len({f.path for f in files}) != len(files):
        raise Refused("malformed-patch", "the patch changes the same file twice")
    return files


def _hunk(lines: list[str], i: int, patch: FilePatch) -> int:
    match = _HUNK.match(lines[i])
    if match is None:
        raise _malformed(i + 1, "bad hunk header")
    old_start = int(match[1])
    old_len = 1 if match[2] is None else int(match[2])
    new_len = 1 if match[4] is None else int(match[4])
    if patch.creates and (old_start, old_len) != (0, 0):
        raise _malformed(i + 1, "a new file's hunk must start at -0,0")
    if old_len and not old_start:
        raise _malformed(i + 1, "bad hunk position")
    hunk = Hunk(old_start)
    start, i = i + 1, i + 1
    while len(hunk.old) < old_len or len(hunk.new) < new_len:
        if i >= len(lines):
            raise _malformed(i, f"the hunk at line {start - 1} is shorter than its header says")
        line, tag = lines[i], lines[i][:1]
        targets = {" ": (hunk.old, hunk.new), "-": (hunk.old,), "+": (hunk.new,)}.get(tag)
        if targets is None:
            raise _malformed(i + 1, f"unexpected line in a hunk: {line[:60]!r}")
        for target in targets:
            target.append(line[1:] + "\n")
        i += 1
        if i < len(lines) and lines[i] == _NO_NEWLINE:
            for target in targets:
                target[-1] = target[-1][:-1]
            i += 1
    if len(hunk.old) != old_len or len(hunk.new) != new_len:
        raise _malformed(start - 1, "the hunk's line counts do not match its header")
    if patch.hunks and old_start <= _end(patch.hunks[-1]):
        raise _malformed(start - 1, "hunks overlap or are out of order")
    patch.hunks.append(hunk)
    return i


def _end(hunk: Hunk) -> int:
    return hunk.old_start + max(len(hunk.old), 1) - 1


def apply(text: str, patch: FilePatch) -> str:
    """The new text; `Refused` unless every hunk matches exactly where it says."""
    old = text.splitlines(keepends=True)
    out: list[str] = []
    pos = 0
    for hunk in patch.hunks:
        start = hunk.old_start - 1 if hunk.old else hunk.old_start
        if start < pos or old[start:start + len(hunk.old)] != hunk.old:
            raise Refused("fuzzy-patch", f"{patch.path}: the hunk at line {hunk.old_start} "
                          "does not match the file exactly (no offset or fuzz is applied)")
        out += old[pos:start] + hunk.new
        pos = start + len(hunk.old)
    out += old[pos:]
    return "".join(out)


class EditorPatch(BaseTool):
    declaration = ToolDeclaration(
        name="editor.patch",
        version="0.1.0",
        summary="Apply a patch",
        description=(
            "Apply a unified diff to UTF-8 text files inside the cage, atomically: every "
            "hunk must match exactly (no fuzz), and a malformed, inexact or escaping patch "
            "changes nothing. May create files (from /dev/null), never deletes or renames. "
            "The preview is the exact resulting diff per file. Requests like: 'rename the "
            "function in src/app.py', 'apply this patch'."),
        args_schema={
            "type": "object",
            "properties": {"patch": {
                "type": "string", "minLength": 1, "maxLength": MAX_PATCH_CHARS,
                "description": "A unified diff (`--- a/PATH`, `+++ b/PATH`, `@@` hunks); "
                               "paths are relative to the working directory."}},
            "required": ["patch"],
            "additionalProperties": False,
            "x-adjutant-requests": ["change 'hello' to 'hi' in notes.txt",
                                    "apply this diff to src/app.py"],
        },
        safety=ToolSafety(writes=True, level="write"),
        examples=(
            {"patch": "--- a/notes.txt\n+++ b/notes.txt\n@@ -1,2 +1,2 @@\n-hello\n+hi\n world\n"},
            {"patch": "--- /dev/null\n+++ b/CHANGES.md\n@@ -0,0 +1 @@\n+- first release\n"},
        ),
    )

    def __init__(self, *, max_file_bytes: int = MAX_FILE_BYTES) -> None:
        super().__init__(max_file_bytes=max_file_bytes)

    async def run(self, call: ToolCall, ctx: ToolContext, dry: bool) -> tuple[str, str]:
        text = get_str(call.args, "patch", MAX_PATCH_CHARS)
        self.check_named(text, ctx)
        patches = parse(text)
        with contextlib.ExitStack() as stack:
            work: list[tuple[Opened, str | None, str]] = []
            for patch in patches:
                located = locate(ctx.cwd, ctx.cages, patch.path)
                opened = stack.enter_context(walk(located, write=True))
                if patch.creates and opened.st is not None:
                    raise Refused("exists", f"the patch creates {located.shown}, which exists")
                if not patch.creates and opened.st is None:
                    raise Refused("missing", f"{located.shown} does not exist")
                old = None if opened.st is None else as_text(
                    opened.read(self.max_file_bytes), located.shown)
                new = apply(old or "", patch)
                if len(new.encode()) > self.max_file_bytes:
                    raise Refused("too-large", f"{located.shown} would be over "
                                  f"{self.max_file_bytes} bytes")
                work.append((opened, old, new))
            if dry:
                names = [o.located.shown for o, _, _ in work]
                summary = (f"Patch {names[0]}" if len(names) == 1 else
                           f"Patch {len(names)} files: {', '.join(names[:3])}"
                           + (", …" if len(names) > 3 else ""))
                return summary, "".join(unified(o.located.shown, old, new)
                                        for o, old, new in work)
            _commit(work)
        return "".join(f"patched {o.located.shown}\n" for o, _, _ in work), ""


    def check_named(self, text: str, ctx: ToolContext) -> None:
        """Every path the patch names, judged like a direct write: in the cage, and not
        protected by the deny rules. `Refused` naming the line, the path and the rule."""
        from adjutant.safety.protection import Shield

        try:
            shield = Shield.for_context(ctx, self.declaration)
        except ValueError as exc:  # an unusable deny pattern: fail closed
            raise Refused("protection", f"the deny rules cannot be applied: {exc}") from None
        for number, name in named_paths(text):
            try:
                located = locate(ctx.cwd, ctx.cages, name, check_protected=False)
                target = os.path.join(located.root, *located.parts)
                if (why := shield.write_refusal(target)) is not None:
                    raise Refused("protected", f"{why}; the patch may not write it, even "
                                  "inside the cage")
                locate(ctx.cwd, ctx.cages, name)  # the file tools' own protected names
            except Refused as refused:
                raise Refused(refused.rule, f"line {number} names {name!r}: "
                              f"{refused.message}") from None


def _commit(work: list[tuple[Opened, str | None, str]]) -> None:
    staged = [stage(opened, new.encode()) for opened, _, new in work]
    done: list[int] = []
    try:
        for opened, _, _ in work:
            if not same_file(current(opened), opened.st):
                raise Refused("changed", f"{opened.located.shown} changed meanwhile; nothing "
                              "was written")
        for n, ((opened, _, _), tmp) in enumerate(zip(work, staged, strict=True)):
            os.replace(tmp, opened.name, src_dir_fd=opened.dir_fd, dst_dir_fd=opened.dir_fd)
            done.append(n)
    except BaseException:
        for n in reversed(done):  # put back what was already replaced
            opened, old, _ = work[n]
            if old is None:
                discard(opened.dir_fd, opened.name)
            else:
                with contextlib.suppress(OSError):
                    tmp = stage(opened, old.encode())
                    os.replace(tmp, opened.name, src_dir_fd=opened.dir_fd,
                               dst_dir_fd=opened.dir_fd)
        for (opened, _, _), tmp in zip(work, staged, strict=True):
            discard(opened.dir_fd, tmp)
        raise
