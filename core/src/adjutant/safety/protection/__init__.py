"""The deny rules: what no tool may read or write, whatever route reaches the file.

The guard policy judges the paths a call *names*. That is not enough for a tool that
finds files by itself (a recursive search, a glob, an archive of a directory, git
following its work tree) or writes paths hidden inside an argument (a patch's
headers), nor for a sandboxed command, which can open anything it can see. Those
apply the same rules through `Shield`:

- ``Shield.read_refusal(path)`` before a byte of a file it found is read or returned
  (protected names and patterns, hard links to protected files);
- ``Shield.write_refusal(path)`` for every path a structured argument names;
- `cage_refusal` (`CAGE_RULES`) for every path an in-process file tool resolves
  below a cage (adjutant-files): names refused there at any depth, reads and writes;
- `confined_repository` and `audit_git_config` before git is trusted with a
  repository (the git tools, the context bulletin): git only prints where the
  repository lies and which configuration it reads; outside the cages, refused;
- `PromptFiles` before a file joins a prompt (a role's skill file, a selected file, a
  build file): its resolved path inside the cages, the deny rules and the cage rules on
  it, one hard link only; the user is shown where it really is;
- `sandbox_layout` (in `adjutant.safety.sandbox`) hides the secrets and binds the
  protected files read-only inside a sandbox's writable cages.

The rules themselves (`DEFAULT_RULES`) are data; `protection` compiles them for a
home and a data home, and `protected_inodes` finds the hard-link twins.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Sequence
from typing import Any

from ._globs import Glob
from ._inodes import ProtectedFile, protected_inodes
from ._prompt import PromptFile, PromptFileRefused, PromptFiles
from ._repo import (
    GIT_CONFIG_LISTING,
    GIT_ENV,
    GIT_OVERRIDES,
    GIT_WHERE,
    GitRefusal,
    audit_git_config,
    confined_repository,
    git_location,
    inside,
    refuse_special_files,
    refuse_special_files_near,
    special_files_below,
)
from ._rules import (
    CAGE_RULES,
    DEFAULT_RULES,
    Protection,
    Rule,
    RuleSpec,
    allowed_globs,
    cage_protection,
    protection,
)

__all__ = ["CAGE_RULES", "DEFAULT_RULES", "GIT_CONFIG_LISTING", "GIT_ENV", "GIT_OVERRIDES",
           "GIT_WHERE", "GitRefusal", "Glob", "PromptFile", "PromptFileRefused", "PromptFiles",
           "ProtectedFile", "Protection", "Rule", "RuleSpec",
           "Shield", "allowed_globs", "audit_git_config", "cage_refusal", "confined_repository",
           "git_location", "home_bases", "inside", "protected_inodes", "protection",
           "refuse_special_files", "refuse_special_files_near", "special_files_below"]


def cage_refusal(parts: Sequence[str]) -> str | None:
    """Why the path ``parts`` (its components below a cage root) is refused to an
    in-process file tool, for reading and writing alike (`CAGE_RULES`), or None.

    Purely lexical, so a path that does not exist yet is judged too; compared
    case-insensitively (each component case-folded, then matched ignoring case).
    """
    if not parts:
        return None
    relative = "/".join(parts)
    if hit := cage_protection().match(("/" + relative.casefold(),), write=True):
        rule, _ = hit
        return f"{relative} matches {rule.source}, protected as {rule.label}"
    return None


def home_bases(paths: Iterable[object]) -> tuple[str, ...]:
    """Absolute directories as written (normalised) and as resolved: both spellings
    of a home are protected."""
    out: list[str] = []
    for path in paths:
        if isinstance(path, str) and path.startswith("/") and "\x00" not in path:
            out += [os.path.normpath(path), os.path.realpath(path)]
    return tuple(dict.fromkeys(out))


class Shield:
    """The deny rules for one call, applied to files the tool reaches by itself.

    :param home: The user's home (the process's own is always added).
    :param data_home: Adjutant's data directory.
    :param forbid: A tool's own ``forbid_patterns`` (refused for reads and writes).
    """

    def __init__(self, home: str = "", data_home: str = "", forbid: Sequence[str] = (),
                 tool: str = "the tool") -> None:
        self.homes = home_bases((home, os.path.expanduser("~")))
        self.data_homes = home_bases((data_home,))
        self.rules = protection(self.homes, self.data_homes, tuple(forbid), tool)
        self._inodes: dict[tuple[int, int], ProtectedFile] | None = None

    @classmethod
    def for_context(cls, ctx: Any, declaration: Any = None) -> Shield:
        """The shield of a `ToolContext` (its home and data home) and a declaration."""
        forbid = tuple(declaration.safety.forbid_patterns) if declaration is not None else ()
        tool = declaration.name if declaration is not None else "the tool"
        return cls(getattr(ctx, "home", ""), getattr(ctx, "data_home", ""), forbid, tool)

    @staticmethod
    def names(path: str) -> tuple[str, ...]:
        """``path`` as written (absolute, normalised) and with every link resolved."""
        lexical = os.path.normpath(path)
        return tuple(dict.fromkeys((lexical, os.path.realpath(lexical))))

    def twin(self, st: os.stat_result) -> ProtectedFile | None:
        """The protected file that ``st`` is another hard link of, if any."""
        if not stat.S_ISREG(st.st_mode) or st.st_nlink < 2:
            return None
        if self._inodes is None:
            self._inodes = protected_inodes(self.homes, self.data_homes)
        return self._inodes.get((st.st_dev, st.st_ino))

    def read_refusal(self, path: str, st: os.stat_result | None = None) -> str | None:
        """Why reading the file at absolute ``path`` is refused, or None.

        ``st`` is the file's ``stat`` if the caller has it (the file itself, links
        followed); without it the file is stat'ed here, and one that cannot be is
        judged by its names alone.
        """
        if hit := self.rules.match(self.names(path), write=False):
            rule, _ = hit
            return f"{path} matches {rule.source}, protected as {rule.label}"
        if st is None:
            try:
                st = os.stat(path)
            except (OSError, ValueError):
                return None
        if (twin := self.twin(st)) is not None and twin.reads:
            return f"{path} is a hard link to {twin.path}, protected as {twin.label}"
        return None

    def write_refusal(self, path: str) -> str | None:
        """Why writing, creating, replacing or deleting absolute ``path`` is refused."""
        names = self.names(path)
        if hit := self.rules.match(names, write=True):
            rule, _ = hit
            return f"{path} matches {rule.source}, protected as {rule.label}"
        try:
            st = os.lstat(names[-1])
        except (OSError, ValueError):
            return None
        if stat.S_ISDIR(st.st_mode) and (inside := self.rules.below(names[-1])):
            rule, anchor = inside
            return f"{path} holds {anchor}, protected as {rule.label}"
        if (twin := self.twin(st)) is not None:
            return f"{path} is a hard link to {twin.path}, protected as {twin.label}"
        return None
