"""Adjutant: a local, toggleable AI operator, built as a pluggy plugin framework.

``from adjutant import hookimpl`` is all a plugin module needs at import time; the
kernel's other names are imported on first use so that start-up stays cheap.
"""

from __future__ import annotations

import typing as _typing

from adjutant_hookspecs import hookimpl

from ._version import __version__

if _typing.TYPE_CHECKING:  # what `_LAZY` resolves, for type checkers (a test keeps them equal)
    from adjutant_hookspecs import MODES as MODES

    from ._agui import encode_sse as encode_sse
    from ._agui import to_ag_ui as to_ag_ui
    from ._bus import BusClosedError as BusClosedError
    from ._bus import EventBus as EventBus
    from ._bus import Subscription as Subscription
    from ._bus import UndeclaredEventError as UndeclaredEventError
    from ._kernel import HookCall as HookCall
    from ._kernel import Kernel as Kernel
    from ._kernel import PluginLoadError as PluginLoadError
    from ._logging import configure_logging as configure_logging
    from ._logging import get_logger as get_logger
    from ._paths import data_home as data_home
    from ._plugins import PluginInfo as PluginInfo
    from ._registry import RegistrationError as RegistrationError
    from ._registry import Registry as Registry
    from ._secrets import owner_only_secret as owner_only_secret
    from ._settings import ModelPreset as ModelPreset
    from ._settings import Profile as Profile
    from ._settings import ProfileError as ProfileError
    from ._settings import load_profile as load_profile
    from ._settings import parse_profile as parse_profile
    from .cli._operate import TerminalApprover as TerminalApprover
    from .operator import ActionLog as ActionLog
    from .operator import ActionLogError as ActionLogError
    from .operator import Approver as Approver
    from .operator import Copilot as Copilot
    from .operator import NoActionLogError as NoActionLogError
    from .operator import Pipeline as Pipeline
    from .operator import PlanPacket as PlanPacket
    from .operator import Requester as Requester
    from .operator import Run as Run
    from .operator import RunOutcome as RunOutcome
    from .operator import StepDecision as StepDecision
    from .operator import StepPacket as StepPacket
    from .operator import parse_reply as parse_reply

#: The public names (besides `hookimpl` and `__version__`): each imported from its
#: module on first use, so that start-up stays cheap.
_LAZY = {
    "ActionLog": ".operator", "ActionLogError": ".operator", "NoActionLogError": ".operator",
    "Approver": ".operator", "Copilot": ".operator", "PlanPacket": ".operator",
    "Requester": ".operator", "Run": ".operator", "RunOutcome": ".operator",
    "StepDecision": ".operator", "StepPacket": ".operator", "Pipeline": ".operator",
    "parse_reply": ".operator",
    "MODES": "adjutant_hookspecs",
    "encode_sse": "._agui", "to_ag_ui": "._agui",
    "BusClosedError": "._bus", "EventBus": "._bus", "Subscription": "._bus",
    "UndeclaredEventError": "._bus",
    "HookCall": "._kernel", "Kernel": "._kernel", "PluginLoadError": "._kernel",
    "configure_logging": "._logging", "get_logger": "._logging",
    "data_home": "._paths",
    "owner_only_secret": "._secrets",
    "PluginInfo": "._plugins",
    "Registry": "._registry", "RegistrationError": "._registry",
    "ModelPreset": "._settings", "Profile": "._settings", "ProfileError": "._settings",
    "load_profile": "._settings", "parse_profile": "._settings",
    "TerminalApprover": ".cli._operate",
}  # fmt: skip

__all__ = ["__version__", "hookimpl", *_LAZY]


def __getattr__(name: str) -> _typing.Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'adjutant' has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
