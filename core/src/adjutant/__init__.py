"""Adjutant: a local, toggleable AI operator, built as a pluggy plugin framework.

``from adjutant import hookimpl`` is all a plugin module needs at import time; the
kernel's other names are imported on first use so that start-up stays cheap.
"""

from __future__ import annotations

import typing as _typing
from importlib import import_module as _import_module

from adjutant_hookspecs import hookimpl

from ._version import __version__

if _typing.TYPE_CHECKING:  # what `_LAZY` resolves, for type checkers (a test keeps them equal)
    from adjutant_hookspecs import MODES as MODES

    from ._agui import encode_sse as encode_sse
    from ._agui import to_ag_ui as to_ag_ui
    from ._logging import configure_logging as configure_logging
    from ._logging import get_logger as get_logger
    from .cli._approver import TerminalApprover as TerminalApprover
    from .kernel._bus import BusClosedError as BusClosedError
    from .kernel._bus import EventBus as EventBus
    from .kernel._bus import Subscription as Subscription
    from .kernel._bus import UndeclaredEventError as UndeclaredEventError
    from .kernel._kernel import HookCall as HookCall
    from .kernel._kernel import Kernel as Kernel
    from .kernel._kernel import PluginLoadError as PluginLoadError
    from .kernel._paths import data_home as data_home
    from .kernel._plugins import PluginInfo as PluginInfo
    from .kernel._registry import RegistrationError as RegistrationError
    from .kernel._registry import Registry as Registry
    from .kernel._services import spawn_service as spawn_service
    from .kernel._settings import ModelPreset as ModelPreset
    from .kernel._settings import Profile as Profile
    from .kernel._settings import ProfileError as ProfileError
    from .kernel._settings import load_profile as load_profile
    from .kernel._settings import parse_profile as parse_profile
    from .kernel._settings import plugin_section as plugin_section
    from .kernel._settings import profile_path as profile_path
    from .operator import ActionLog as ActionLog
    from .operator import ActionLogError as ActionLogError
    from .operator import Approver as Approver
    from .operator import Channel as Channel
    from .operator import Copilot as Copilot
    from .operator import NoActionLogError as NoActionLogError
    from .operator import Pipeline as Pipeline
    from .operator import PlanDecision as PlanDecision
    from .operator import PlanPacket as PlanPacket
    from .operator import Requester as Requester
    from .operator import Run as Run
    from .operator import RunOutcome as RunOutcome
    from .operator import StepDecision as StepDecision
    from .operator import StepPacket as StepPacket
    from .operator import parse_reply as parse_reply
    from .safety._secrets import SecretError as SecretError
    from .safety._secrets import owner_only_folder as owner_only_folder
    from .safety._secrets import owner_only_secret as owner_only_secret
    from .safety._secrets import secret_file_problem as secret_file_problem

#: The public names (besides `hookimpl` and `__version__`): each imported from its
#: module on first use, so that start-up stays cheap.
_LAZY = {
    "ActionLog": ".operator", "ActionLogError": ".operator", "NoActionLogError": ".operator",
    "Approver": ".operator", "Channel": ".operator", "Copilot": ".operator",
    "PlanPacket": ".operator", "PlanDecision": ".operator",
    "Requester": ".operator", "Run": ".operator", "RunOutcome": ".operator",
    "StepDecision": ".operator", "StepPacket": ".operator", "Pipeline": ".operator",
    "parse_reply": ".operator",
    "MODES": "adjutant_hookspecs",
    "encode_sse": "._agui", "to_ag_ui": "._agui",
    "BusClosedError": ".kernel._bus", "EventBus": ".kernel._bus", "Subscription": ".kernel._bus",
    "UndeclaredEventError": ".kernel._bus",
    "HookCall": ".kernel._kernel", "Kernel": ".kernel._kernel",
    "PluginLoadError": ".kernel._kernel",
    "configure_logging": "._logging", "get_logger": "._logging",
    "data_home": ".kernel._paths",
    "owner_only_secret": ".safety._secrets", "owner_only_folder": ".safety._secrets",
    "SecretError": ".safety._secrets", "secret_file_problem": ".safety._secrets",
    "PluginInfo": ".kernel._plugins",
    "Registry": ".kernel._registry", "RegistrationError": ".kernel._registry",
    "ModelPreset": ".kernel._settings", "Profile": ".kernel._settings",
    "ProfileError": ".kernel._settings",
    "load_profile": ".kernel._settings", "parse_profile": ".kernel._settings",
    "plugin_section": ".kernel._settings", "profile_path": ".kernel._settings",
    "spawn_service": ".kernel._services",
    "TerminalApprover": ".cli._approver",
}  # fmt: skip

__all__ = ["__version__", "hookimpl", *_LAZY]


def __getattr__(name: str) -> _typing.Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'adjutant' has no attribute {name!r}")
    value = getattr(_import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
