"""Run every Adjutant benchmark in sequence and print their figures.

Each benchmark runs as its own subprocess (a fresh interpreter, so one cannot warm
the caches of the next). ``--quick`` is passed through for a short smoke run, as CI
uses it. The exit status is non-zero only if a benchmark crashed: the figures are
for reading, nothing here fails on timing.

Run: ``.venv/bin/python bench/run_all.py [--quick] [names...]``.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
BENCHMARKS = ("startup", "bus", "hooks", "step", "log", "sandbox", "tools", "stream",
              "planning", "mcp_bridge", "stt", "spoken", "tts", "redaction", "router",
              "copilot_agent", "memory", "tasks", "tasks_celery", "summarize", "model_thread")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="short smoke runs (CI)")
    parser.add_argument("names", nargs="*", metavar="NAME",
                        help=f"benchmarks to run (default: all of {', '.join(BENCHMARKS)})")
    opts = parser.parse_args()
    names: list[str] = opts.names or list(BENCHMARKS)
    if unknown := [n for n in names if n not in BENCHMARKS]:
        parser.error(f"unknown benchmark(s): {', '.join(unknown)}")

    failed: list[str] = []
    for name in names:
        argv = [sys.executable, str(HERE / f"{name}.py"), *(["--quick"] if opts.quick else [])]
        print(f"=== {name} {'(quick) ' if opts.quick else ''}".ljust(78, "="), flush=True)
        start = time.perf_counter()
        code = subprocess.call(argv)
        elapsed = time.perf_counter() - start
        status = "ok" if code == 0 else f"FAILED (exit {code})"
        print(f"--- {name}: {status}, {elapsed:.1f} s\n", flush=True)
        if code != 0:
            failed.append(name)
    if failed:
        print(f"crashed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
