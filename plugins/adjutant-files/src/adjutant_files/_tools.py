"""Every tool class of the plugin, in registration order."""

from __future__ import annotations

from ._fs import FsAppend, FsDiff, FsRead, FsWrite
from ._grep import SearchGrep
from ._list import FsList
from ._patch import EditorPatch
from ._zip import CompressZip

__all__ = ["TOOLS"]

TOOLS: tuple[type, ...] = (FsList, FsRead, FsWrite, FsAppend, FsDiff, EditorPatch, SearchGrep,
                           CompressZip)
