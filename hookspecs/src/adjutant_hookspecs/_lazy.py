"""Names a plugin package exports without importing the modules that define them:
the kernel imports every installed plugin at start-up, and ``adjutant --help`` should
not pay for tools nobody runs."""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from importlib import import_module
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(package: str, names: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``package`` that imports each of ``names`` (name ->
    submodule relative to ``package``, ``"._fs"``) on first access::

        __getattr__ = lazy_exports(__name__, {"FsRead": "._fs", "TOOLS": "._tools"})
    """

    def __getattr__(name: str) -> Any:
        if name not in names:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(names[name], package), name)
        setattr(sys.modules[package], name, value)  # the next lookup is a plain one
        return value

    return __getattr__
