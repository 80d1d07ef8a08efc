"""The public surface is exactly what ``__all__`` says, and stays cheap to import."""

from __future__ import annotations

import importlib
import subprocess
import sys
import types

import pytest

#: Public names a module must have that are not API (pytest fixtures of the plugin).
NOT_API = {"adjutant.testing": {"anyio_backend", "pytest_configure",
                                   "pytest_terminal_summary"}}  # pytest hooks


@pytest.mark.parametrize("module", ["adjutant", "adjutant_hookspecs", "adjutant.testing",
                                    "adjutant.testing.conformance", "adjutant.scripted"])
def test_public_names_are_exactly_all(module: str) -> None:
    mod = importlib.import_module(module)
    for name in mod.__all__:
        getattr(mod, name)  # lazy names resolve
    public = {n for n, v in vars(mod).items() if not n.startswith("_")
              and not isinstance(v, types.ModuleType) and n not in ("annotations",
                                                                    "TYPE_CHECKING")}
    public -= NOT_API.get(module, set())
    if module in ("adjutant.testing.conformance", "adjutant.scripted"):  # typed imports
        public = {n for n in public  # constants (no __module__) are the module's own
                  if getattr(vars(mod)[n], "__module__", module) == module}
    assert public == set(mod.__all__) - {"__version__"}


def test_hookimpl_is_the_one_marker() -> None:
    import adjutant
    import adjutant_hookspecs

    assert adjutant.hookimpl is adjutant_hookspecs.hookimpl


def test_plugin_facing_imports_stay_light() -> None:
    """A plugin module does `from adjutant import hookimpl`: that must not pull in the
    kernel's heavier dependencies."""
    code = ("import sys; from adjutant import hookimpl; "
            "print(sorted(m for m in ('anyio', 'cattrs', 'structlog', 'attrs', 'trio') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"


def test_cli_load_does_not_import_anyio_cattrs_or_structlog() -> None:
    code = ("import sys; from adjutant import Kernel; Kernel(load_installed=True).load(); "
            "print(sorted(m for m in ('anyio', 'cattrs', 'structlog') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"


def test_scripted_stand_ins_need_no_pytest() -> None:
    """An app uses the scripted provider and the memory stores without pytest installed;
    `adjutant.testing` re-exports the very same classes."""
    code = ("import sys; import adjutant.scripted as s; "
            "s.plugin(s.ScriptedProvider('hi')); print('pytest' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "False"
    import adjutant.scripted as scripted
    import adjutant.testing as testing

    for name in scripted.__all__:  # the stand-ins; not how a kernel is set up with them
        if name not in ("plugin", "profile", "MODEL", "PROVIDER"):
            assert getattr(testing, name) is getattr(scripted, name)
