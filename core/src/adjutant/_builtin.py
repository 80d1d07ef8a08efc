"""The built-in plugin: standard events, the core subcommands and doctor checks.

Built-in features register through the same hooks as any third-party plugin.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from adjutant_hookspecs import AG_UI_EVENTS, BusGap, Check, Command, hookimpl

from .cli import _commands, _doctor


@hookimpl
def register_events(register: Callable[[Any], None]) -> None:
    for cls in (*AG_UI_EVENTS, BusGap):
        register(cls)


@hookimpl
def register_commands(register: Callable[[Command], None]) -> None:
    register(Command(name="version", help="print the versions of Adjutant and Python",
                     run=_commands.version))
    register(Command(name="plugins", help="list plugins, their status and registrations",
                     run=_commands.plugins, configure=_commands.configure_plugins))
    register(Command(name="doctor", help="check this machine and the installed plugins",
                     run=_doctor.doctor, configure=_doctor.configure))


@hookimpl
def register_checks(register: Callable[[Check], None]) -> None:
    for name, run in _doctor.BUILTIN_CHECKS:
        register(Check(name=name, run=run))
