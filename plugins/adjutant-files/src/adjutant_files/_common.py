"""Shared pieces of the file tools: refusals, argument checks, results, diffs.

A refusal is an `ExecutionResult(status="error")` whose stderr names the rule; the
`Refused` exception only carries it from deep inside a check up to the tool method.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from adjutant.toolkit import MAX_PATH_CHARS as MAX_PATH_CHARS
from adjutant.toolkit import Refused as Refused
from adjutant_hookspecs import ARG_ROLE, ExecutionResult, ToolCall, ToolContext, ToolDeclaration

#: Files larger than this are refused (each tool takes ``max_file_bytes=`` to change it).
MAX_FILE_BYTES = 10 << 20
#: How much of a file decides whether it is binary (a NUL byte in it).
BINARY_PROBE = 8192


def path_prop(description: str) -> dict[str, Any]:
    return {"type": "string", "minLength": 1, "maxLength": MAX_PATH_CHARS,
            "description": description, ARG_ROLE: "path"}


def check_args(declaration: ToolDeclaration, args: Mapping[str, Any]) -> None:
    """Unknown arguments and missing required ones are refused (the tool can be called
    without the kernel's schema check)."""
    props = declaration.args_schema["properties"]
    if unknown := sorted(k for k in args if k not in props):
        raise Refused("unknown-argument",
                      f"unknown argument(s) {', '.join(map(repr, unknown))}: not allowed")
    if missing := [k for k in declaration.args_schema.get("required", ()) if k not in args]:
        raise Refused("missing-argument", f"missing required argument(s) {', '.join(missing)}")


def get_str(args: Mapping[str, Any], key: str, max_chars: int, *, default: str | None = None,
            allow_empty: bool = False) -> str:
    value = args.get(key, default)
    if not isinstance(value, str):
        raise Refused("argument-type", f"`{key}` must be a string")
    if not value and not allow_empty:
        raise Refused("argument-empty", f"`{key}` must not be empty")
    if len(value) > max_chars:
        raise Refused("argument-size", f"`{key}` is longer than {max_chars} characters")
    if "\x00" in value:
        raise Refused("argument-nul", f"`{key}` contains a NUL character")
    return value


def get_int(args: Mapping[str, Any], key: str, low: int, high: int, default: int) -> int:
    value = args.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int):
        raise Refused("argument-type", f"`{key}` must be an integer")
    if not low <= value <= high:
        raise Refused("argument-range", f"`{key}` must be between {low} and {high}")
    return value


def get_bool(args: Mapping[str, Any], key: str) -> bool:
    value = args.get(key, False)
    if not isinstance(value, bool):
        raise Refused("argument-type", f"`{key}` must be true or false")
    return value


def get_paths(args: Mapping[str, Any], key: str, max_items: int,
              default: list[str] | None = None) -> list[str]:
    value = args.get(key, default)
    if not isinstance(value, list) or not value:
        raise Refused("argument-type", f"`{key}` must be a non-empty list of paths")
    if len(value) > max_items:
        raise Refused("argument-size", f"`{key}` lists more than {max_items} paths")
    return [get_str({key: item}, key, MAX_PATH_CHARS) for item in value]


def as_text(data: bytes, shown: str) -> str:
    """UTF-8 text, or refused as binary."""
    if b"\x00" in data[:BINARY_PROBE]:
        raise Refused("binary", f"{shown} is a binary file; the file tools handle UTF-8 text only")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise Refused("binary", f"{shown} is not UTF-8 text; the file tools handle UTF-8 text "
                      "only") from None


class BaseTool:
    """Turns `Refused` and `OSError` into error results; subclasses implement `run`."""

    declaration: ToolDeclaration

    def __init__(self, *, max_file_bytes: int = MAX_FILE_BYTES) -> None:
        self.max_file_bytes = max_file_bytes

    async def dry_run(self, call: ToolCall, ctx: ToolContext) -> ExecutionResult:
        return await self._guarded(call, ctx, dry=True)

    async def execute(self, call: ToolCall, ctx: ToolContext) -> ExecutionResult:
        return await self._guarded(call, ctx, dry=False)

    async def run(self, call: ToolCall, ctx: ToolContext, dry: bool) -> tuple[str, str]:
        """Return (stdout, preview): for a run, its stdout; for a dry-run, the call in
        plain words where only running it can say ("Append 1 line to notes.md", else
        ``""``) and the preview."""
        raise NotImplementedError

    async def _guarded(self, call: ToolCall, ctx: ToolContext, dry: bool) -> ExecutionResult:
        started = time.perf_counter()
        args = dict(call.args)
        try:
            check_args(self.declaration, call.args)
            stdout, preview = await self.run(call, ctx, dry)
        except Refused as exc:
            return ExecutionResult(tool=call.tool, args=args, status="error",
                                   stderr=f"{self.declaration.name}: refused: {exc}\n",
                                   duration_ms=_ms(started))
        except OSError as exc:
            return ExecutionResult(tool=call.tool, args=args, status="error",
                                   stderr=f"{self.declaration.name}: failed: "
                                          f"{exc.strerror or exc} [rule: os-error]\n",
                                   duration_ms=_ms(started))
        if dry:
            return ExecutionResult(tool=call.tool, args=args, status="dry_run",
                                   dry_run_diff=preview, duration_ms=_ms(started),
                                   summary=stdout.strip())
        return ExecutionResult(tool=call.tool, args=args, status="ok", stdout=stdout,
                               duration_ms=_ms(started))


def _ms(started: float) -> int:
    return int((time.perf_counter() - started) * 1000)
