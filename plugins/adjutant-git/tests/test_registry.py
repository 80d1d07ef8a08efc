"""registry/tools/<name>.json is exactly each tool's declaration, one file per tool.

To regenerate after changing a declaration::

    from adjutant.testing.plugin_checks import write_registry
    write_registry(Path("plugins/adjutant-git/registry/tools"), adjutant_git.TOOLS)
"""

from pathlib import Path
from typing import Any

import pytest

import adjutant_git
from adjutant.testing.plugin_checks import assert_documented, assert_registry_matches
from adjutant_hookspecs import ARG_ROLE

REGISTRY = Path(__file__).parents[1] / "registry" / "tools"


def test_registry_files_equal_the_declarations() -> None:
    assert_registry_matches(REGISTRY, adjutant_git.TOOLS)


@pytest.mark.parametrize("cls", adjutant_git.TOOLS, ids=lambda c: c.declaration.name)
def test_declaration_is_documented(cls: Any) -> None:
    """Every property described, 2+ examples, natural-language requests in the schema."""
    assert_documented(cls.declaration)


def test_roles_and_safety_are_honest() -> None:
    by_name = {cls.declaration.name: cls.declaration for cls in adjutant_git.TOOLS}
    assert by_name["git.diff"].args_schema["properties"]["paths"][ARG_ROLE] == "paths"
    assert by_name["git.log"].args_schema["properties"]["path"][ARG_ROLE] == "path"
    levels = {name: (d.safety.level, d.safety.writes, d.safety.network)
              for name, d in by_name.items()}
    assert levels == {
        "git.status": ("read", False, False),
        "git.diff": ("read", False, False),
        "git.log": ("read", False, False),
        "git.commit": ("write", True, False),
        "git.branch": ("write", True, False),
        "git.switch": ("write", True, False),
    }
