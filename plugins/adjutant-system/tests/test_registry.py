"""registry/tools/<name>.json is exactly each tool's declaration, one file per tool.

To regenerate after changing a declaration::

    from adjutant.testing.plugin_checks import write_registry
    write_registry(Path("plugins/adjutant-system/registry/tools"), adjutant_system.TOOLS)
"""

from pathlib import Path
from typing import Any

import pytest

import adjutant_system
from adjutant.testing.plugin_checks import assert_documented, assert_registry_matches
from adjutant_hookspecs import ARG_ROLE

REGISTRY = Path(__file__).parents[1] / "registry" / "tools"


def test_registry_files_equal_the_declarations() -> None:
    assert_registry_matches(REGISTRY, adjutant_system.TOOLS)


@pytest.mark.parametrize("cls", adjutant_system.TOOLS, ids=lambda c: c.declaration.name)
def test_declaration_is_documented(cls: Any) -> None:
    """Every property described, 2+ examples, natural-language requests in the schema."""
    assert_documented(cls.declaration)


def test_roles_and_safety_are_honest() -> None:
    by_name = {cls.declaration.name: cls.declaration for cls in adjutant_system.TOOLS}
    assert by_name["shell.exec"].args_schema["properties"]["argv"][ARG_ROLE] == "argv"
    levels = {name: (d.safety.level, d.safety.writes, d.safety.network)
              for name, d in by_name.items()}
    assert levels == {
        "shell.exec": ("write", True, False),
        "proc.list": ("read", False, False),
        "proc.kill": ("destructive", True, False),
        "sys.info": ("read", False, False),
        "net.check_port": ("read", False, False),
    }
