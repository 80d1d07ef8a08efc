"""The guard reads roles with the public helper every policy author uses."""

import adjutant_hookspecs
from adjutant_guard import _policy


def test_the_guard_uses_the_public_role_walker() -> None:
    assert _policy.role_values is adjutant_hookspecs.role_values
    assert _policy.RoleProblem is adjutant_hookspecs.RoleProblem
