"""A plugin's subcommands: `Command` and `lazy`, kept apart from the data contracts
(msgspec) because `adjutant --help` registers every command and should import nothing
else: a command holds callables and never crosses a wire, so it is a dataclass."""

from __future__ import annotations

import argparse
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from importlib import import_module
from typing import Any

__all__ = ["Command", "lazy"]


@dataclass(frozen=True, kw_only=True, slots=True)
class Command:
    """An ``adjutant`` subcommand contributed by a plugin.

    ``configure`` adds arguments to the subparser; ``run`` gets the loaded kernel
    and the parsed arguments and returns an exit code (or an awaitable of one,
    which the CLI runs on anyio). The CLI calls ``configure`` only for the
    subcommand being run, so ``adjutant --help`` needs neither: declare both with
    `lazy` (``run=lazy("my_plugin._cli:run")``) and the module that implements the
    command is imported only when it runs.
    """

    name: str
    help: str
    run: Callable[[Any, argparse.Namespace], int | Awaitable[int]]
    configure: Callable[[argparse.ArgumentParser], None] | None = None
    #: The kinds of registrations ``run`` uses (``"stores"``, ``"tools"``, ...: the
    #: kernel's registry names); None: every kind. A command that names a few starts
    #: without importing the rest (``adjutant mode`` loads no tool). Naming
    #: ``"tools"`` brings ``"policies"``: a tool never loads without its judges.
    needs: frozenset[str] | None = None


def lazy(target: str) -> Callable[..., Any]:
    """A function that imports ``target`` (``"package.module:function"``) at its first
    call and calls it: a `Command`'s ``run`` or ``configure`` that costs nothing until
    its subcommand runs."""
    module, sep, attr = target.partition(":")
    if not (sep and module and attr):
        raise ValueError(f"lazy target {target!r} must be 'package.module:function'")
    found: list[Callable[..., Any]] = []

    def call(*args: Any, **kwargs: Any) -> Any:
        if not found:
            obj: Any = import_module(module)
            for name in attr.split("."):
                obj = getattr(obj, name)
            found.append(obj)
        return found[0](*args, **kwargs)

    call.__name__ = call.__qualname__ = attr.rpartition(".")[2]
    call.__doc__ = f"{target}, imported at its first call"
    return call
