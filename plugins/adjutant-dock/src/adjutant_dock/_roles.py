"""Roles: the user picks one; it names a skill file in the workspace, added to the
system prompt of that request and listed in the Context Stack.

A role ``reviewer`` resolves to ``.adjutant/skills/reviewer.md``, else to
``.github/skills/Reviewer_SKILL.md`` (the prefix matched without regard to case).
A role whose file is missing, unreadable, not UTF-8, too large, or outside those
folders (a symlink out of the workspace) blocks the request with a message saying
what to create: never a silent substitute.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any

import attrs

from adjutant.safety.regular import open_regular

__all__ = ["RoleError", "Skill", "list_roles", "resolve"]

ROLE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")
MAX_BYTES = 64 * 1024


class RoleError(ValueError):
    """A role that cannot be used; the message says what to do."""


@attrs.frozen
class Skill:
    role: str
    path: str
    text: str
    sha256: str

    def summary(self) -> dict[str, Any]:
        return {"role": self.role, "path": self.path, "bytes": len(self.text.encode()),
                "sha256": self.sha256[:16]}


def _folders(workspace: Path) -> tuple[Path, Path]:
    return workspace / ".adjutant" / "skills", workspace / ".github" / "skills"


def list_roles(workspace: Path) -> list[dict[str, str]]:
    """The roles whose skill files exist, by name (the first place wins)."""
    ours, github = _folders(workspace)
    found: dict[str, str] = {}
    for path in sorted(ours.glob("*.md")) if ours.is_dir() else []:
        found.setdefault(path.stem.lower(), str(path.relative_to(workspace)))
    for path in sorted(github.glob("*_SKILL.md")) if github.is_dir() else []:
        found.setdefault(path.name[:-len("_SKILL.md")].lower(),
                         str(path.relative_to(workspace)))
    return [{"role": r, "path": p} for r, p in sorted(found.items()) if ROLE.match(r)]


def resolve(workspace: Path, role: str) -> Skill:
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
        real = path.resolve()
        if not any(real.is_relative_to(folder.resolve()) for folder in (ours, github)):
            raise RoleError(f"the skill file for role {role!r} ({path}) leads outside the "
                            "workspace's skill folders: replace the link with the file")
        try:
            with open_regular(real) as handle:  # never a FIFO or device: it would block
                raw = handle.read()
        except OSError as exc:
            raise RoleError(f"the skill file for role {role!r} cannot be read ({path}: "
                            f"{exc.strerror or exc}): fix its permissions") from None
        if len(raw) > MAX_BYTES:
            raise RoleError(f"the skill file for role {role!r} is {len(raw):,} bytes; at "
                            f"most {MAX_BYTES:,} fit in the prompt: shorten {path}")
        try:
            text = raw.decode()
        except UnicodeDecodeError:
            raise RoleError(f"the skill file for role {role!r} is not UTF-8 text: {path}"
                            ) from None
        return Skill(role, str(path.relative_to(workspace)), text,
                     hashlib.sha256(raw).hexdigest())
    raise RoleError(f"no skill file for role {role!r}: create "
                    f".adjutant/skills/{role.lower()}.md (or .github/skills/"
                    f"{role.capitalize()}_SKILL.md) in {workspace}, or choose no role")


def system_prompt(base: str, skill: Skill) -> str:
    """The profile's system prompt with the role's skill after it."""
    return (f"{base}\n\n# Role: {skill.role}\nThe user chose this role; follow its skill "
            f"file ({skill.path}):\n\n{skill.text.strip()}\n")
