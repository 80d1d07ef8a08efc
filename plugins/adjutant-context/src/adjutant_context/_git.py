"""``git``: the repository state of the cwd, from git run in the OS sandbox.

git reads the repository's own configuration, which could name programs to run
(fsmonitor, hooks, pagers...); it therefore never runs outside `adjutant.safety.sandbox`
(read-only root, no network, clean environment), with no system or global
configuration and every run-a-program key we can override overridden. Without
bubblewrap the provider contributes nothing.

Nor does it follow a repository out of itself: the bulletin is gathered before any
question, so git first only prints where the repository is and which configuration
files it reads, and the provider applies the git tools' own checks
(`adjutant.safety.protection.confined_repository` and `audit_git_config`) with the directory
holding the ``.git`` that ``cwd`` belongs to as the cage. A work tree
(``core.worktree``), git directory (a ``.git`` file), ``commondir``, alternates or
included configuration file outside it, or a key that makes git run a program
(a filter), and the bulletin has no ``git`` at all. Linked worktrees and submodules
(their git directory lies in another repository) get none either. The runs that
follow are pinned with ``--git-dir`` and ``--work-tree`` to what was checked.
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
_OID = re.compile(r"^[0-9a-f]{40}([0-9a-f]{24})?$")


def argv(args: Sequence[str]) -> list[str]:
    from adjutant.safety.protection import GIT_OVERRIDES

    line = ["git", "--no-pager"]
    for key, value in GIT_OVERRIDES:
        line += ["-c", f"{key}={value}"]
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
        from adjutant.safety import sandbox
        from adjutant.safety.protection import GIT_ENV

        return await sandbox.run(argv(args), cwd=cwd, timeout=self.timeout, readable=readable,
                                 unchecked_env=GIT_ENV, max_output=256 * 1024)

    async def collect(self, cwd: str) -> Mapping[str, Any]:
        from adjutant.safety import sandbox
        from adjutant.safety.protection import (
            GIT_CONFIG_LISTING,
            GIT_WHERE,
            GitRefusal,
            audit_git_config,
            confined_repository,
            git_location,
            refuse_special_files_near,
        )

        found = sandbox.repository_dirs(cwd)
        if not found or sandbox.available() is not None:
            return {}  # never run git on a repository unsandboxed
        cage = found[:1]  # the directory holding the `.git` cwd belongs to
        try:
            refuse_special_files_near(found)
        except GitRefusal as refusal:  # shown, not silently dropped
            return {"git": {"root": found[0], "unavailable": refusal.detail}}
        where = await self._git(GIT_WHERE, cwd, found)
        if where.returncode != 0:
            return {}
        try:
            top, git_dir, common = confined_repository(cwd, where.stdout.splitlines(), cage)
            pin = git_location(git_dir, top)
            dirs = list(dict.fromkeys((top, git_dir, common)))
            listing = await self._git([*pin, *GIT_CONFIG_LISTING], cwd, dirs)
            if listing.returncode != 0:
                return {}
            audit_git_config(listing.stdout, cwd, cage)
        except GitRefusal as refusal:
            if refusal.rule == "special-file":  # said; its path is inside the repository
                return {"git": {"root": found[0], "unavailable": refusal.detail}}
            return {}  # git would read outside the repository (never named), or run a program
        status = await self._git([*pin, "status", "--porcelain=v1", "--branch"], cwd, dirs)
        if status.timed_out:  # a FIFO named .gitignore in a folder, say
            from adjutant.safety.protection import special_files_below

            found = special_files_below(top)
            return {"git": {"root": top, "unavailable": f"git status did not finish in "
                            f"{self.timeout:g} s" + (f": {', '.join(found)} would make "
                                                     "git wait forever" if found else "")}}
        if status.returncode != 0:
            return {}
        parsed = parse_status(status.stdout)
        head = (await self._git([*pin, "rev-parse", "-q", "--verify", "HEAD^{commit}"], cwd,
                                dirs)).stdout.strip()
        return {"git": {"root": top, "head": head if _OID.match(head) else None, **parsed}}
