"""``git``: the repository state of the cwd, from git run in the OS sandbox.

git reads the repository's own configuration, which could name programs to run
(fsmonitor, hooks, pagers...); it therefore never runs outside `adjutant.sandbox`
(read-only root, no network, clean environment), with no system or global
configuration and every run-a-program key we can override overridden. Without
bubblewrap the provider contributes nothing.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Mapping, Sequence
from typing import Any

from ._common import Source

__all__ = ["MAX_CHANGED", "GitProvider", "parse_status"]

#: At most this many changed paths in the bulletin.
MAX_CHANGED = 50
OVERRIDES = (
    "core.fsmonitor=false", "core.hooksPath=/dev/null", "core.pager=cat", "core.editor=false",
    "core.askPass=", "core.sshCommand=false", "credential.helper=", "core.untrackedCache=false",
    "color.ui=false", "core.quotePath=false", "protocol.allow=never", "diff.external=",
)
ENV = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_OPTIONAL_LOCKS": "0",
       "GIT_ATTR_NOSYSTEM": "1", "GIT_TERMINAL_PROMPT": "0", "GIT_NO_REPLACE_OBJECTS": "1"}
_OID = re.compile(r"^[0-9a-f]{40}([0-9a-f]{24})?$")


def argv(args: Sequence[str]) -> list[str]:
    line = ["git", "--no-pager"]
    for override in OVERRIDES:
        line += ["-c", override]
    return line + list(args)


def _unquote(path: str) -> str:
    if len(path) >= 2 and path[0] == path[-1] == '"':
        raw = codecs.escape_decode(path[1:-1].encode())[0]
        return bytes(raw).decode("utf-8", errors="replace")
    return path


def parse_status(text: str) -> dict[str, Any]:
    """``branch``, ``dirty`` and ``changed`` from ``git status --porcelain=v1 --branch``."""
    branch: str | None = None
    changed: list[str] = []
    dirty = False
    for line in text.splitlines():
        if line.startswith("## "):
            head = line[3:]
            if head.startswith("No commits yet on "):
                branch = head.removeprefix("No commits yet on ").strip()
            elif head.startswith("Initial commit on "):
                branch = head.removeprefix("Initial commit on ").strip()
            elif not head.startswith("HEAD (no branch)"):
                branch = head.split("...", 1)[0].split(" [", 1)[0].strip() or None
        elif len(line) > 3 and line[2] == " ":
            dirty = True
            path = line[3:]
            if " -> " in path and line[0] in "RC":
                path = path.split(" -> ", 1)[1]
            if len(changed) < MAX_CHANGED:
                changed.append(_unquote(path))
    return {"branch": branch, "dirty": dirty, "changed": changed}


class GitProvider(Source):
    """``{"git": {root, branch, head, dirty, changed}}``, or nothing outside a repository."""

    name = "git"

    def __init__(self, timeout: float = 5.0) -> None:
        self.timeout = timeout

    async def _git(self, args: Sequence[str], cwd: str, readable: Sequence[str]) -> Any:
        from adjutant import sandbox

        return await sandbox.run(argv(args), cwd=cwd, timeout=self.timeout, readable=readable,
                                 unchecked_env=ENV, max_output=256 * 1024)

    async def collect(self, cwd: str) -> Mapping[str, Any]:
        from adjutant import sandbox

        dirs = sandbox.repository_dirs(cwd)
        if not dirs or sandbox.available() is not None:
            return {}  # never run git on a repository unsandboxed
        status = await self._git(["status", "--porcelain=v1", "--branch"], cwd, dirs)
        if status.returncode != 0:
            return {}
        parsed = parse_status(status.stdout)
        where = await self._git(["rev-parse", "--show-toplevel", "HEAD"], cwd, dirs)
        lines = where.stdout.splitlines()
        root = lines[0] if lines and lines[0].startswith("/") else dirs[0]
        head = lines[1] if len(lines) > 1 and _OID.match(lines[1]) else None
        return {"git": {"root": root, "head": head, **parsed}}
