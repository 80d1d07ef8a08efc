"""Files that join a prompt: may this file be sent to the model, and under what name?

A role's skill file, a selected file, a build file read for the project's name: each
is named by something in the workspace, which the model's output and the repository
itself can shape. `PromptFiles` is the one check every source of such files applies,
on the file's *resolved* path, so a folder or file linked out of the workspace
(``ln -s ~/Documents .adjutant/skills``) sends nothing:

- the real path (every link resolved, parents included) lies inside one of the cages;
- the deny rules do not protect it, under the name it was reached by or its real path,
  nor is it a hard link to a protected file (`Shield.read_refusal`);
- the cage rules (`CAGE_RULES`, relative to the cage it is in) do not protect it, but
  for Adjutant's own folder ``.adjutant/``, where skill files live;
- it is a regular file with exactly one link (see `PromptFiles.judge` for why);
- what is read is what was judged: the file is opened at its real path without
  following a link, judged again on that descriptor, and the descriptor's own path
  must still be the real path.

What the user is shown is the real path (`PromptFile.shown`), never only the name it
was reached by.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ._rules import Protection, cage_protection

if TYPE_CHECKING:
    from . import Shield

__all__ = ["PromptFile", "PromptFileRefused", "PromptFiles"]

#: The most a prompt file may hold unless the caller says otherwise.
MAX_BYTES = 256 * 1024
#: The cage rule that keeps in-process tools out of ``.adjutant/``: skill files live
#: there on purpose, so it does not apply to them (``.adjutant-*.tmp`` still does).
_OWN_FOLDER = "**/.adjutant/**"


class PromptFileRefused(PermissionError):
    """A file that may not join a prompt; the message says why (and the path)."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(reason)
        self.path = path
        self.reason = reason


@dataclass(frozen=True, slots=True)
class PromptFile:
    """A file admitted to a prompt, as read."""

    #: The absolute path it was reached by (links not resolved).
    named: str
    #: The absolute path it really is (every link resolved): what was read.
    real: str
    #: The cage it lies in (resolved).
    cage: str
    data: bytes

    @property
    def shown(self) -> str:
        """The real path relative to its cage (``docs/review.md``): what the user sees."""
        return os.path.relpath(self.real, self.cage)


