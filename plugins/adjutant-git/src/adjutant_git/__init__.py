"""Git tools for Adjutant, safe on any repository.

- ``git.status``, ``git.diff``, ``git.log``: reads;
- ``git.commit`` (message only: no amend, no push, no hooks), ``git.branch`` (create and
  switch), ``git.switch``: writes, previewed exactly (the tree to commit, the refs).

Git runs in the OS sandbox with no system or user configuration, every
program-running key overridden or refused, and user text behind ``--end-of-options``
(see `adjutant_git._git`). Cheap to import: the sandbox loads on first use.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from adjutant_hookspecs import hookimpl, lazy_exports

if TYPE_CHECKING:  # imported on first use (`lazy_exports`): start-up stays cheap
    from adjutant_hookspecs import Tool

    from ._tools import TOOLS, GitBranch, GitCommit, GitDiff, GitLog, GitStatus, GitSwitch

__all__ = ["TOOLS", "GitBranch", "GitCommit", "GitDiff", "GitLog", "GitStatus", "GitSwitch",
           "register_tools"]

__getattr__ = lazy_exports(__name__, dict.fromkeys(
    ["TOOLS", "GitBranch", "GitCommit", "GitDiff", "GitLog", "GitStatus", "GitSwitch"],
    "._tools"))


@hookimpl
def register_tools(register: Callable[[Tool], None]) -> None:
    """Hand the kernel one instance of each tool."""
    from ._tools import TOOLS

    for cls in TOOLS:
        register(cls())
