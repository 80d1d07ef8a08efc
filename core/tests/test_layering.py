"""What imports what: a kernel loads without the CLI, the public names are one list,
and no core module grows past 600 lines without saying why."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import adjutant

CORE = Path(adjutant.__file__).parent


def test_loading_a_kernel_imports_no_cli() -> None:
    """An embedding app, a web dock or ``mcp serve`` builds a kernel: the CLI's modules
    (argument parsing, the terminal approver, doctor's output) stay out; a command is
    imported when the CLI runs it."""
    code = ("import json, sys; from adjutant import Kernel; "
            "k = Kernel(load_installed=True); k.load(); "
            "print(json.dumps([sorted(m for m in sys.modules if m.startswith('adjutant.cli')),"
            " sorted(k.commands)]))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    cli, commands = json.loads(out)
    assert cli == []
    assert {"run", "chat", "doctor", "mode", "new"} <= set(commands)


def test_a_command_imports_its_module_when_it_runs() -> None:
    code = ("import sys; from adjutant import Kernel; k = Kernel(load_installed=True); "
            "k.load(); import argparse; p = argparse.ArgumentParser(); "
            "k.commands['doctor'].configure(p); print('adjutant.cli._doctor' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "True"


def test_the_public_names_are_one_list() -> None:
    """`_LAZY` is the list; ``__all__`` is made from it, and what type checkers see
    (the ``TYPE_CHECKING`` imports) is the same names."""
    tree = ast.parse((CORE / "__init__.py").read_text())
    typed = {alias.asname or alias.name for node in tree.body if isinstance(node, ast.If)
             for sub in ast.walk(node) if isinstance(sub, ast.ImportFrom)
             for alias in sub.names}
    lazy = set(adjutant._LAZY)
    assert typed == lazy
    assert set(adjutant.__all__) == lazy | {"hookimpl", "__version__"}
    assert len(adjutant.__all__) == len(set(adjutant.__all__))


def test_no_core_module_is_over_600_lines_without_a_reason_at_its_top() -> None:
    long = []
    for path in sorted(CORE.rglob("*.py")):
        lines = path.read_text().splitlines()
        if len(lines) > 600 and not any("over 600 lines" in line.lower() for line in lines[:30]):
            long.append(f"{path.relative_to(CORE)}: {len(lines)} lines")
    assert long == []
