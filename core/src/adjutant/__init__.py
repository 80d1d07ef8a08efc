"""Adjutant: a local, toggleable AI operator, built as a pluggy plugin framework.

``from adjutant import hookimpl`` is all a plugin module needs at import time; the
kernel's other names are imported on first use so that start-up stays cheap.
"""

from __future__ import annotations

import typing as _typing

from adjutant_hookspecs import hookimpl

from ._version import __version__

if _typing.TYPE_CHECKING:
    from ._actionlog import ActionLog, ActionLogError, NoActionLogError
    from ._agui import encode_sse, to_ag_ui
    from ._bus import BusClosedError, EventBus, Subscription, UndeclaredEventError
    from ._consent import Requester
    from ._kernel import HookCall, Kernel, PluginLoadError
    from ._logging import configure_logging, get_logger
    from ._operator import (
        MODES,
        Approver,
        Copilot,
        PlanPacket,
        RunOutcome,
        StepDecision,
        StepPacket,
    )
    from ._paths import data_home
    from ._pipeline import Pipeline
    from ._plugins import PluginInfo
    from ._registry import RegistrationError, Registry
    from ._replies import parse_reply
    from ._secrets import owner_only_secret
    from ._settings import ModelPreset, Profile, ProfileError, load_profile, parse_profile
    from .cli._operate import TerminalApprover

__all__ = [
    "MODES",
    "ActionLog",
    "ActionLogError",
    "Approver",
    "BusClosedError",
    "Copilot",
    "EventBus",
    "HookCall",
    "Kernel",
    "ModelPreset",
    "NoActionLogError",
    "Pipeline",
    "PlanPacket",
    "PluginInfo",
    "PluginLoadError",
    "Profile",
    "ProfileError",
    "RegistrationError",
    "Registry",
    "Requester",
    "RunOutcome",
    "StepDecision",
    "StepPacket",
    "Subscription",
    "TerminalApprover",
    "UndeclaredEventError",
    "__version__",
    "configure_logging",
    "data_home",
    "encode_sse",
    "get_logger",
    "hookimpl",
    "load_profile",
    "owner_only_secret",
    "parse_profile",
    "parse_reply",
    "to_ag_ui",
]

_LAZY = {
    "ActionLog": "_actionlog", "ActionLogError": "_actionlog",
    "NoActionLogError": "_actionlog",
    "MODES": "_operator", "Approver": "_consent", "Copilot": "_operator",
    "PlanPacket": "_consent", "RunOutcome": "_operator", "StepDecision": "_consent",
    "StepPacket": "_consent", "Requester": "_consent",
    "Pipeline": "_pipeline", "parse_reply": "_replies",
    "encode_sse": "_agui", "to_ag_ui": "_agui",
    "BusClosedError": "_bus", "EventBus": "_bus", "Subscription": "_bus",
    "UndeclaredEventError": "_bus",
    "HookCall": "_kernel", "Kernel": "_kernel", "PluginLoadError": "_kernel",
    "configure_logging": "_logging", "get_logger": "_logging",
    "data_home": "_paths",
    "owner_only_secret": "_secrets",
    "PluginInfo": "_plugins",
    "Registry": "_registry", "RegistrationError": "_registry",
    "ModelPreset": "_settings", "Profile": "_settings", "ProfileError": "_settings",
    "load_profile": "_settings", "parse_profile": "_settings",
    "TerminalApprover": "cli._operate",
}  # fmt: skip


def __getattr__(name: str) -> _typing.Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'adjutant' has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(f"adjutant.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
