"""Where Adjutant keeps its data: ``$ADJUTANT_HOME`` or the XDG data home."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

__all__ = ["data_home"]


def data_home(env: Mapping[str, str] | None = None) -> Path:
    """The data directory (not created here).

    ``ADJUTANT_HOME`` wins; otherwise ``$XDG_DATA_HOME/adjutant``, falling back to
    ``~/.local/share/adjutant`` as the XDG base-directory spec says. A relative
    XDG_DATA_HOME is invalid per the spec and ignored.
    """
    env = os.environ if env is None else env
    if home := env.get("ADJUTANT_HOME"):
        return Path(home).expanduser().absolute()
    xdg = env.get("XDG_DATA_HOME", "")
    base = Path(xdg) if xdg and Path(xdg).is_absolute() else Path.home() / ".local" / "share"
    return base / "adjutant"
