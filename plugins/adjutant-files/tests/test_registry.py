"""registry/tools/<name>.json is exactly each tool's declaration, one file per tool.

To regenerate after changing a declaration::

    from adjutant.testing.plugin_checks import write_registry
    write_registry(Path("plugins/adjutant-files/registry/tools"), adjutant_files.TOOLS)
"""

from pathlib import Path

import adjutant_files
from adjutant.testing.plugin_checks import assert_registry_matches

REGISTRY = Path(__file__).parents[1] / "registry" / "tools"


def test_registry_files_equal_the_declarations() -> None:
    assert_registry_matches(REGISTRY, adjutant_files.TOOLS)


