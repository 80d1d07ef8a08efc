"""The built-in plugin: standard events, the core subcommands and doctor checks.

Built-in features register through the same hooks as any third-party plugin. Loading a
kernel (an embedding app, a web dock, ``mcp serve``, ``adjutant --help``) must not import
the CLI's commands, so each subcommand names its module and functions (`lazy`),
imported when the CLI calls them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from adjutant_hookspecs import Command, hookimpl, lazy

if TYPE_CHECKING:
    from adjutant_hookspecs import Check


# The events, checks and their msgspec structs are imported by the hooks that register
# them: `adjutant --help` loads only the commands, and pays for nothing else.
@hookimpl
def register_events(register: Callable[[Any], None]) -> None:
    from adjutant_hookspecs import AG_UI_EVENTS, CONSENT_EVENTS, BusGap

    for cls in (*AG_UI_EVENTS, BusGap, *CONSENT_EVENTS):
        register(cls)


#: name, help, module under adjutant.cli, its run function, its configure function
_COMMANDS: tuple[tuple[str, str, str, str, str | None], ...] = (
    ("version", "print the versions of Adjutant and Python", "_commands", "version", None),
    ("plugins", "list plugins, their status and registrations", "_commands", "plugins",
     "configure_plugins"),
    ("doctor", "check this machine and the installed plugins", "_doctor", "doctor",
     "configure"),
    ("run", "ask the operator to do something: context, plan, previews, your approval "
     "per step", "_operate", "run", "configure_run"),
    ("chat", "a session: requests, quick actions, interrupts", "_operate", "chat",
     "configure_chat"),
    ("mode", "show or switch the operator's mode", "_state", "mode", "configure_mode"),
    ("grant", "list, give or revoke time-boxed grants (write, network:<tool>, "
     "cage:<dir>)", "_state", "grant", "configure_grant"),
    ("workspace", "show the pinned workspace and cages, or trust one again after it "
     "changed", "_workspace", "workspace", "configure_workspace"),
    ("status", "mode, preset, policies, memory", "_state", "status", "configure_json"),
    ("tools", "list the tools or show one's declaration", "_state", "tools",
     "configure_tools"),
    ("replay", "run a logged step again (or only preview it)", "_operate", "replay",
     "configure_replay"),
    ("bundle", "write a bug bundle (secrets redacted)", "_state", "bundle",
     "configure_bundle"),
    ("context", "show the context bulletin a request would use", "_state", "context",
     "configure_json"),
    ("new", "create a plugin package whose tests pass at once: new plugin NAME "
     "[--kind tool|policy|provider|context]", "_new", "new", "configure"),
    ("presets", "list model presets or switch to one", "_state", "presets",
     "configure_presets"),
    ("stronger", "try a stronger model: the last request (or RUN_ID) again on the next "
     "preset up", "_operate", "stronger", "configure_stronger"),
)


#: Commands that use a few kinds of registrations, so they start without the rest
#: (``adjutant mode`` imports no tool): the mode lives in the stores and its change is
#: an event.
_NEEDS = {"version": frozenset(), "mode": frozenset({"stores", "events"})}


@hookimpl
def register_commands(register: Callable[[Command], None]) -> None:
    for name, help, module, run, configure in _COMMANDS:
        where = f"adjutant.cli.{module}"
        register(Command(name=name, help=help, run=lazy(f"{where}:{run}"),
                         configure=lazy(f"{where}:{configure}") if configure else None,
                         needs=_NEEDS.get(name)))


@hookimpl
def register_checks(register: Callable[[Check], None]) -> None:
    from adjutant_hookspecs import Check

    from ._checks import BUILTIN_CHECKS

    for name, run in BUILTIN_CHECKS:
        register(Check(name=name, run=run))
