"""`adjutant new plugin NAME --kind K` writes a package whose own tests pass at once
(run as its author would: pytest in the package, the package on the path)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from adjutant.cli._new import KINDS, generate

ADJUTANT = str(Path(sys.executable).with_name("adjutant"))


@pytest.mark.parametrize("kind", KINDS)
def test_the_generated_package_passes_its_own_tests(tmp_path: Path, kind: str) -> None:
    done = subprocess.run([ADJUTANT, "new", "plugin", f"my_{kind}", "--kind", kind,
                           "--dest", str(tmp_path)], capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    root = tmp_path / f"adjutant-my-{kind}"
    assert f"created {root}" in done.stdout
    assert {p.name for p in root.iterdir()} == {"pyproject.toml", "README.md", "src", "tests"}
    assert (root / "src" / f"adjutant_my_{kind}" / "py.typed").exists()
    env = {**os.environ, "PYTHONPATH": str(root / "src")}
    env.pop("PYTEST_ADDOPTS", None)
    tests = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
                           cwd=root, env=env, capture_output=True, text=True, timeout=300,
                           check=False)
    assert tests.returncode == 0, tests.stdout[-3000:] + tests.stderr[-2000:]
    assert " passed" in tests.stdout and "skipped" not in tests.stdout


def test_bad_names_and_existing_directories_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="must be lower case"):
        generate("My-Plugin", "tool", tmp_path)
    with pytest.raises(ValueError, match="unknown kind"):
        generate("ok", "frontend", tmp_path)
    generate("ok", "tool", tmp_path)
    with pytest.raises(FileExistsError):
        generate("ok", "tool", tmp_path)
    done = subprocess.run([ADJUTANT, "new", "plugin", "ok", "--dest", str(tmp_path)],
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 2 and "already exists" in done.stderr


TEMPLATE = Path(__file__).parents[2] / "plugins" / "_template"


@pytest.mark.skipif(not TEMPLATE.is_dir(), reason="plugins/_template is in the repository only")
def test_the_template_plugin_has_the_tests_new_plugin_writes(tmp_path: Path) -> None:
    """plugins/_template and `adjutant new plugin template --kind tool` teach the same
    tests: change one, change the other (copy the generated files over the template's)."""
    root = generate("template", "tool", tmp_path)
    written = {p.name: p.read_text() for p in (root / "tests").iterdir()}
    template = {p.name: p.read_text() for p in (TEMPLATE / "tests").iterdir()
                if p.suffix == ".py"}
    assert sorted(template) == sorted(written)
    for name, text in written.items():
        assert template[name] == text, f"plugins/_template/tests/{name} differs"

