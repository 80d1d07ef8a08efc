"""The ``adjutant`` command. Subcommands come from plugins (``register_commands``);
the built-in ones (``version``, ``plugins``, ``doctor``) are registered the same way."""

from __future__ import annotations

import argparse
import inspect
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from adjutant_hookspecs import Command

    from ..kernel._kernel import Kernel

from ..kernel._errors import cancelled_by_user, leaves
from ..kernel._kernel import Kernel
from ..safety.terminal import safe_streams

__all__ = ["main"]

DESCRIPTION = (
    "Adjutant: a local AI operator for command-line and file work, always under your "
    "control (propose, confirm, execute; read-only by default; every action logged)."
)


def _global_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--profile", help="profile to use (default: $ADJUTANT_PROFILE or "
                        "'default')")
    parser.add_argument("--log-format", choices=["console", "json"],
                        help="log output: console for humans (default) or JSON lines")
    parser.add_argument("-v", "--verbose", action="count", default=0,
                        help="more log output; twice for debug, and tracebacks on errors")


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``adjutant`` console script; returns the exit code."""
    pre = argparse.ArgumentParser(add_help=False)
    _global_options(pre)
    early, rest = pre.parse_known_args(argv)
    chosen = next((word for word in rest if not word.startswith("-")), None)  # subcommand
    if early.log_format or early.verbose:
        from .._logging import configure_logging  # structlog: ~20 ms nobody else needs

        configure_logging(early.log_format,
                          {0: None, 1: "info"}.get(early.verbose, "debug"))

    # The parser needs the commands alone: the other registrations (and the modules
    # behind them, such as every tool) load only for the subcommand that runs.
    kernel = Kernel(profile=early.profile).load(kinds={"commands"})
    parser = argparse.ArgumentParser(prog="adjutant", description=DESCRIPTION)
    _global_options(parser)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for command in kernel.commands.values():
        child = sub.add_parser(command.name, help=command.help, description=command.help)
        # Only the subcommand being run is configured: `adjutant --help` lists the
        # others by name and help, without importing the modules that implement them.
        if command.name == chosen and command.configure is not None:
            command.configure(child)
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 0
    command = kernel.commands[args.command]
    kernel.load(kinds=command.needs)
    # Every command, a plugin's too, prints through the neutraliser: nothing a model,
    # file, client or tool wrote reaches the terminal raw, errors included.
    with safe_streams():
        code = _run_command(kernel, command, args)
        try:
            sys.stdout.flush()  # here, not at exit: a reader gone is not an error
        except BrokenPipeError:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return 141
        return code


def _run_command(kernel: Kernel, command: Command, args: argparse.Namespace) -> int:
    try:
        result = command.run(kernel, args)
        if inspect.isawaitable(result):
            result = _run_async(kernel, result)
        return int(result or 0)
    except KeyboardInterrupt:
        return 130
    except BaseException as exc:
        if not isinstance(exc, Exception | BaseExceptionGroup):
            raise  # SystemExit and the like
        if cancelled_by_user(exc):
            return 130
        if any(isinstance(cause, BrokenPipeError) for cause in leaves(exc)):
            # the reader went away (`adjutant doctor --json | head`): quiet, as cat is
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return 141
        if args.verbose >= 2:
            raise
        if (unwritable := _log_error(exc)) is not None:  # one line, never a traceback
            print(f"adjutant: {unwritable}", file=sys.stderr)
            return 1
        for cause in leaves(exc):  # the causes, never "unhandled errors in a TaskGroup"
            print(f"adjutant {args.command}: error: {cause or type(cause).__name__}",
                  file=sys.stderr)
        return 1


def _log_error(exc: BaseException) -> BaseException | None:
    """The `ActionLogError` in ``exc`` (raised through task groups: in a group), or
    one for a write a full disk refused before any run began."""
    from ..operator._actionlog import ActionLogError, disk_full  # the operator: on error only

    if isinstance(exc, ActionLogError):
        return exc
    if disk_full(exc):
        return ActionLogError.wrap(exc, what="the data home")
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            if (found := _log_error(inner)) is not None:
                return found
    return None


def _run_async(kernel: object, awaitable: object) -> int:
    """Start the kernel on anyio (``ADJUTANT_ASYNC_BACKEND``: asyncio or trio) and
    await the command inside it."""
    import anyio  # not for `adjutant --help` nor a command that needs no event loop

    async def run() -> int:
        started = False
        try:
            async with kernel:  # type: ignore[attr-defined]
                started = True
                return await awaitable  # type: ignore[no-any-return,misc]
        finally:
            if not started and inspect.iscoroutine(awaitable):
                awaitable.close()  # the kernel did not start: no "never awaited" warning

    backend = os.environ.get("ADJUTANT_ASYNC_BACKEND", "asyncio")
    return anyio.run(run, backend=backend)
