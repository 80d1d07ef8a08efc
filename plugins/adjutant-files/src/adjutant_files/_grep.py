"""``search.grep``: ripgrep under the OS sandbox, with allow-listed options only.

The argv is built here, never taken from the model: fixed safe options
(``--no-config``, no colour, no following links, no hidden files), the allow-listed
ones mapped from typed arguments, the pattern after ``-e`` and the paths after
``--``. Every path is resolved through the cage walk first; nothing else is passed.

ripgrep walks directories itself, and a glob (``*``, ``.env``) or an ignore file
(``.ignore`` with ``!.env``) can bring back files it would otherwise skip, hidden
ones included. So its hits are never passed on as they come: rg reports them as
JSON, and every hit whose file the deny rules refuse (`adjutant.safety.protection.Shield`:
protected names and patterns, hard links to protected files) is withheld; the result
says how many files were withheld and why, never what they hold. The rules' fixed
file names are also passed to rg as excludes, so it mostly never opens them.
"""

from __future__ import annotations

import base64
import json
import os
import re
from collections.abc import Iterator
from typing import Any

from adjutant.toolkit import locate, walk
from adjutant_hookspecs import ARG_ROLE, ToolCall, ToolContext, ToolDeclaration, ToolSafety

from ._common import BaseTool, Refused, get_bool, get_int, get_paths, get_str

__all__ = ["SearchGrep"]

MAX_PATTERN_CHARS = 1000
MAX_OUTPUT = 256 << 10
#: rg's JSON is larger than the lines it carries: read this much of it at most.
MAX_JSON = 4 << 20
#: Withheld files named in the result, at most.
MAX_WITHHELD_SHOWN = 20
TIMEOUT = 30.0
#: Simple globs only: names, `*`, `?`, `/`, `.`, `-`, `_`; an optional leading `!`.
_GLOB = re.compile(r"^!?[A-Za-z0-9_.*?][A-Za-z0-9_.*?/-]{0,99}$")
_FIXED = ("rg", "--no-config", "--json", "--line-number", "--with-filename", "--no-heading",
          "--color", "never", "--max-columns", "500", "--max-filesize", "10M")
TRUNCATED = "[... output truncated by Adjutant at {limit} bytes ...]\n"


class SearchGrep(BaseTool):
    declaration = ToolDeclaration(
        name="search.grep",
        version="0.1.0",
        summary="Search for “{pattern}”[ in {paths}][ ({glob} files)]",
        description=(
            "Search text files inside the cage for a regular expression with ripgrep, run "
            "in the read-only OS sandbox. Hidden files, ignored files and links are "
            "skipped; matches in protected files (.env, keys, hard links to them) are "
            "withheld and only counted; output is capped. Requests like: 'where is TODO "
            "mentioned?', 'find calls to main() in src, ignoring case'."),
        args_schema={
            "type": "object",
            "properties": {
                "pattern": {"type": "string", "minLength": 1, "maxLength": MAX_PATTERN_CHARS,
                            "description": "The regular expression (a literal string with "
                                           "fixed_strings) to search for."},
                "paths": {"type": "array", "minItems": 1, "maxItems": 100,
                          "items": {"type": "string", "minLength": 1, "maxLength": 4096},
                          ARG_ROLE: "paths",
                          "description": "Files or directories to search, relative to the "
                                         "working directory (default: the working directory)."},
                "ignore_case": {"type": "boolean", "description": "Match case-insensitively."},
                "fixed_strings": {"type": "boolean",
                                  "description": "Treat the pattern as a literal string."},
                "max_count": {"type": "integer", "minimum": 1, "maximum": 10000,
                              "description": "Stop after this many matching lines per file."},
                "glob": {"type": "string", "pattern": _GLOB.pattern, "maxLength": 101,
                         "description": "Only search files whose path matches this simple "
                                        "glob (e.g. `*.py`); a leading `!` excludes."},
            },
            "required": ["pattern"],
            "additionalProperties": False,
            "x-adjutant-requests": ["where is TODO mentioned?",
                                    "find 'def main' in the Python files of src"],
        },
        safety=ToolSafety(level="read"),
        examples=({"pattern": "TODO"},
                  {"pattern": "def main", "paths": ["src"], "glob": "*.py", "ignore_case": True,
                   "max_count": 5}),
    )

    def argv(self, call: ToolCall, ctx: ToolContext) -> tuple[list[str], str]:
        """The exact rg command line and the cage root it runs in."""
        args = call.args
        pattern = get_str(args, "pattern", MAX_PATTERN_CHARS)
        if "\n" in pattern:
            raise Refused("argument-value", "the pattern must be a single line")
        raw_paths = get_paths(args, "paths", 100, default=["."])
        argv = list(_FIXED)
        if get_bool(args, "ignore_case"):
            argv.append("--ignore-case")
        if get_bool(args, "fixed_strings"):
            argv.append("--fixed-strings")
        if "max_count" in args:
            argv += ["--max-count", str(get_int(args, "max_count", 1, 10000, 1))]
        if "glob" in args:
            glob = get_str(args, "glob", 101)
            if not _GLOB.match(glob):
                raise Refused("glob", f"glob {glob!r} is not a simple pattern "
                              "(letters, digits, `*?./-_`, optional leading `!`)")
            argv += ["--glob", glob]
        # After the call's glob, so they win over it (rg: later globs take precedence;
        # --iglob after every --glob). Speed and a smaller window only: the shield's
        # filter of the hits in `run` is the guarantee.
        for name in secret_names():
            argv += ["--iglob", f"!{name}"]
        roots: set[str] = set()
        rel: list[str] = []
        for raw in raw_paths:
            if raw.startswith("-"):
                raise Refused("option-injection", f"path {raw!r} starts with `-`")
            located = locate(ctx.cwd, ctx.cages, raw)
            roots.add(located.root)
            with walk(located, want="any" if located.parts else "dir"):
                pass  # exists, inside the cage, no link on the way
            rel.append(located.shown)
        if len(roots) != 1:
            raise Refused("cage", "all paths must lie in the same cage")
        argv += ["-e", pattern, "--", *rel]
        return argv, roots.pop()

    async def run(self, call: ToolCall, ctx: ToolContext, dry: bool) -> tuple[str, str]:
        from adjutant.safety import sandbox
        from adjutant.safety.protection import Shield

        argv, root = self.argv(call, ctx)
        if dry:
            return "", sandbox.preview(argv, cwd=root, timeout=TIMEOUT)
        if (why := sandbox.available()) is not None:
            raise Refused("sandbox-unavailable", f"search.grep runs only sandboxed: {why}")
        try:
            shield = Shield.for_context(ctx, self.declaration)
        except ValueError as exc:  # an unusable deny pattern: fail closed
            raise Refused("protection", f"the deny rules cannot be applied: {exc}") from None
        # The shield also hides the secrets at fixed places inside the sandbox (a second
        # layer: the filter below is what covers hard links, copies and .env files).
        result = await sandbox.run(argv, cwd=root, timeout=TIMEOUT, max_output=MAX_JSON,
                                   shield=shield)
        if result.timed_out:
            raise Refused("timeout", f"ripgrep was stopped after {TIMEOUT:g}s")
        if result.returncode not in (0, 1):  # 1: no match
            raise Refused("rg-error", f"ripgrep failed ({result.returncode}): "
                          f"{result.stderr.strip()[:2000]}")
        return render(result.stdout, root, shield, truncated=result.truncated), ""


