"""Which live grant, if any, answers a write step's question (`adjutant.safety.standing`
says what the grants mean)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from adjutant_hookspecs import RoleProblem, is_write, role_values

from ..safety.standing import grantable, standing_grant_for

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ._pipeline import CheckedStep

__all__ = ["standing_grant"]

#: The askers a standing grant answers: the mode gate and the write-gate. The guard
#: honours the grant itself (its baseline ask becomes an allow); any other ask stays.
ANSWERED = frozenset({"mode", "write-gate"})


def standing_grant(step: CheckedStep, grants: Sequence[str], cwd: str) -> str | None:
    """The live grant that answers this step's question, or None (ask the user)."""
    declaration = step.declaration
    if declaration is None or not step.needs_approval or not is_write(declaration):
        return None
    if any(v.decision == "ask" and v.policy not in ANSWERED for v in step.verdicts):
        return None  # someone else asks too: that question is the user's
    try:
        values = role_values(declaration.args_schema, step.call.args)
    except RoleProblem:
        return None
    paths = [v.value for v in values if v.role == "path"]
    allowed = grantable(declaration.safety.level, (v.role for v in values))
    return standing_grant_for(step.call.tool, paths, cwd, grants, allowed=allowed)
