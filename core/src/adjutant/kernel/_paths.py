"""Where Adjutant keeps its data (``$ADJUTANT_HOME`` or the XDG data home) and what it
can rebuild (the XDG cache home)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping
from pathlib import Path

__all__ = ["cache_home", "data_home", "private_home"]


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


def cache_home(env: Mapping[str, str] | None = None) -> Path:
    """Adjutant's cache directory, ``$XDG_CACHE_HOME/adjutant`` (else
    ``~/.cache/adjutant``): what can be rebuilt at any time (not created here)."""
    env = os.environ if env is None else env
    xdg = env.get("XDG_CACHE_HOME", "")
    home = env.get("HOME") or os.path.expanduser("~")
    base = Path(xdg) if xdg and Path(xdg).is_absolute() else Path(home) / ".cache"
    return base / "adjutant"


def private_home(home: Path) -> None:
    """Make the data home where missing, mode 0700: the action log, the run artifacts
    and the tokens in it hold what the user's files and commands said, which is no
    business of other local users. An existing home keeps its mode (it may be a folder
    the user chose for more than Adjutant); `adjutant doctor` warns when others can
    read it."""
    with contextlib.suppress(OSError):  # unwritable: the first write says so, and doctor
        home.mkdir(parents=True, exist_ok=True, mode=0o700)
