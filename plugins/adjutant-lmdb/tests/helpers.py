"""Running the real `adjutant` command with only this plugin loaded."""

from __future__ import annotations

import os
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

import adjutant_lmdb


def cli_env(home: Path, tmp_path: Path) -> dict[str, str]:
    """The environment of `adjutant` with only this plugin, data home ``home``."""
    env = {**os.environ, "ADJUTANT_HOME": str(home), "ADJUTANT_LOAD_PLUGINS": "lmdb"}
    if not any(ep.value == "adjutant_lmdb" for ep in entry_points(group="adjutant")):
        # Not installed (tests run from a source tree): give the child the entry point.
        dist = tmp_path / "ep" / "adjutant_lmdb_probe-0.dist-info"
        dist.mkdir(parents=True)
        (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: adjutant-lmdb\n")
        (dist / "entry_points.txt").write_text("[adjutant]\nlmdb = adjutant_lmdb\n")
        src = str(Path(adjutant_lmdb.__file__).parents[1])
        env["PYTHONPATH"] = os.pathsep.join(
            p for p in (str(dist.parent), src, os.environ.get("PYTHONPATH")) if p)
    return env


def adjutant(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "adjutant.cli", *args], env=env,
                          capture_output=True, text=True, timeout=60, check=False)
