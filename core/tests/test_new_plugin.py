"""`adjutant new plugin NAME --kind K` writes a package whose own tests pass at once
(run as its author would: pytest in the package, the package on the path)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from adjutant.cli._new import KINDS, checkout_copies, generate, render

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


CHECKOUT = Path(__file__).parents[2]


@pytest.mark.skipif(not (CHECKOUT / "plugins" / "_template").is_dir(),
                    reason="plugins/_template is in the repository only")
def test_the_repository_copies_are_the_template_rendered() -> None:
    """plugins/_template is `adjutant new plugin template` byte for byte, and the
    wordcount example's packaging and common tests are the template's with its stated
    edits. After changing the template, `./dev template` rewrites them."""
    expected = checkout_copies(CHECKOUT)
    template = CHECKOUT / "plugins" / "_template"
    written = {p for p in template.rglob("*") if p.is_file() and "__pycache__" not in p.parts}
    assert written == {p for p in expected if p.is_relative_to(template)}
    assert len(expected) > len(written)  # the example's files are compared too
    for path, text in expected.items():
        assert path.read_text() == text, f"{path.relative_to(CHECKOUT)} differs: ./dev template"


def test_sources_point_at_the_checkout_relatively_inside_it(tmp_path: Path) -> None:
    inside = render("x", "tool", CHECKOUT / "plugins" / "adjutant-x")["pyproject.toml"]
    assert 'adjutant-core = { path = "../../core", editable = true }' in inside
    outside = render("x", "tool", tmp_path / "adjutant-x")["pyproject.toml"]
    assert f'adjutant-core = {{ path = "{CHECKOUT / "core"}", editable = true }}' in outside


def test_every_kind_renders_every_placeholder() -> None:
    for kind in KINDS:
        files = render("my_plugin", kind, CHECKOUT / "x")
        assert sorted(files) == sorted([
            "README.md", "pyproject.toml", "src/adjutant_my_plugin/__init__.py",
            "src/adjutant_my_plugin/py.typed", "tests/conftest.py", "tests/test_plugin.py",
            f"tests/test_{kind}.py"])
        for relative, text in files.items():
            assert not re.search(r"__[A-Z]+__", relative + text), (kind, relative)
