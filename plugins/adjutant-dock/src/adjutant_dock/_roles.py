"""Roles: the user picks one; it names a skill file in the workspace, added to the
system prompt of that request and listed in the Context Stack.

A role ``reviewer`` is named by ``.adjutant/skills/reviewer.md``, else by
``.github/skills/Reviewer_SKILL.md`` (the prefix matched without regard to case).
Whatever name finds it, the file must pass core's check for files joining a prompt
(`adjutant.safety.protection.PromptFiles`) on its *resolved* path: inside the
workspace once every link is resolved (a skill folder, or ``.adjutant`` itself, linked
to ``~/Documents`` is outside), not protected by the deny rules or the cage rules, and
one hard link only (a second name of ``~/.ssh/id_rsa`` has no link to follow). The
Context Stack and ``/api/roles`` show where the file really is.

A role whose file is missing, refused, unreadable, not UTF-8 or too large blocks the
request with a message saying what to do: never a silent substitute. ``/api/roles``
lists the refused ones apart, with the reason, and never offers them.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

if TYPE_CHECKING:
    from adjutant.safety.protection import PromptFiles
    from adjutant_hookspecs import Kernel

__all__ = ["RoleError", "Skill", "list_roles", "prompt_files", "resolve"]

ROLE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")
MAX_BYTES = 64 * 1024


class RoleError(ValueError):
    """A role that cannot be used; the message says what to do."""


@attrs.frozen
class Skill:
    role: str
    #: Where the file really is (links resolved), relative to the workspace.
    path: str
    text: str
    sha256: str
    #: The name it was found by, relative to the workspace, when that is not ``path``.
    named: str | None = None

    def summary(self) -> dict[str, Any]:
        out = {"role": self.role, "path": self.path, "bytes": len(self.text.encode()),
               "sha256": self.sha256[:16]}
        if self.named is not None:
            out["named"] = self.named
        return out


def prompt_files(kernel: Kernel, workspace: str) -> PromptFiles:
    """Core's check for files joining a prompt, caged to the workspace, with the
    kernel's home and data home for the deny rules."""
    from adjutant.safety.protection import PromptFiles

    return PromptFiles([workspace], home=kernel.env.get("HOME") or "",
                       data_home=str(kernel.home))


def _folders(workspace: Path) -> tuple[Path, Path]:
    return workspace / ".adjutant" / "skills", workspace / ".github" / "skills"


def _named(workspace: Path) -> dict[str, list[Path]]:
    """Each role and the files that name it, in order of preference."""
    ours, github = _folders(workspace)
    found: dict[str, list[Path]] = {}
    for path in sorted(ours.glob("*.md")) if ours.is_dir() else []:
        found.setdefault(path.stem.lower(), []).append(path)
    for path in sorted(github.glob("*_SKILL.md")) if github.is_dir() else []:
        found.setdefault(path.name[:-len("_SKILL.md")].lower(), []).append(path)
    return {role: paths for role, paths in sorted(found.items()) if ROLE.match(role)}


def list_roles(workspace: Path, files: PromptFiles) -> tuple[list[dict[str, str]],
                                                              list[dict[str, str]]]:
    """The roles whose skill file may join a prompt (``{role, path}``, ``path`` where
    the file really is, plus ``named`` when it was found under another name), and the
    refused ones (``{role, named, reason}``)."""
    roles: list[dict[str, str]] = []
    refused: list[dict[str, str]] = []
    for role, paths in _named(workspace).items():
        path = paths[0]  # the first place wins, as in `resolve`
        named = os.path.relpath(path, workspace)
        reason = files.refusal(path)
        if reason is not None:
            refused.append({"role": role, "named": named, "reason": reason})
            continue
        shown = files.shown(path)
        roles.append({"role": role, "path": shown, **({"named": named}
                                                      if named != shown else {})})
    return roles, refused


def resolve(workspace: Path, role: str, files: PromptFiles) -> Skill:
    """The skill file of ``role``, admitted by ``files`` and read."""
    from adjutant.safety.protection import PromptFileRefused

    if not isinstance(role, str) or not ROLE.match(role):
        raise RoleError(f"role {role!r}: letters, digits, - and _ only (it names a file)")
    ours, github = _folders(workspace)
    candidates = [ours / f"{role.lower()}.md", ours / f"{role}.md"]
    if github.is_dir():
        candidates += [p for p in sorted(github.glob("*_SKILL.md"))
                       if p.name[:-len("_SKILL.md")].lower() == role.lower()]
    for path in candidates:
        if not path.exists():
            continue
        named = os.path.relpath(path, workspace)
        try:
            file = files.read(path, MAX_BYTES)
        except PromptFileRefused as exc:
            raise RoleError(f"the skill file for role {role!r} ({named}) may not join the "
                            f"prompt: {exc.reason}") from None
        except OSError as exc:
            raise RoleError(f"the skill file for role {role!r} cannot be read ({named}: "
                            f"{exc.strerror or exc}): fix its permissions") from None
        try:
            text = file.data.decode()
        except UnicodeDecodeError:
            raise RoleError(f"the skill file for role {role!r} is not UTF-8 text: "
                            f"{file.shown}") from None
        return Skill(role, file.shown, text, hashlib.sha256(file.data).hexdigest(),
                     named if named != file.shown else None)
    raise RoleError(f"no skill file for role {role!r}: create "
                    f".adjutant/skills/{role.lower()}.md (or .github/skills/"
                    f"{role.capitalize()}_SKILL.md) in {workspace}, or choose no role")


def system_prompt(base: str, skill: Skill) -> str:
    """The profile's system prompt with the role's skill after it."""
    return (f"{base}\n\n# Role: {skill.role}\nThe user chose this role; follow its skill "
            f"file ({skill.path}):\n\n{skill.text.strip()}\n")
