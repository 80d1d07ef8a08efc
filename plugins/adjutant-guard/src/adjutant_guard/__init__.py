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

from ._limits import DEFAULT_MAX_STEPS

if _typing.TYPE_CHECKING:  # keep the public names exactly __all__
    from collections.abc import Callable

    from adjutant_hookspecs import Policy, PolicyRequest, Verdict

    from ._policy import Rules

__all__ = ["DEFAULT_MAX_STEPS", "Guard", "register_policies"]


class Guard:
    """The ``guard`` policy. The rules (patterns, resolution, inode tables) load on
    the first call, not when the kernel loads the plugin: start-up stays cheap.

    :param max_steps: Tool calls one run may make; the next one is refused.
    """

    name = "guard"
    description = ("path cages on resolved paths, secrets and protected files refused, no "
                   "privilege escalation (sudo, su, doas, pkexec, run0), no network without "
                   "a grant, a step limit and a pause when a call repeats")

    def __init__(self, *, max_steps: int = DEFAULT_MAX_STEPS) -> None:
        if not isinstance(max_steps, int) or isinstance(max_steps, bool) or max_steps < 1:
            raise ValueError(f"max_steps must be a positive integer, got {max_steps!r}")
        self.max_steps = max_steps
        self._rules: Rules | None = None

    def __repr__(self) -> str:
        return f"Guard(max_steps={self.max_steps})"

    def _loaded(self) -> Rules:
        if self._rules is None:
            from ._policy import Rules

            self._rules = Rules(max_steps=self.max_steps)
        return self._rules

    async def evaluate(self, request: PolicyRequest) -> Verdict:
        """The guard's verdict on one call (see `judge`)."""
        return self._loaded().judge(request)

    def judge(self, request: PolicyRequest) -> Verdict:
        """The verdict, synchronously: ``evaluate`` without the coroutine."""
        return self._loaded().judge(request)


@_hookimpl
def register_policies(register: Callable[[Policy], None]) -> None:
    """Hand the kernel the guard, with its default limits."""
    register(Guard())