def secret_names() -> tuple[str, ...]:
    """The secret rules' fixed file names that hold at any depth (``.env``, ``id_rsa``)."""
    from adjutant.safety.protection import DEFAULT_RULES

    names = []
    for spec in DEFAULT_RULES:
        for pattern in spec.patterns:
            name = pattern.removeprefix("**/")
            if spec.reads and pattern.startswith("**/") and not set(name) & set("*?[/\\"):
                names.append(name)
    return tuple(dict.fromkeys(names))


def _text(field: Any) -> tuple[str, str] | None:
    """rg's ``{"text": ...}`` or ``{"bytes": base64}``: (file-system name, shown text)."""
    if not isinstance(field, dict):
        return None
    if isinstance(text := field.get("text"), str):
        return text, text
    if isinstance(raw := field.get("bytes"), str):
        try:
            data = base64.b64decode(raw, validate=True)
        except ValueError:
            return None
        return os.fsdecode(data), data.decode("utf-8", errors="replace")
    return None


def _matches(stdout: str) -> Iterator[tuple[str, str, str]]:
    """(path on disk, path shown, ``line:text``) for each match line rg reported."""
    for line in stdout.splitlines():
        try:
            message = json.loads(line)
        except ValueError:
            continue  # the marker of a capped output, or a line cut by it
        if not isinstance(message, dict) or message.get("type") != "match":
            continue
        data = message.get("data")
        if not isinstance(data, dict):
            continue
        path, lines = _text(data.get("path")), _text(data.get("lines"))
        if path is None or lines is None:
            continue
        number = data.get("line_number")
        text = lines[1].replace("\x00", "")
        yield path[0], path[1], f"{number}:{text}" + ("" if text.endswith("\n") else "\n")


def render(stdout: str, root: str, shield: Any, *, truncated: bool = False) -> str:
    """``path:line:text`` for every hit whose file the shield lets through, then a note
    naming the files withheld (and why), never their content."""
    from adjutant.safety import sandbox

    verdicts: dict[str, str | None] = {}
    out: list[str] = []
    size = 0
    for path, shown, rest in _matches(stdout):
        if path not in verdicts:
            verdicts[path] = shield.read_refusal(os.path.normpath(os.path.join(root, path)))
        if verdicts[path] is not None:
            continue
        line = f"{shown}:{rest}"
        size += len(line.encode())
        if size > MAX_OUTPUT:
            truncated = True
            break
        out.append(line)
    text, _ = sandbox.clean_text("".join(out).encode())
    if text and not text.endswith("\n"):
        text += "\n"
    if truncated:
        text += TRUNCATED.format(limit=MAX_OUTPUT)
    withheld = [(p, why) for p, why in verdicts.items() if why is not None]
    if withheld:
        text += (f"[search.grep withheld the matches of {len(withheld)} file(s) the deny "
                 "rules protect; their content is not shown:]\n")
        for _, why in withheld[:MAX_WITHHELD_SHOWN]:
            text += f"  {sandbox.clean_text(why.encode(errors='surrogateescape'))[0]}\n"
        if len(withheld) > MAX_WITHHELD_SHOWN:
            text += f"  ... and {len(withheld) - MAX_WITHHELD_SHOWN} more\n"
    return text
