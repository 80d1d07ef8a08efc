"""Importing the plugin stays cheap: the kernel imports every installed plugin at start-up."""

import os
import subprocess
import sys
from pathlib import Path

import adjutant_context

#: Imported on first use only, never at plugin import (the sandbox is in `adjutant`).
HEAVY = {"anyio", "httpx", "numpy", "trio", "adjutant", "tomllib"}


def test_import_does_not_load_heavy_modules() -> None:
    # A fresh interpreter: this one has pytest, anyio and trio loaded already.
    src = str(Path(adjutant_context.__file__).parents[1])
    path = os.pathsep.join(p for p in (src, os.environ.get("PYTHONPATH")) if p)
    code = "import sys, adjutant_context; print(*sorted({m.split('.')[0] for m in sys.modules}))"
    proc = subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, "PYTHONPATH": path},
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert HEAVY.isdisjoint(proc.stdout.split()), HEAVY & set(proc.stdout.split())
