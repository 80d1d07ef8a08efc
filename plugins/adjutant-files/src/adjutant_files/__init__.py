"""Caged file tools for Adjutant: ``fs.list``, ``fs.read``, ``fs.write``, ``fs.append``,
``fs.diff``, ``editor.patch``, ``search.grep`` and ``compress.zip``.

The in-process tools enforce the cage themselves (fd-relative resolution, no symlink
followed anywhere, see ``_cage``); ``search.grep`` runs ripgrep under
``adjutant.safety.sandbox``. Heavy modules (anyio, difflib, zipfile) are imported on use.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from adjutant_hookspecs import hookimpl, lazy_exports

if TYPE_CHECKING:  # imported on first use (`lazy_exports`): start-up stays cheap
    from adjutant.toolkit import PROTECTED_NAMES, protected_reason
    from adjutant_hookspecs import Tool

    from ._common import MAX_FILE_BYTES
    from ._fs import FsAppend, FsDiff, FsRead, FsWrite
    from ._grep import SearchGrep
    from ._list import FsList
    from ._patch import EditorPatch
    from ._tools import TOOLS
    from ._zip import CompressZip

__all__ = [
    "MAX_FILE_BYTES",
    "PROTECTED_NAMES",
    "TOOLS",
    "CompressZip",
    "EditorPatch",
    "FsAppend",
    "FsDiff",
    "FsList",
    "FsRead",
    "FsWrite",
    "SearchGrep",
    "protected_reason",
    "register_tools",
]

__getattr__ = lazy_exports(__name__, {
    "PROTECTED_NAMES": "adjutant.toolkit", "protected_reason": "adjutant.toolkit",
    "MAX_FILE_BYTES": "._common",
    "FsAppend": "._fs", "FsDiff": "._fs", "FsRead": "._fs", "FsWrite": "._fs",
    "SearchGrep": "._grep", "FsList": "._list", "EditorPatch": "._patch",
    "CompressZip": "._zip", "TOOLS": "._tools"})


@hookimpl
def register_tools(register: Callable[[Tool], None]) -> None:
    """Hand the kernel every file tool."""
    from ._tools import TOOLS

    for cls in TOOLS:
        register(cls())
