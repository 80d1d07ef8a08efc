"""registry/tools/<name>.json is exactly each tool's declaration, one file per tool.

To regenerate after changing a declaration::

    from adjutant.testing.plugin_checks import write_registry
    from adjutant_memory._tool import NoteTool, RememberTool
    write_registry(Path("plugins/adjutant-memory/registry/tools"), [RememberTool, NoteTool])
"""

from pathlib import Path

from adjutant.testing.plugin_checks import assert_registry_matches
from adjutant_memory._tool import NoteTool, RememberTool

REGISTRY = Path(__file__).parents[1] / "registry" / "tools"


def test_registry_files_equal_the_declarations() -> None:
    assert_registry_matches(REGISTRY, [RememberTool, NoteTool])
