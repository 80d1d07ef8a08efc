"""``guard``: Adjutant's default safety policy (see README.md for every rule).

Registers one policy, `Guard`, named ``guard``: path cages on resolved paths, deny
patterns that hold in every mode, no privilege escalation, no network without a
grant, and the run guardrails (max steps, the same call three times). It is a
string-and-``lstat`` check that decides when to ask or refuse; what a tool can
really do is decided by the OS sandbox.

Importing this module stays cheap: patterns compile on first use.
"""

from __future__ import annotations

import typing as _typing

from adjutant_hookspecs import hookimpl as _hookimpl

from ._policy import DEFAULT_MAX_STEPS, Guard

if _typing.TYPE_CHECKING:  # keep the public names exactly __all__
    from collections.abc import Callable

    from adjutant_hookspecs import Policy

__all__ = ["DEFAULT_MAX_STEPS", "Guard", "register_policies"]


@_hookimpl
def register_policies(register: Callable[[Policy], None]) -> None:
    """Hand the kernel the guard, with its default limits."""
    register(Guard())
