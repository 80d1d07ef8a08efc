"""Roles: the user picks one; it names a skill file in the workspace, added to the
system prompt of that request and listed in the Context Stack.

A role ``reviewer`` resolves to ``.adjutant/skills/reviewer.md``, else to
``.github/skills/Reviewer_SKILL.md`` (the prefix matched without regard to case).
A role whose file is missing, unreadable, not UTF-8, too large, or outside those
folders blocks the request with a message saying what to create: never a silent
substitute. "Outside" is judged on the file's real path against the workspace's real
path joined with the folder names as written: a linked ``.adjutant``, a linked
``skills`` folder or a linked file leading anywhere else is refused, and so is a file
the deny rules protect (a hard link to ``~/.ssh/id_rsa`` among them). The path shown
is the real one.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path
from typing import Any

import attrs

from adjutant.safety.protection import Shield
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


def _admitted(workspace: Path, path: Path, shield: Shield | None) -> tuple[Path, str | None]:
    """``path``'s real path, and why it may not join a prompt (None: it may)."""
    real, root = path.resolve(), workspace.resolve()
    folders = [root / ".adjutant" / "skills", root / ".github" / "skills"]  # as written
    if not any(real.is_relative_to(folder) for folder in folders):
        return real, (f"{path} leads to {real}, outside the workspace's skill folders "
                      f"(.adjutant/skills, .github/skills in {root}): replace the link "
                      "with the file")
    if shield is not None and (why := shield.read_refusal(str(real))) is not None:
        return real, f"{path}: {why}"
    return real, None


def list_roles(workspace: Path, shield: Shield | None = None) -> list[dict[str, str]]:
    """The roles whose skill files exist and may join a prompt, by name (the first
    place wins), each with its real path in the workspace."""
    ours, github = _folders(workspace)
    found: dict[str, str] = {}
    named = [(p.stem.lower(), p) for p in sorted(ours.glob("*.md"))] if ours.is_dir() else []
    if github.is_dir():
        named += [(p.name[:-len("_SKILL.md")].lower(), p)
                  for p in sorted(github.glob("*_SKILL.md"))]
    root = workspace.resolve()
    for role, path in named:
        real, refused = _admitted(workspace, path, shield)
        if refused is None and real.is_file():
            found.setdefault(role, str(real.relative_to(root)))
    return [{"role": r, "path": p} for r, p in sorted(found.items()) if ROLE.match(r)]


def resolve(workspace: Path, role: str, shield: Shield | None = None) -> Skill:
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
        real, refused = _admitted(workspace, path, shield)
        if refused is not None:
            raise RoleError(f"the skill file for role {role!r} may not join the prompt: "
                            f"{refused}")
        try:
            with open_regular(real) as handle:  # never a FIFO or device: it would block
                raw = handle.read()
                st = os.fstat(handle.fileno())
            if shield is not None and (why := shield.read_refusal(str(real), st)):
                raise RoleError(f"the skill file for role {role!r} may not join the "
                                f"prompt: {why}")  # the file opened, judged again
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
        return Skill(role, str(real.relative_to(workspace.resolve())), text,
                     hashlib.sha256(raw).hexdigest())
    raise RoleError(f"no skill file for role {role!r}: create "
                    f".adjutant/skills/{role.lower()}.md (or .github/skills/"
                    f"{role.capitalize()}_SKILL.md) in {workspace}, or choose no role")


def system_prompt(base: str, skill: Skill) -> str:
    """The profile's system prompt with the role's skill after it."""
    return (f"{base}\n\n# Role: {skill.role}\nThe user chose this role; follow its skill "
            f"file ({skill.path}):\n\n{skill.text.strip()}\n")
