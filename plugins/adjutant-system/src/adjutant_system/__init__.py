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

from adjutant_hookspecs import Tool, hookimpl

from ._info import NetCheckPort, SysInfo
from ._proc import ProcKill, ProcList
from ._shell import ShellExec

__all__ = ["TOOLS", "NetCheckPort", "ProcKill", "ProcList", "ShellExec", "SysInfo",
           "register_tools"]

#: Every tool class of the plugin, in registration order.
TOOLS: tuple[type, ...] = (ShellExec, ProcList, ProcKill, SysInfo, NetCheckPort)


@hookimpl
def register_tools(register: Callable[[Tool], None]) -> None:
    """Hand the kernel one instance of each tool."""
    for cls in TOOLS:
        register(cls())
