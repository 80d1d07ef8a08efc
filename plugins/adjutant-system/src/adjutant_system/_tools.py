"""Every tool class of the plugin, in registration order."""

from __future__ import annotations

from ._info import NetCheckPort, SysInfo
from ._proc import ProcKill, ProcList
from ._shell import ShellExec

__all__ = ["TOOLS"]

TOOLS: tuple[type, ...] = (ShellExec, ProcList, ProcKill, SysInfo, NetCheckPort)
