"""``adjutant new plugin NAME [--kind tool|policy|provider|context]``: a plugin package
whose tests pass at once.

The package is rendered from the template shipped in this distribution,
``adjutant/templates/plugin/``: the files under ``common/`` for every kind, then those
under ``<kind>/`` (the plugin module and the tests of its kind). Each file there ends
in ``.tmpl`` (so no tool mistakes it for code) and may use these placeholders, in its
text and in its path: ``__NAME__`` (the plugin's name, ``my_plugin``), ``__MODULE__``
(``adjutant_my_plugin``), ``__DIST__`` (``adjutant-my-plugin``), ``__KIND__``,
``__SUMMARY__``, ``__REGISTERS__`` (what the plugin registers, by kind), ``__DEPENDENCIES__``
(its run-time requirements) and
``__SOURCES__`` (uv sources pointing at the Adjutant checkout, when there is one).

In the repository, ``plugins/_template`` is this template rendered for ``template``
(kind tool), and ``examples/wordcount-plugin`` takes its packaging and common tests
from it; `checkout_copies` says what they must hold, a test compares, and
``python -m adjutant.cli._new`` (``./dev template``) writes them after a change.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import sys
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from adjutant_hookspecs import Kernel

__all__ = ["KINDS", "checkout_copies", "configure", "generate", "new", "render",
           "write_checkout_copies"]

NAME = re.compile(r"^[a-z][a-z0-9_]{0,30}$")
KINDS = ("tool", "policy", "provider", "context")

_CONTRACTS = '"adjutant-hookspecs>=0.1"'
#: kind -> (what the plugin registers, as a Python literal; the package's summary; its
#: run-time dependencies)
_KINDS: dict[str, tuple[str, str, str]] = {
    "tool": ('{"tools": ["__NAME__.echo", "__NAME__.append"]}', "A tool for Adjutant.",
             f'{_CONTRACTS}, "adjutant-core>=0.1"'),  # adjutant.toolkit
    "policy": ('{"policies": ["__NAME__"]}', "A safety policy for Adjutant.", _CONTRACTS),
    "provider": ('{"providers": ["__NAME__"]}', "A model provider for Adjutant.",
                 _CONTRACTS),
    "context": ('{"context_providers": ["__NAME__"]}', "A context source for Adjutant.",
                _CONTRACTS),
}
_SUFFIX = ".tmpl"

#: Packages in the repository made from the template: directory -> (name, kind, the
#: files that come from it, each with the edits the package makes to it).
_IN_CHECKOUT: dict[str, tuple[str, str, dict[str, tuple[tuple[str, str], ...]] | None]] = {
    "plugins/_template": ("template", "tool", None),  # every file, as rendered
    "examples/wordcount-plugin": ("wordcount", "tool", {
        # its summary, and anyio (imported on first use) beside the contracts
        "pyproject.toml": (
            ('description = "A tool for Adjutant."',
             'description = "Count lines, words and bytes of a file, like wc: an example '
             'Adjutant tool plugin"'),
            ('dependencies = ["adjutant-hookspecs>=0.1", "adjutant-core>=0.1"]',
             'dependencies = ["adjutant-hookspecs>=0.1", "anyio>=4.6"]')),
        "src/adjutant_wordcount/py.typed": (),
        "tests/conftest.py": (),
        "tests/test_plugin.py": (('["wordcount.echo", "wordcount.append"]',
                                  '["wordcount.count"]'),),
    }),
}


def _checkout() -> Path | None:
    """The Adjutant checkout this module runs from, or None (an installed wheel)."""
    root = Path(__file__).resolve().parents[4]  # core/src/adjutant/cli -> the checkout
    if (root / "core" / "pyproject.toml").is_file() and \
            (root / "hookspecs" / "pyproject.toml").is_file():
        return root
    return None


def _sources(package: Path) -> str:
    """uv sources for the Adjutant packages when they come from a checkout, so an install
    never resolves them from the public index (where ``adjutant`` is someone else's).
    Relative to ``package`` when it lies inside the checkout (the checkout can move)."""
    checkout = _checkout()
    if checkout is None:
        return ""
    package = Path(os.path.abspath(package))
    paths = {}
    for name in ("hookspecs", "core", "plugins/adjutant-guard", "plugins/adjutant-write-gate"):
        target = checkout / name
        paths[name] = (os.path.relpath(target, package) if package.is_relative_to(checkout)
                       else str(target))
    return ("\n# Resolve the Adjutant packages from this checkout, never from the public "
            "index\n# (the bare name `adjutant` there belongs to an unrelated project).\n"
            "[tool.uv.sources]\n"
            f'adjutant-hookspecs = {{ path = "{paths["hookspecs"]}", editable = true }}\n'
            f'adjutant-core = {{ path = "{paths["core"]}", editable = true }}\n'
            f'adjutant-guard = {{ path = "{paths["plugins/adjutant-guard"]}", editable = true }}\n'
            'adjutant-write-gate = { path = '
            f'"{paths["plugins/adjutant-write-gate"]}", editable = true }}\n')


def _walk(folder: Traversable, prefix: str = "") -> list[tuple[str, Traversable]]:
    found = []
    for entry in folder.iterdir():
        if entry.is_dir():
            found += _walk(entry, f"{prefix}{entry.name}/")
        elif entry.name.endswith(_SUFFIX):
            found.append((prefix + entry.name.removesuffix(_SUFFIX), entry))
    return found


def render(name: str, kind: str, package: Path) -> dict[str, str]:
    """The files of plugin ``name`` of ``kind``, by path relative to the package
    directory; ``package`` is where it will live (for the uv sources). Raises
    `ValueError` for a bad name or kind."""
    if not NAME.match(name):
        raise ValueError(f"plugin name {name!r} must be lower case letters, digits and _, "
                         "starting with a letter (it becomes adjutant_<name> and the prefix "
                         "of tool names)")
    if kind not in _KINDS:
        raise ValueError(f"unknown kind {kind!r}; one of: {', '.join(KINDS)}")
    registers, summary, dependencies = _KINDS[kind]
    template = files("adjutant") / "templates" / "plugin"
    values = {"__SOURCES__\n": _sources(package), "__REGISTERS__": registers,
              "__DEPENDENCIES__": dependencies,
              "__SUMMARY__": summary, "__KIND__": kind, "__MODULE__": f"adjutant_{name}",
              "__DIST__": f"adjutant-{name.replace('_', '-')}", "__NAME__": name}
    rendered = {}
    for relative, entry in _walk(template / "common") + _walk(template / kind):
        text = entry.read_text(encoding="utf-8")
        for key, value in values.items():  # __REGISTERS__ holds __NAME__: keep the order
            text = text.replace(key, value)
            relative = relative.replace(key, value)
        rendered[relative] = text
    return dict(sorted(rendered.items()))


def generate(name: str, kind: str, dest: Path) -> Path:
    """Write the package for plugin ``name`` under ``dest``; return its directory.
    Raises `ValueError` for a bad name or kind, `FileExistsError` if it exists."""
    root = dest / f"adjutant-{name.replace('_', '-')}"
    rendered = render(name, kind, root)
    if root.exists():
        raise FileExistsError(f"{root} already exists; choose another name or --dest")
    for relative, text in rendered.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def checkout_copies(checkout: Path) -> dict[Path, str]:
    """What the packages of the repository made from the template must hold, file by
    file: `render` at their place, with each package's stated edits."""
    expected = {}
    for folder, (name, kind, only) in _IN_CHECKOUT.items():
        package = checkout / folder
        for relative, text in render(name, kind, package).items():
            if only is not None and relative not in only:
                continue
            for old, new in only[relative] if only is not None else ():
                if old not in text:
                    raise ValueError(f"{folder}/{relative}: the template no longer has {old!r}")
                text = text.replace(old, new)
            expected[package / relative] = text
    return expected


def write_checkout_copies() -> int:
    """Rewrite the repository's packages made from the template (`checkout_copies`)."""
    checkout = _checkout()
    if checkout is None:
        print("adjutant.cli._new: not running from a checkout of Adjutant", file=sys.stderr)
        return 1
    for path, text in checkout_copies(checkout).items():
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            print(f"wrote {path.relative_to(checkout)}")
    return 0


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("what", choices=["plugin"], help="what to create")
    parser.add_argument("name", help="the plugin's name: lower case, digits and _ "
                        "(package adjutant-<name>, module adjutant_<name>)")
    parser.add_argument("--kind", choices=KINDS, default="tool",
                        help="what the plugin registers (default: tool)")
    parser.add_argument("--dest", type=Path, default=Path("."),
                        help="where to create the package directory (default: here)")


def new(kernel: Kernel, args: argparse.Namespace) -> int:
    try:
        root = generate(args.name, args.kind, args.dest)
    except (ValueError, FileExistsError) as exc:
        print(f"adjutant new: {exc}", file=sys.stderr)
        return 2
    python = sys.executable
    adjutant = Path(python).with_name("adjutant")
    print(f"created {root} ({args.kind} plugin {args.name!r}). Next, from any shell "
          "(into the environment this adjutant runs in):\n"
          f"  cd {shlex.quote(str(root))}\n  {install_command(python)}\n"
          f"  {shlex.quote(python)} -m pytest\n"
          f"  {shlex.quote(str(adjutant)) if adjutant.exists() else 'adjutant'} plugins")
    return 0


def install_command(python: str) -> str:
    """A command that installs the package in the current folder, with its test extra,
    into ``python``'s environment, needing no activated virtual environment: pip when
    that environment has it, else uv (on PATH, or the one a checkout's ``./dev``
    bootstrapped), else pip brought in by ``ensurepip``."""
    import importlib.util
    import shutil

    py = shlex.quote(python)
    if importlib.util.find_spec("pip") is not None:
        return f"{py} -m pip install -e '.[test]'"
    uv = shutil.which("uv")
    checkout = _checkout()
    boot = checkout / ".cache" / "uv-bootstrap" / "bin" / "uv" if checkout else None
    if uv is None and boot is not None and boot.is_file():
        uv = str(boot)
    if uv is not None:
        return f"{shlex.quote(uv)} pip install --python {py} -e '.[test]'"
    return f"{py} -m ensurepip && {py} -m pip install -e '.[test]'"


if __name__ == "__main__":
    sys.exit(write_checkout_copies())
