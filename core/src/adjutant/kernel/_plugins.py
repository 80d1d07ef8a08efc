"""Finding plugins: the ``adjutant`` entry-point group, allow- and block-lists.

``ADJUTANT_LOAD_PLUGINS`` is an allow-list (comma-separated names; set but empty
loads no installed plugin), ``ADJUTANT_DISABLE_PLUGINS`` a block-list. A name
matches an entry point's name or its distribution's name. Built-in plugins are not
subject to either list: without them the kernel cannot run.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["EntryPoint", "PluginInfo", "discover", "selection"]

Status = Literal["loaded", "failed", "disabled"]


@dataclass(kw_only=True)
class PluginInfo:
    """What `adjutant plugins` reports about one plugin (a dataclass, not a struct:
    the kernel that lists plugins for ``--help`` imports no msgspec)."""

    name: str
    status: Status
    #: ``builtin``, ``entry-point`` or ``explicit`` (handed to the kernel in code).
    source: str
    module: str = ""
    distribution: str | None = None
    version: str | None = None
    #: kind → the names this plugin registered (``{"tools": ["files.read"]}``).
    registered: dict[str, list[str]] = field(default_factory=dict)
    #: Why it failed or was disabled: what went wrong and what to do.
    error: str | None = None


@dataclass(frozen=True)
class EntryPoint:
    """One ``adjutant`` entry point of an installed distribution."""

    name: str
    value: str
    distribution: str | None
    version: str | None

    def load(self) -> Any:
        """Import ``module`` (``module:attr.path`` gives an object inside it)."""
        from importlib import import_module

        module, _, attrs = self.value.partition(":")
        obj = import_module(module.strip())
        for attr in filter(None, attrs.strip().split(".")):
            obj = getattr(obj, attr)
        return obj


_META_DIR = re.compile(r"^(?P<name>[^-]+)-(?P<version>[^-]+)\.(dist|egg)-info$")


def discover(path: list[str] | None = None) -> list[EntryPoint]:
    """The ``adjutant`` entry points installed on ``sys.path``, in name order.

    This reads ``*.dist-info/entry_points.txt`` itself, as the entry-point spec
    describes, instead of going through importlib.metadata: that module imports the
    email package (~25 ms of every ``adjutant`` start-up) to parse METADATA we do
    not need. The first distribution of a name on the path wins, as with imports.
    """
    import os
    import sys

    found: dict[tuple[str, str], EntryPoint] = {}
    seen_dists: set[str] = set()
    for entry in path if path is not None else sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        for folder in sorted(names):
            match = _META_DIR.match(folder)
            if match is None:
                continue
            dist = match["name"].replace("_", "-").lower()
            if dist in seen_dists:
                continue
            seen_dists.add(dist)
            try:
                with open(os.path.join(entry or ".", folder, "entry_points.txt"),
                          encoding="utf-8") as handle:
                    text = handle.read()
            except OSError:
                continue
            for name, value in _section(text, "adjutant"):
                found.setdefault((name, value), EntryPoint(name, value, dist,
                                                           match["version"]))
    return sorted(found.values(), key=lambda ep: ep.name)


def _section(text: str, group: str) -> list[tuple[str, str]]:
    """``name = value`` lines of one ``[group]`` of an entry_points.txt (INI)."""
    out, inside = [], False
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("[") and line.endswith("]"):
            inside = line[1:-1].strip() == group
        elif inside and "=" in line:
            name, _, value = line.partition("=")
            out.append((name.strip(), value.strip()))
    return out


def _names(value: str) -> set[str]:
    return {part.strip() for part in value.split(",") if part.strip()}


def selection(env: Mapping[str, str], name: str, dist: str | None) -> str | None:
    """Why this plugin is not to be loaded, or None to load it."""
    names = {name} | ({dist} if dist else set())
    allow = env.get("ADJUTANT_LOAD_PLUGINS")
    if allow is not None and not names & _names(allow):
        return f"not in ADJUTANT_LOAD_PLUGINS={allow!r}"
    block = env.get("ADJUTANT_DISABLE_PLUGINS")
    if block is not None and names & _names(block):
        return f"listed in ADJUTANT_DISABLE_PLUGINS={block!r}"
    return None
