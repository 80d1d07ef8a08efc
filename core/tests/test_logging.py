"""Logging costs nothing until a message passes the level: structlog is imported and
configured at the first one, and a message below the level never reaches it."""

from __future__ import annotations

import json
import subprocess
import sys

SCRIPT = """
import sys
from adjutant import get_logger
log = get_logger(plugin="p").bind(run="r")
log.info("quiet by default")
print("structlog" in sys.modules, flush=True)
log.warning("shown", n=1)
print("structlog" in sys.modules, flush=True)
"""


def run(**env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                          timeout=60, check=True, env={"PATH": "/usr/bin:/bin", **env})


def test_a_message_below_the_level_imports_nothing_and_one_above_is_shown() -> None:
    done = run(ADJUTANT_LOG_FORMAT="json")
    assert done.stdout.split() == ["False", "True"]
    (line,) = done.stderr.splitlines()
    shown = json.loads(line)
    assert (shown["event"], shown["level"], shown["plugin"], shown["run"], shown["n"]) == \
        ("shown", "warning", "p", "r", 1)


def test_the_level_from_the_environment_lets_info_through() -> None:
    done = run(ADJUTANT_LOG_FORMAT="json", ADJUTANT_LOG_LEVEL="info")
    assert done.stdout.split() == ["True", "True"]
    assert [json.loads(line)["event"] for line in done.stderr.splitlines()] == [
        "quiet by default", "shown"]
