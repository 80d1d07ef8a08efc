"""Everything installed in this environment, loaded together."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib.metadata import entry_points

import pytest

from adjutant import Kernel


def installed() -> set[str]:
    return {ep.name for ep in entry_points(group="adjutant")}


def test_every_installed_plugin_loads_without_conflict(tmp_path) -> None:
    kernel = Kernel(env={"ADJUTANT_HOME": str(tmp_path)}).load()
    failed = {p.name: p.error for p in kernel.plugins if p.status != "loaded"}
    assert failed == {}
    assert {p.name for p in kernel.plugins} == installed() | {"adjutant"}


@pytest.mark.skipif(not {"wordcount", "template"} <= installed(),
                    reason="example and template are installed only in the test run")
def test_cli_reports_what_each_plugin_registered(tmp_path) -> None:
    done = subprocess.run([sys.executable, "-m", "adjutant.cli", "plugins", "--json"],
                          env={"ADJUTANT_HOME": str(tmp_path), "PATH": "/usr/bin:/bin"},
                          capture_output=True, text=True, check=True, timeout=60)
    listed = {p["name"]: p for p in json.loads(done.stdout)}
    assert listed["wordcount"]["registered"] == {"tools": ["wordcount.count"]}
    assert listed["wordcount"]["distribution"] == "adjutant-wordcount"
    assert listed["template"]["registered"] == {"tools": ["template.echo", "template.append"]}
