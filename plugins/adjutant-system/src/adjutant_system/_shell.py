"""``shell.exec``: run one argv (no shell, no pipes) under the bubblewrap sandbox."""

from __future__ import annotations

import os
import shutil
from typing import Any

from adjutant_hookspecs import ARG_ROLE, ExecutionResult, ToolCall, ToolContext, ToolDeclaration
from adjutant_hookspecs import ToolSafety as Safety

from ._common import ESCALATION, object_schema, refuse

__all__ = ["ShellExec"]

MAX_ARGS = 4096
MAX_ARGV_BYTES = 128 * 1024
MAX_TIMEOUT = 600.0
DEFAULT_TIMEOUT = 30.0

_SCHEMA = object_schema(
    {
        "argv": {
            "type": "array", ARG_ROLE: "argv", "minItems": 1, "maxItems": MAX_ARGS,
            "items": {"type": "string", "maxLength": 32768},
            "description": "The program and its arguments, one string each (no shell: "
                           "pipes, redirections and globs are not interpreted).",
        },
        "timeout": {
            "type": "number", "exclusiveMinimum": 0, "maximum": MAX_TIMEOUT,
            "description": f"Seconds before the whole sandbox is killed (default "
                           f"{DEFAULT_TIMEOUT:g}, at most {MAX_TIMEOUT:g}).",
        },
    },
    ["argv"],
    ["run the tests with pytest", "what does `ls -la` show here?",
     "count the lines of README.md with wc"],
)


class ShellExec:
    """Run a command in the sandbox: read-only root and cwd, only the cages writable,
    no network, clean environment, time, output and process limits."""

    declaration = ToolDeclaration(
        name="shell.exec",
        version="0.1.0",
        summary="Run `{argv}`",
        description=(
            "Run one program with its arguments (an argv array, never a shell string) "
            "in an OS sandbox: the file system is read-only except the writable cages, "
            "there is no network, the environment is clean, output is capped and the "
            "command is killed at its timeout with every process it started. stderr "
            "ends with the exit status."
        ),
        args_schema=_SCHEMA,
        safety=Safety(writes=True, level="write", network=False),
        examples=({"argv": ["ls", "-la"]}, {"argv": ["echo", "hello"], "timeout": 5},
                  {"argv": ["wc", "-l", "README.md"]}),
    )

    def __init__(self, *, max_output: int = 256 * 1024, max_processes: int = 64) -> None:
        self.max_output = max_output
        self.max_processes = max_processes

    def _check(self, call: ToolCall) -> tuple[list[str], float] | ExecutionResult:
        argv: Any = call.args.get("argv")
        unknown = sorted(set(call.args) - {"argv", "timeout"})
        if unknown:
            return refuse(call, "schema", f"unknown argument(s) {unknown}")
        if isinstance(argv, str):
            return refuse(call, "no-shell-string", "a command string is refused: pass an argv "
                          "array, e.g. [\"ls\", \"-la\"] (no shell, no pipes)")
        if not isinstance(argv, list) or not argv or not all(isinstance(a, str) for a in argv):
            return refuse(call, "argv", "`argv` must be a non-empty array of strings")
        if len(argv) > MAX_ARGS or sum(len(a.encode()) + 1 for a in argv) > MAX_ARGV_BYTES:
            return refuse(call, "argv-size", f"argv is larger than {MAX_ARGV_BYTES} bytes "
                          f"or {MAX_ARGS} items")
        if any("\x00" in a for a in argv):
            return refuse(call, "argv-nul", "an argument contains a NUL byte")
        program = argv[0]
        if not program.strip():
            return refuse(call, "argv-empty-program", "argv[0] is empty")
        if len(argv) == 1 and any(c.isspace() for c in program):
            return refuse(call, "no-shell-string", f"argv[0] {program!r} looks like a shell "
                          "command line: split it into an argv array")
        base = os.path.basename(program).lower()
        if base in ESCALATION:
            return refuse(call, "no-privilege-escalation",
                          f"{base!r} runs commands as another user; never run")
        timeout: Any = call.args.get("timeout", DEFAULT_TIMEOUT)
        if isinstance(timeout, bool) or not isinstance(timeout, int | float) \
                or not 0 < timeout <= MAX_TIMEOUT:
            return refuse(call, "timeout", f"`timeout` must be a number of seconds in "
                          f"(0, {MAX_TIMEOUT:g}]")
        return list(argv), float(timeout)

    async def dry_run(self, call: ToolCall, ctx: ToolContext) -> ExecutionResult:
        from adjutant.safety import sandbox

        checked = self._check(call)
        if isinstance(checked, ExecutionResult):
            return checked
        argv, timeout = checked
        text = sandbox.preview(argv, cwd=ctx.cwd, writable=list(ctx.cages), network=False,
                               timeout=timeout)
        if why := _missing(argv[0], ctx.cwd):  # a plan of a made-up program says so
            text = f"{text.rstrip(chr(10))}\nnote: {why}\n"
        return ExecutionResult(tool=call.tool, args=dict(call.args), status="dry_run",
                               dry_run_diff=text)

    async def execute(self, call: ToolCall, ctx: ToolContext) -> ExecutionResult:
        from adjutant.safety import sandbox
        from adjutant.safety.protection import Shield

        checked = self._check(call)
        if isinstance(checked, ExecutionResult):
            return checked
        argv, timeout = checked
        if (why := sandbox.available()) is not None:
            return refuse(call, "sandbox-required", f"the OS sandbox is unavailable ({why}); "
                          "shell.exec never runs a command unsandboxed")
        try:
            result = await sandbox.run(argv, cwd=ctx.cwd, writable=list(ctx.cages),
                                       network=False, timeout=timeout,
                                       max_output=self.max_output,
                                       max_processes=self.max_processes,
                                       shield=Shield.for_context(ctx, self.declaration))
        except (ValueError, sandbox.SandboxUnavailableError) as exc:
            return refuse(call, "sandbox", str(exc))
        if result.timed_out:
            trailer = "[exit status: none, killed at the timeout]"
        else:
            trailer = f"[exit status: {result.returncode}]"
        stderr = result.stderr
        if stderr and not stderr.endswith("\n"):
            stderr += "\n"
        ok = result.returncode == 0 and not result.timed_out
        return ExecutionResult(tool=call.tool, args=dict(call.args),
                               status="ok" if ok else "error", stdout=result.stdout,
                               stderr=stderr + trailer + "\n", duration_ms=result.duration_ms)


def _missing(program: str, cwd: str) -> str:
    """Why ``program`` would not start here (no such program), or empty: what the
    preview says of a command the model made up ("asdf qwer zxcv" planned as a run)."""
    if "/" in program:
        path = os.path.realpath(os.path.join(cwd, program))  # an absolute one stays itself
        if not path.startswith(os.path.realpath(cwd) + os.sep):
            return ""  # outside the folder: no existence oracle; the sandbox decides
        if os.path.isfile(path) and os.access(path, os.X_OK):  # a stat: never opened
            return ""
        return f"{program!r} is not an executable file here: running it would fail"
    if shutil.which(program):
        return ""
    return f"no program named {program!r} on PATH: running it would fail"
