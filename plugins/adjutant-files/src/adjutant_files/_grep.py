"""``search.grep``: ripgrep under the OS sandbox, with allow-listed options only.

The argv is built here, never taken from the model: fixed safe options
(``--no-config``, no colour, no following links, no hidden files), the allow-listed
ones mapped from typed arguments, the pattern after ``-e`` and the paths after
``--``. Every path is resolved through the cage walk first; nothing else is passed.
"""

from __future__ import annotations

import re

from adjutant_hookspecs import ARG_ROLE, ToolCall, ToolContext, ToolDeclaration, ToolSafety

from ._cage import locate, walk
from ._common import BaseTool, Refused, get_bool, get_int, get_paths, get_str

__all__ = ["SearchGrep"]

MAX_PATTERN_CHARS = 1000
MAX_OUTPUT = 256 << 10
TIMEOUT = 30.0
#: Simple globs only: names, `*`, `?`, `/`, `.`, `-`, `_`; an optional leading `!`.
_GLOB = re.compile(r"^!?[A-Za-z0-9_.*?][A-Za-z0-9_.*?/-]{0,99}$")
_FIXED = ("rg", "--no-config", "--line-number", "--with-filename", "--no-heading",
          "--color", "never", "--max-columns", "500", "--max-filesize", "10M")


class SearchGrep(BaseTool):
    declaration = ToolDeclaration(
        name="search.grep",
        version="0.1.0",
        description=(
            "Search text files inside the cage for a regular expression with ripgrep, run "
            "in the read-only OS sandbox. Hidden files, ignored files and links are "
            "skipped; output is capped. Requests like: 'where is TODO mentioned?', 'find "
            "calls to main() in src, ignoring case'."),
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
        from adjutant import sandbox

        argv, root = self.argv(call, ctx)
        if dry:
            return "", sandbox.preview(argv, cwd=root, timeout=TIMEOUT)
        if (why := sandbox.available()) is not None:
            raise Refused("sandbox-unavailable", f"search.grep runs only sandboxed: {why}")
        result = await sandbox.run(argv, cwd=root, timeout=TIMEOUT, max_output=MAX_OUTPUT)
        if result.timed_out:
            raise Refused("timeout", f"ripgrep was stopped after {TIMEOUT:g}s")
        if result.returncode not in (0, 1):  # 1: no match
            raise Refused("rg-error", f"ripgrep failed ({result.returncode}): "
                          f"{result.stderr.strip()[:2000]}")
        return result.stdout, ""
