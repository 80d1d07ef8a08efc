"""The pluggy markers. Defined once here; `adjutant` re-exports `hookimpl`."""

from __future__ import annotations

import pluggy

__all__ = ["PROJECT_NAME", "hookimpl", "hookspec"]

#: One name everywhere: pluggy project, entry-point group, environment prefix.
PROJECT_NAME = "adjutant"

hookspec = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)
