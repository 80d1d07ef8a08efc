"""Plugins found through the ``adjutant`` entry-point group, as installed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from adjutant import Kernel

GOOD = """
from adjutant_hookspecs import Command, hookimpl

@hookimpl
def register_commands(register):
    register(Command(name="hello", help="say hello", run=lambda kernel, args: print("hello") or 0))
"""
BROKEN_IMPORT = "raise RuntimeError('boom at import')\n"
MALFORMED_TOOL = """
from adjutant_hookspecs import ToolDeclaration, hookimpl

class Bad:
    declaration = ToolDeclaration(name="bad tool!", version="1", description="x",
                                  args_schema={"type": "object"})
    async def dry_run(self, call, ctx): ...
    async def execute(self, call, ctx): ...

@hookimpl
def register_tools(register):
    register(Bad())
"""


def kernel(**env: str) -> Kernel:
    return Kernel(env={"ADJUTANT_HOME": "/nonexistent", **env}).load()


OURS = {"adjutant", "hello", "boom", "bad"}


def status(k: Kernel) -> dict[str, str]:
    """Statuses of this test's plugins (other installed ones may be present too)."""
    return {p.name: p.status for p in k.plugins if p.name in OURS}


def test_installed_plugin_loads_with_its_distribution(make_dist) -> None:
    make_dist("adjutant-hello", "adj_hello", GOOD, entry="hello")
    k = kernel()
    info = next(p for p in k.plugins if p.name == "hello")
    assert (info.status, info.distribution, info.version) == ("loaded", "adjutant-hello", "1.0")
    assert info.registered == {"commands": ["hello"]}
    assert k.commands.owner("hello") == "hello"


def test_broken_plugins_are_reported_and_skipped(make_dist) -> None:
    make_dist("adjutant-hello", "adj_hello", GOOD, entry="hello")
    make_dist("adjutant-boom", "adj_boom", BROKEN_IMPORT, entry="boom")
    make_dist("adjutant-bad", "adj_bad", MALFORMED_TOOL, entry="bad")
    k = kernel()
    assert status(k) == {"adjutant": "loaded", "bad": "failed", "boom": "failed",
                         "hello": "loaded"}
    boom = next(p for p in k.plugins if p.name == "boom")
    assert "import failed: RuntimeError: boom at import" in boom.error
    assert "adj_boom.py:1" in boom.error
    bad = next(p for p in k.plugins if p.name == "bad")
    assert "register_tools" in bad.error
    assert "name must match" in bad.error
    assert "bad tool!" not in k.tools
    assert "hello" in k.commands


def test_allow_and_block_lists(make_dist) -> None:
    make_dist("adjutant-hello", "adj_hello", GOOD, entry="hello")
    make_dist("adjutant-boom", "adj_boom", BROKEN_IMPORT, entry="boom")
    assert status(kernel(ADJUTANT_LOAD_PLUGINS="hello"))["boom"] == "disabled"
    # distribution names match too; the built-in plugin is never filtered
    assert status(kernel(ADJUTANT_LOAD_PLUGINS="adjutant-boom"))["hello"] == "disabled"
    assert status(kernel(ADJUTANT_LOAD_PLUGINS=""))["adjutant"] == "loaded"
    blocked = kernel(ADJUTANT_DISABLE_PLUGINS="boom, other")
    assert status(blocked) == {"adjutant": "loaded", "boom": "disabled", "hello": "loaded"}
    info = next(p for p in blocked.plugins if p.name == "boom")
    assert "ADJUTANT_DISABLE_PLUGINS" in info.error


def _cli(site: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, "PYTHONPATH": str(site), "ADJUTANT_HOME": str(site / "home"), **env}
    return subprocess.run([sys.executable, "-m", "adjutant.cli", *args], env=full,
                          capture_output=True, text=True, timeout=60, check=False)


def test_cli_lists_plugins_as_json_and_keeps_going(make_dist, site_dir) -> None:
    make_dist("adjutant-hello", "adj_hello", GOOD, entry="hello")
    make_dist("adjutant-boom", "adj_boom", BROKEN_IMPORT, entry="boom")
    done = _cli(site_dir, "plugins", "--json", ADJUTANT_LOG_FORMAT="json")
    assert done.returncode == 0, done.stderr
    listed = {p["name"]: p for p in json.loads(done.stdout)}
    assert listed["boom"]["status"] == "failed"
    assert listed["hello"]["registered"] == {"commands": ["hello"]}
    assert listed["adjutant"]["distribution"] == "adjutant-core"
    # the skip is logged as a structured JSON line naming the plugin
    log = [json.loads(line) for line in done.stderr.splitlines() if line.startswith("{")]
    assert any(r.get("plugin") == "boom" and r["level"] == "warning" for r in log)
    # the plugin's own subcommand works; doctor fails with an actionable fix
    assert _cli(site_dir, "hello").stdout == "hello\n"
    doctor = _cli(site_dir, "doctor")
    assert doctor.returncode == 1
    assert "ADJUTANT_DISABLE_PLUGINS=boom" in doctor.stdout
    assert _cli(site_dir, "doctor", ADJUTANT_DISABLE_PLUGINS="boom").stdout.count("FAIL") == 0


def test_discovery_matches_importlib_metadata_and_reads_attr_values(make_dist, site_dir) -> None:
    """Our entry-point scan (which skips importlib.metadata for start-up time) finds what
    importlib.metadata finds, and `module:attr` values load the attribute."""
    from importlib.metadata import entry_points

    from adjutant.kernel._plugins import discover

    make_dist("adjutant-held", "adj_held", "class Holder:\n    plugin = object()\n",
              entry="held")
    info = site_dir / "adjutant_held-1.0.dist-info" / "entry_points.txt"
    info.write_text("# comment\n[console_scripts]\nx = y\n\n[adjutant]\n"
                    "held = adj_held:Holder.plugin\n")
    ours = {(ep.name, ep.value) for ep in discover()}
    theirs = {(ep.name, ep.value) for ep in entry_points(group="adjutant")}
    assert ours == theirs
    held = next(ep for ep in discover() if ep.name == "held")
    import adj_held

    assert held.load() is adj_held.Holder.plugin
    assert (held.distribution, held.version) == ("adjutant-held", "1.0")
