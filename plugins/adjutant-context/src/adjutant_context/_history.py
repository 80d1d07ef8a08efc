"""``shell-history``: the user's last commands from bash, zsh and fish history files."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ._common import Source, read_tail
from ._redact import redact_text

__all__ = ["MAX_COMMAND", "ShellHistoryProvider", "parse_bash", "parse_fish", "parse_zsh"]

#: Each command is cut to this many characters.
MAX_COMMAND = 300
_ZSH_EXTENDED = re.compile(r"^: *\d+:\d+;(.*)$", re.S)
_BASH_TIME = re.compile(r"^#\d{9,}$")
Parser = Callable[[str], list[str]]


def parse_bash(text: str) -> list[str]:
    """Commands of a bash history (``HISTTIMEFORMAT`` timestamp lines skipped)."""
    return [line for line in text.splitlines() if line.strip() and not _BASH_TIME.match(line)]


def parse_zsh(text: str) -> list[str]:
    """Commands of a zsh history, plain or extended (``: 1700000000:0;cmd``); a line
    ending in a backslash continues on the next."""
    commands: list[str] = []
    pending: list[str] = []
    for line in text.splitlines():
        pending.append(line)
        if line.endswith("\\"):
            continue
        entry = "\n".join(pending)
        pending = []
        if match := _ZSH_EXTENDED.match(entry):
            entry = match.group(1)
        if entry.strip():
            commands.append(entry.replace("\\\n", "\n"))
    return commands


def parse_fish(text: str) -> list[str]:
    """Commands of a fish history (``- cmd: ...`` entries; ``\\n`` and ``\\\\`` escaped)."""
    commands: list[str] = []
    for line in text.splitlines():
        if line.startswith("- cmd: "):
            command = line[len("- cmd: "):]
            command = re.sub(r"\\(.)", lambda m: "\n" if m.group(1) == "n" else m.group(1),
                             command)
            if command.strip():
                commands.append(command)
    return commands


class ShellHistoryProvider(Source):
    """``{"recent_shell": [...]}``: the last ``limit`` distinct commands, newest last.

    Files are merged oldest-modified first (the shell used last wins the end of the
    list); only their last 64 KiB is read. ``HOME`` and ``HISTFILE`` are read at gather
    time."""

    name = "shell-history"

    def __init__(self, limit: int = 10) -> None:
        self.limit = limit

    def files(self) -> list[tuple[Path, Parser]]:
        home = Path(os.environ.get("HOME") or os.path.expanduser("~"))
        bash = os.environ.get("HISTFILE") or str(home / ".bash_history")
        candidates: list[tuple[Path, Parser]] = [
            (Path(bash), parse_bash), (home / ".zsh_history", parse_zsh),
            (home / ".local" / "share" / "fish" / "fish_history", parse_fish)]
        seen: set[Path] = set()
        found: list[tuple[float, Path, Parser]] = []
        for path, parse in candidates:
            if path in seen or not path.is_file():
                continue
            seen.add(path)
            if path.name.endswith("zsh_history") and parse is parse_bash:
                parse = parse_zsh  # HISTFILE may name a zsh history
            found.append((path.stat().st_mtime, path, parse))
        found.sort(key=lambda item: item[0])
        return [(path, parse) for _, path, parse in found]

    async def collect(self, cwd: str) -> Mapping[str, Any]:
        commands: list[str] = []
        for path, parse in self.files():
            try:
                commands += parse(read_tail(path))
            except OSError:
                continue
        recent: list[str] = []
        for command in reversed(commands):  # newest first while deduplicating
            # redacted before the cut, so a cut never leaves part of a secret
            command = redact_text(command.strip())[:MAX_COMMAND]
            if command and command not in recent:
                recent.append(command)
            if len(recent) >= self.limit:
                break
        return {"recent_shell": recent[::-1]} if recent else {}
