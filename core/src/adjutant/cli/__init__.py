"""The ``adjutant`` command. Subcommands come from plugins (``register_commands``);
the built-in ones (``version``, ``plugins``, ``doctor``) are registered the same way."""

from __future__ import annotations

import argparse
import inspect
import os
import sys
from collections.abc import Sequence

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
    from .._kernel import Kernel

    pre = argparse.ArgumentParser(add_help=False)
    _global_options(pre)
    early, _ = pre.parse_known_args(argv)
    if early.log_format or early.verbose:
        from .._logging import configure_logging

        configure_logging(early.log_format,
                          {0: None, 1: "info"}.get(early.verbose, "debug"))

    kernel = Kernel(profile=early.profile).load()
    parser = argparse.ArgumentParser(prog="adjutant", description=DESCRIPTION)
    _global_options(parser)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for command in kernel.commands.values():
        child = sub.add_parser(command.name, help=command.help, description=command.help)
        if command.configure is not None:
            command.configure(child)
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 0
    command = kernel.commands[args.command]
    try:
        result = command.run(kernel, args)
        if inspect.isawaitable(result):
            result = _run_async(kernel, result)
        return int(result or 0)
    except KeyboardInterrupt:
        return 130
    except Exception as exc:
        if args.verbose >= 2:
            raise
        print(f"adjutant {args.command}: error: {exc}", file=sys.stderr)
        return 1


def _run_async(kernel: object, awaitable: object) -> int:
    """Start the kernel on anyio (``ADJUTANT_ASYNC_BACKEND``: asyncio or trio) and
    await the command inside it."""
    import anyio

    async def run() -> int:
        async with kernel:  # type: ignore[attr-defined]
            return await awaitable  # type: ignore[no-any-return,misc]

    backend = os.environ.get("ADJUTANT_ASYNC_BACKEND", "asyncio")
    return anyio.run(run, backend=backend)
