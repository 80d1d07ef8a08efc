"""Finding plugins: the ``adjutant`` entry-point group, allow- and block-lists.

``ADJUTANT_LOAD_PLUGINS`` is an allow-list (comma-separated names; set but empty
loads no installed plugin), ``ADJUTANT_DISABLE_PLUGINS`` a block-list. A name
matches an entry point's name or its distribution's name. Built-in plugins are not
subject to either list: without them the kernel cannot run.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

import msgspec

__all__ = ["PluginInfo", "discover", "selection"]

Status = Literal["loaded", "failed", "disabled"]


class PluginInfo(msgspec.Struct, kw_only=True):
    """What `adjutant plugins` reports about one plugin."""

    name: str
    status: Status
    #: ``builtin``, ``entry-point`` or ``explicit`` (handed to the kernel in code).
    source: str
    module: str = ""
    distribution: str | None = None
    version: str | None = None
    #: kind → the names this plugin registered (``{"tools": ["files.read"]}``).
    registered: dict[str, list[str]] = msgspec.field(default_factory=dict)
    #: Why it failed or was disabled: what went wrong and what to do.
    error: str | None = None


def discover() -> list[Any]:
    """The installed ``adjutant`` entry points, deduplicated, in name order."""
    from importlib.metadata import entry_points

    seen: dict[tuple[str, str], Any] = {}
    for ep in entry_points(group="adjutant"):
        seen.setdefault((ep.name, ep.value), ep)
    return sorted(seen.values(), key=lambda ep: ep.name)


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
