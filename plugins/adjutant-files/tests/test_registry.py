"""registry/tools/<name>.json is exactly each tool's declaration, one file per tool.

To regenerate after changing a declaration::

    .venv/bin/python -c "import adjutant_files, pathlib; from adjutant_hookspecs import encode; \
[pathlib.Path('plugins/adjutant-files/registry/tools', c.declaration.name + '.json') \
.write_bytes(encode(c.declaration) + b'\\n') for c in adjutant_files.TOOLS]"
"""

from pathlib import Path

import pytest

import adjutant_files
from adjutant_hookspecs import ToolDeclaration, decode, encode

REGISTRY = Path(__file__).parents[1] / "registry" / "tools"


def test_one_file_per_tool() -> None:
    names = sorted(cls.declaration.name + ".json" for cls in adjutant_files.TOOLS)
    assert sorted(p.name for p in REGISTRY.iterdir()) == names


@pytest.mark.parametrize("cls", adjutant_files.TOOLS, ids=lambda c: c.declaration.name)
def test_file_equals_declaration(cls: type) -> None:
    data = (REGISTRY / f"{cls.declaration.name}.json").read_bytes()
    assert data == encode(cls.declaration) + b"\n"
    assert decode(data, ToolDeclaration) == cls.declaration