class PromptFiles:
    """The check for files joining a prompt, for one set of cages.

    :param cages: Directories a prompt file must lie in once resolved (the workspace
        for a role's skill file). None given: nothing is admitted.
    :param home: The user's home, for the deny rules (the process's own is added).
    :param data_home: Adjutant's data directory (protected).
    """

    def __init__(self, cages: Sequence[str], *, home: str = "", data_home: str = "") -> None:
        from . import Shield

        self.cages = tuple(dict.fromkeys(os.path.realpath(c) for c in cages if c))
        self.shield: Shield = Shield(home, data_home, tool="a prompt")
        self.cage_rules = Protection([r for r in cage_protection().rules
                                      if r.source != _OWN_FOLDER])

    def cage_of(self, real: str) -> str | None:
        """The cage ``real`` (a resolved path) lies in, or None."""
        for cage in self.cages:
            if real == cage or real.startswith(cage.rstrip("/") + "/"):
                return cage
        return None

    def judge(self, named: str, real: str, st: os.stat_result) -> str | None:
        """Why the file reached as ``named``, resolving to ``real`` with ``st`` (its
        ``stat``, links followed), may not join a prompt, or None.

        Hard links: a second name of a file has no link to follow, and nothing in the
        workspace says where the other names are. The protected-inode table
        (`Shield.read_refusal`) knows only the protected places with fixed names
        (``~/.ssh``, ``~/.aws``...), not ``~/Documents/passwords.md``. So the strictest
        rule that can be checked is the one applied: a prompt file has exactly one
        link. It does not break ordinary repositories: git checks files out with one
        link, editors and ``cp`` write files with one; only a deliberate ``ln``, a
        hard-linking backup (``cp -al``, ``rsync --link-dest``) or a package store
        (pnpm, nix) make more, and none of those is where a skill file lives. The
        refusal says how to fix it (a copy of the file).
        """
        cage = self.cage_of(real)
        if cage is None:
            where = ", ".join(self.cages) or "no workspace is set"
            via = f" (it resolves to {real})" if real != named else ""
            return (f"{named}{via} lies outside the workspace ({where}): copy the file "
                    "into the workspace instead of linking to it")
        if reason := self.shield.read_refusal(named, st):  # as named and as resolved
            return reason
        relative = os.path.relpath(real, cage)
        if relative != "." and (hit := self.cage_rules.match(
                ("/" + relative.casefold(),), write=True)):
            rule, _ = hit
            return f"{real} matches {rule.source}, protected as {rule.label}"
        if not stat.S_ISREG(st.st_mode):
            return f"{real} is not a regular file"
        if st.st_nlink != 1:
            return (f"{real} has {st.st_nlink} hard links: Adjutant cannot tell where the "
                    "others are (one may be a secret outside the workspace), so it sends "
                    "none; replace it with a copy (cp FILE FILE.new && mv FILE.new FILE)")
        return None

    def refusal(self, path: str | os.PathLike[str]) -> str | None:
        """Why the file at ``path`` may not join a prompt, or None (for a listing: the
        same checks as `read`, nothing read). A missing file is refused."""
        try:
            file = self._open(path)
        except PromptFileRefused as exc:
            return exc.reason
        except OSError as exc:
            return f"{os.fspath(path)} cannot be read ({exc.strerror or exc})"
        os.close(file[0])
        return None

    def read(self, path: str | os.PathLike[str], limit: int = MAX_BYTES) -> PromptFile:
        """The file at ``path``, admitted and read (at most ``limit`` bytes).

        :raises PromptFileRefused: the checks refuse it (the message says why), or it is
            larger than ``limit``.
        :raises OSError: it cannot be opened or read.
        """
        fd, named, real, cage = self._open(path)
        with os.fdopen(fd, "rb") as handle:
            data = handle.read(limit + 1)
        if len(data) > limit:
            raise PromptFileRefused(named, f"{real} is larger than {limit:,} bytes: "
                                    "shorten it")
        return PromptFile(named, real, cage, data)

    def shown(self, path: str | os.PathLike[str]) -> str:
        """Where ``path`` really is, as the user should see it: relative to its cage
        when it lies in one, else absolute (resolved)."""
        real = os.path.realpath(path)
        cage = self.cage_of(real)
        return os.path.relpath(real, cage) if cage is not None else real

    def _open(self, path: str | os.PathLike[str]) -> tuple[int, str, str, str]:
        """(descriptor, named, real, cage) of an admitted file, opened for reading."""
        named = os.path.abspath(os.fspath(path))
        if "\x00" in named:
            raise PromptFileRefused(named, f"{named!r} is not a path")
        real = os.path.realpath(named)
        # judged before it is opened (opening a device or a FIFO can act), then again
        # on the descriptor: what is read is what was judged
        if reason := self.judge(named, real, os.stat(real)):
            raise PromptFileRefused(named, reason)
        fd = os.open(real, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        try:
            reason = self.judge(named, real, os.fstat(fd))
            if reason is None and (opened := _fd_path(fd)) not in (None, real):
                reason = f"{named} moved while it was checked (now {opened})"
            if reason is not None:
                raise PromptFileRefused(named, reason)
        except BaseException:
            os.close(fd)
            raise
        cage = self.cage_of(real)
        assert cage is not None  # judged above
        return fd, named, real, cage


def _fd_path(fd: int) -> str | None:
    """The path the kernel has for an open descriptor (None where /proc is missing)."""
    with contextlib.suppress(OSError):
        return os.readlink(f"/proc/self/fd/{fd}")
    return None
