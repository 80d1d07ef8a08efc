"""What every provider shares: redaction of everything it returns, the data home, tails."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from adjutant.safety.regular import open_regular

from ._redact import redact

__all__ = ["TAIL_BYTES", "Source", "clean", "data_home", "read_tail"]

#: How much of a big file is read: its last 64 KiB.
TAIL_BYTES = 64 * 1024

_ESCAPES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(\x07|\x1b\\)|\x1b[@-Z\\-_]")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def clean(text: str) -> str:
    """Terminal escapes and control characters (but newlines and tabs) removed."""
    return _CONTROL.sub("", _ESCAPES.sub("", text))


def _cleaned(value: Any) -> Any:
    if isinstance(value, str):
        return clean(value)
    if isinstance(value, Mapping):
        return {k: _cleaned(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_cleaned(v) for v in value]
    return value


def data_home() -> Path:
    """Adjutant's data directory as the environment names it now (as `adjutant.data_home`)."""
    if home := os.environ.get("ADJUTANT_HOME"):
        return Path(home).expanduser().absolute()
    xdg = os.environ.get("XDG_DATA_HOME", "")
    base = Path(xdg) if xdg and Path(xdg).is_absolute() else Path.home() / ".local" / "share"
    return base / "adjutant"


def read_tail(path: str | os.PathLike[str], limit: int = TAIL_BYTES, shield: Any = None) -> str:
    """The last ``limit`` bytes of a file as text, starting at a whole line.

    :param shield: an `adjutant.safety.protection.Shield`: the file opened is judged again
        (a hard link swapped in after the caller's check is refused).
    :raises OSError: the file cannot be read, or the shield refuses it.
    """
    with open_regular(path) as handle:  # a FIFO or device named as a log never blocks
        st = os.fstat(handle.fileno())
        if shield is not None and shield.read_refusal(os.fspath(path), st) is not None:
            raise PermissionError(13, "a file the deny rules protect")
        size = st.st_size
        start = max(0, size - limit)
        handle.seek(start)
        data = handle.read(limit)
    if start > 0:  # drop the partial first line
        cut = data.find(b"\n")
        data = data[cut + 1:] if cut >= 0 else b""
    return data.decode("utf-8", errors="replace")


class Source:
    """Base of the providers: `gather` returns `collect`'s fields, cleaned and redacted,
    and a provider that fails costs only its own fields."""

    name: str
    #: Off unless the profile's ``context_providers`` switches it on.
    default_enabled: bool = True

    async def gather(self, cwd: str) -> Mapping[str, Any]:
        found = await self.collect(cwd)
        return {key: redact(_cleaned(value)) for key, value in found.items()}

    async def collect(self, cwd: str) -> Mapping[str, Any]:  # pragma: no cover - abstract
        raise NotImplementedError
