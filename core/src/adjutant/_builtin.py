"""The built-in plugin: standard events, the core subcommands and doctor checks.

Built-in features register through the same hooks as any third-party plugin.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from adjutant_hookspecs import AG_UI_EVENTS, CONSENT_EVENTS, BusGap, Check, Command, hookimpl

from .cli import _commands, _doctor, _new, _operate, _workspace


@hookimpl
def register_events(register: Callable[[Any], None]) -> None:
    for cls in (*AG_UI_EVENTS, BusGap, *CONSENT_EVENTS):
        register(cls)


@hookimpl
def register_commands(register: Callable[[Command], None]) -> None:
    register(Command(name="version", help="print the versions of Adjutant and Python",
                     run=_commands.version))
    register(Command(name="plugins", help="list plugins, their status and registrations",
                     run=_commands.plugins, configure=_commands.configure_plugins))
    register(Command(name="doctor", help="check this machine and the installed plugins",
                     run=_doctor.doctor, configure=_doctor.configure))
    register(Command(name="run", help="ask the operator to do something: context, plan, "
                     "previews, your approval per step", run=_operate.run,
                     configure=_operate.configure_run))
    register(Command(name="chat", help="a session: requests, quick actions, interrupts",
                     run=_operate.chat, configure=_operate.configure_chat))
    register(Command(name="mode", help="show or switch the operator's mode",
                     run=_operate.mode, configure=_operate.configure_mode))
    register(Command(name="grant", help="list, give or revoke time-boxed grants (write, "
                     "network:<tool>, cage:<dir>)", run=_operate.grant,
                     configure=_operate.configure_grant))
    register(Command(name="workspace", help="show the pinned workspace and cages, or "
                     "trust one again after it changed", run=_workspace.workspace,
                     configure=_workspace.configure_workspace))
    register(Command(name="status", help="mode, preset, policies, memory",
                     run=_operate.status, configure=_operate.configure_json))
    register(Command(name="tools", help="list the tools or show one's declaration",
                     run=_operate.tools, configure=_operate.configure_tools))
    register(Command(name="replay", help="run a logged step again (or only preview it)",
                     run=_operate.replay, configure=_operate.configure_replay))
    register(Command(name="bundle", help="write a bug bundle (secrets redacted)",
                     run=_operate.bundle, configure=_operate.configure_bundle))
    register(Command(name="context", help="show the context bulletin a request would use",
                     run=_operate.context, configure=_operate.configure_json))
    register(Command(name="new", help="create a plugin package whose tests pass at once: "
                     "new plugin NAME [--kind tool|policy|provider|context]",
                     run=_new.new, configure=_new.configure))
    register(Command(name="presets", help="list model presets or switch to one",
                     run=_operate.presets, configure=_operate.configure_presets))


@hookimpl
def register_checks(register: Callable[[Check], None]) -> None:
    for name, run in _doctor.BUILTIN_CHECKS:
        register(Check(name=name, run=run))
