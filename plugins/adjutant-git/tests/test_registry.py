"""registry/tools/<name>.json is exactly each tool's declaration, one file per tool.

To regenerate after changing a declaration::

    .venv/bin/python -c "import adjutant_git, pathlib; from adjutant_hookspecs import encode; \
[pathlib.Path('plugins/adjutant-git/registry/tools', c.declaration.name + '.json') \
.write_bytes(encode(c.declaration) + b'\\n') for c in adjutant_git.TOOLS]"
"""

from pathlib import Path
from typing import Any

import pytest

import adjutant_git
from adjutant_hookspecs import ARG_ROLE, ToolDeclaration, decode, encode

REGISTRY = Path(__file__).parents[1] / "registry" / "tools"


def test_one_file_per_tool() -> None:
    names = sorted(cls.declaration.name + ".json" for cls in adjutant_git.TOOLS)
    assert sorted(p.name for p in REGISTRY.iterdir()) == names


@pytest.mark.parametrize("cls", adjutant_git.TOOLS, ids=lambda c: c.declaration.name)
def test_file_equals_declaration(cls: Any) -> None:
    data = (REGISTRY / f"{cls.declaration.name}.json").read_bytes()
    assert data == encode(cls.declaration) + b"\n"
    assert decode(data, ToolDeclaration) == cls.declaration


@pytest.mark.parametrize("cls", adjutant_git.TOOLS, ids=lambda c: c.declaration.name)
def test_declaration_is_documented(cls: Any) -> None:
    """Every property described, 2+ examples, natural-language requests in the schema."""
    declaration = cls.declaration
    schema = declaration.args_schema
    assert schema["additionalProperties"] is False
    assert all(prop.get("description") for prop in schema["properties"].values())
    assert len(declaration.examples) >= 2
    requests = schema["x-adjutant-requests"]
    assert len(requests) >= 2 and all(isinstance(r, str) and r for r in requests)


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
