"""Caged file tools for Adjutant: ``fs.list``, ``fs.read``, ``fs.write``, ``fs.append``,
``fs.diff``, ``editor.patch``, ``search.grep`` and ``compress.zip``.

The in-process tools enforce the cage themselves (fd-relative resolution, no symlink
followed anywhere, see ``_cage``); ``search.grep`` runs ripgrep under
``adjutant.safety.sandbox``. Heavy modules (anyio, difflib, zipfile) are imported on use.
"""

from __future__ import annotations

from collections.abc import Callable

from adjutant_hookspecs import Tool, hookimpl

from ._cage import PROTECTED_NAMES, protected_reason
from ._common import MAX_FILE_BYTES
from ._fs import FsAppend, FsDiff, FsRead, FsWrite
from ._grep import SearchGrep
from ._list import FsList
from ._patch import EditorPatch
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

TOOLS = (FsList, FsRead, FsWrite, FsAppend, FsDiff, EditorPatch, SearchGrep, CompressZip)


@hookimpl
def register_tools(register: Callable[[Tool], None]) -> None:
    """Hand the kernel every file tool."""
    for cls in TOOLS:
        register(cls())
