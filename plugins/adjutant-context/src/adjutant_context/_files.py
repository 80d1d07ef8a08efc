"""``selected-files`` (files the user picked, kept by Adjutant) and ``service-logs``."""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from adjutant.safety.regular import read_regular

from ._common import Source, data_home, read_tail
from ._redact import redact_text

__all__ = ["MAX_LOG_FILES", "MAX_SELECTED", "SELECTED_FILE", "SelectedFilesProvider",
           "ServiceLogsProvider", "clear", "select", "selected"]

SELECTED_FILE = "selected_files.json"
CONFIG_FILE = "context.json"
MAX_SELECTED = 20
MAX_LOG_FILES = 5
MAX_LOG_LINE = 500
_MAX_JSON = 1 << 20


def _home(home: str | os.PathLike[str] | None) -> Path:
    return Path(home) if home is not None else data_home()


def _read_json(path: Path) -> Any:
    """The JSON in ``path``, or None when it is missing, too big or not JSON."""
    try:
        data = read_regular(path, _MAX_JSON + 1)
        if len(data) > _MAX_JSON:
            return None
        return json.loads(data)
    except (OSError, ValueError):
        return None


def select(home: str | os.PathLike[str], paths: Iterable[str | os.PathLike[str]]) -> list[str]:
    """Make ``paths`` (absolute, deduplicated, at most 20) the selection; written
    atomically (a temporary file renamed over the old one). Returns what was stored."""
    chosen = list(dict.fromkeys(os.path.abspath(os.fspath(p)) for p in paths))[:MAX_SELECTED]
    directory = Path(home)
    directory.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".selected_files.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(chosen, handle, indent=1)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, directory / SELECTED_FILE)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return chosen


def clear(home: str | os.PathLike[str]) -> None:
    """Forget the selection."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(Path(home) / SELECTED_FILE)


def selected(home: str | os.PathLike[str], cwd: str | None = None) -> list[str]:
    """The stored selection: existing files only (relative entries against ``cwd``)."""
    stored = _read_json(Path(home) / SELECTED_FILE)
    if not isinstance(stored, list):
        return []
    found: list[str] = []
    for entry in stored:
        if not isinstance(entry, str) or not entry or "\x00" in entry:
            continue
        path = os.path.normpath(os.path.join(cwd or os.getcwd(), entry))
        if os.path.isfile(path) and path not in found:
            found.append(path)
        if len(found) >= MAX_SELECTED:
            break
    return found


class SelectedFilesProvider(Source):
    """``{"selected_files": [...]}`` from ``$ADJUTANT_HOME/selected_files.json``."""

    name = "selected-files"

    def __init__(self, home: str | os.PathLike[str] | None = None) -> None:
        #: None: ``$ADJUTANT_HOME`` (or the XDG data home) at gather time.
        self.home = home

    async def collect(self, cwd: str) -> Mapping[str, Any]:
        found = selected(_home(self.home), cwd)
        return {"selected_files": found} if found else {}


class ServiceLogsProvider(Source):
    """``{"logs": [...]}``: the last ``lines`` lines of each log file named by
    ``$ADJUTANT_HOME/context.json`` (``{"logs": ["/var/log/app.log", ...]}``, at most 5
    files, relative paths against the cwd), each prefixed with the file's name."""

    name = "service-logs"

    def __init__(self, lines: int = 20, home: str | os.PathLike[str] | None = None) -> None:
        self.lines = lines
        self.home = home

    def configured(self, cwd: str) -> list[str]:
        config = _read_json(_home(self.home) / CONFIG_FILE)
        logs = config.get("logs") if isinstance(config, dict) else None
        if not isinstance(logs, list):
            return []
        paths = [os.path.normpath(os.path.join(cwd, p)) for p in logs
                 if isinstance(p, str) and p and "\x00" not in p]
        return list(dict.fromkeys(paths))[:MAX_LOG_FILES]

    async def collect(self, cwd: str) -> Mapping[str, Any]:
        out = self.tails(cwd)
        return {"logs": out} if out else {}

    def tails(self, cwd: str) -> list[str]:
        """The prefixed last lines of every configured file (a line per unreadable one).

        A file the deny rules protect is withheld, whatever name reached it: a
        configured ``app.log`` that a repository replaced by a link (or a hard link)
        to ``~/.netrc`` is a secret, and redaction knows only some formats."""
        from adjutant.safety.protection import Shield

        shield = Shield(data_home=str(_home(self.home)))
        out: list[str] = []
        for path in self.configured(cwd):
            name = os.path.basename(path)
            try:
                if os.path.isdir(path):
                    raise IsADirectoryError(21, "Is a directory")
                if shield.read_refusal(path) is not None:
                    out.append(f"({name}: withheld: a file the deny rules protect)")
                    continue
                # redacted as a whole, so a secret spanning lines (a key block) is caught
                text = redact_text(read_tail(path, shield=shield))
            except OSError as exc:
                out.append(f"({name}: unreadable: {exc.strerror or exc})")
                continue
            for line in text.splitlines()[-self.lines:]:
                out.append(f"{name}: {line[:MAX_LOG_LINE]}")
        return out
