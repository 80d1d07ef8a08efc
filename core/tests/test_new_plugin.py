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
    # the package on the path, with what its test extra installs from this checkout (the
    # guard and the write-gate, which a tool's tests meet), as `pip install -e .[test]`
    extra = [CHECKOUT / "plugins" / p / "src" for p in ("adjutant-guard", "adjutant-write-gate")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(map(str, [root / "src", *extra]))}
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


def _uv() -> str | None:
    import shutil

    boot = CHECKOUT / ".cache" / "uv-bootstrap" / "bin" / "uv"
    return shutil.which("uv") or (str(boot) if boot.is_file() else None)


@pytest.mark.skipif(_uv() is None, reason="needs uv (./dev bootstraps it) to make a venv")
def test_the_printed_commands_install_and_test_from_a_fresh_shell(tmp_path: Path) -> None:
    """What `adjutant new plugin` prints is run as printed, line by line, by a shell with
    a bare PATH and no activated virtual environment: the install, the package's tests
    and `adjutant plugins` all work (the printed line was `uv pip install -e` before,
    which fails outside an activated venv)."""
    uv = _uv()
    assert uv is not None
    venv = tmp_path / "venv"
    env = {k: v for k, v in os.environ.items()  # the user's shell (certificates, index)
           if not k.startswith(("PYTEST_", "ADJUTANT_", "VIRTUAL_ENV", "PYTHON", "UV_"))}
    env.update(PATH="/usr/bin:/bin", UV_PYTHON_DOWNLOADS="never",
               ADJUTANT_HOME=str(tmp_path / "data"))
    for argv in ([uv, "venv", "-q", "--python", sys.executable, str(venv)],
                 [uv, "pip", "install", "-q", "--python", str(venv / "bin" / "python"),
                  "-e", str(CHECKOUT / "hookspecs"), "-e", f"{CHECKOUT / 'core'}[testing]"]):
        made = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=600,
                              check=False)
        assert made.returncode == 0, made.stderr[-2000:]
    done = subprocess.run([str(venv / "bin" / "adjutant"), "new", "plugin", "hello",
                           "--dest", str(tmp_path)], env=env, capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    steps = [line.strip() for line in done.stdout.splitlines()[1:]]
    assert steps[0] == f"cd {tmp_path / 'adjutant-hello'}" and len(steps) == 4, steps
    shown = subprocess.run(["bash", "-c", " && ".join(steps)], env=env, cwd=tmp_path,
                           capture_output=True, text=True, timeout=600, check=False)
    assert shown.returncode == 0, (steps, shown.stdout[-3000:], shown.stderr[-2000:])
    assert " passed" in shown.stdout and "failed" not in shown.stdout
    assert re.search(r"hello\s.*loaded", shown.stdout), shown.stdout[-1500:]
