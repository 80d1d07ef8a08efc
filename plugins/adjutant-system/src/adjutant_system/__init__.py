"""System tools for Adjutant.

- ``shell.exec``: one argv (never a shell string) under the bubblewrap sandbox;
- ``proc.list`` / ``proc.kill``: the user's own processes, read from /proc; SIGTERM
  only, safe against pid reuse (pidfd);
- ``sys.info``: OS, kernel, CPUs, memory, disk, Python (nothing from the environment);
- ``net.check_port``: whether a loopback TCP port listens (socket table, no connection).

Cheap to import: the sandbox (and anyio) load on first use.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from adjutant_hookspecs import hookimpl, lazy_exports

if TYPE_CHECKING:  # imported on first use (`lazy_exports`): start-up stays cheap
    from adjutant_hookspecs import Tool

    from ._info import NetCheckPort, SysInfo
    from ._proc import ProcKill, ProcList
    from ._shell import ShellExec
    from ._tools import TOOLS

__all__ = ["TOOLS", "NetCheckPort", "ProcKill", "ProcList", "ShellExec", "SysInfo",
           "register_tools"]

__getattr__ = lazy_exports(__name__, {
    "NetCheckPort": "._info", "SysInfo": "._info", "ProcKill": "._proc",
    "ProcList": "._proc", "ShellExec": "._shell", "TOOLS": "._tools"})


@hookimpl
def register_tools(register: Callable[[Tool], None]) -> None:
    """Hand the kernel one instance of each tool."""
    from ._tools import TOOLS

    for cls in TOOLS:
        register(cls())
