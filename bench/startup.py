"""Start-up cost of the ``adjutant`` command.

Measures the wall time of ``adjutant --help`` and ``adjutant mode`` as fresh
subprocesses, next to ``python -c pass`` (the interpreter's own floor) in the same
run, and prints each as a multiple of that floor, then the slowest imports of
``adjutant --help`` (``python -X importtime``).

Why: the CLI is the first thing a user touches and every shell completion or
scripted call pays it; the kernel promises that loading stays cheap (plugins must
not import their heavy dependencies until first use, and a subcommand's module is
imported only when it runs). Goal: at most 8x the bare interpreter at the median
(about 100 ms where the interpreter starts in 12 ms). The ratio, not the
milliseconds, is the figure to compare between machines and runs: a busy machine
slows both alike.

Run: ``.venv/bin/python bench/startup.py [--quick] [--runs N]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

GOAL_RATIO = 8.0
BIN = Path(sys.prefix) / "bin"


@dataclass(frozen=True)
class Case:
    label: str
    argv: list[str]


@dataclass(frozen=True)
class Timing:
    case: Case
    samples_ms: list[float]

    @property
    def min_ms(self) -> float:
        return min(self.samples_ms)

    @property
    def median_ms(self) -> float:
        return statistics.median(self.samples_ms)


def run_once(argv: list[str], env: dict[str, str]) -> float:
    """Wall time of one subprocess run, in ms (output discarded)."""
    start = time.perf_counter()
    proc = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          check=False)
    elapsed = (time.perf_counter() - start) * 1000.0
    if proc.returncode != 0:
        err = proc.stderr.decode(errors="replace").strip()
        raise SystemExit(f"{' '.join(argv)} exited {proc.returncode}: {err}")
    return elapsed


def time_cases(cases: list[Case], runs: int, env: dict[str, str]) -> list[Timing]:
    """Each case ``runs`` times after one warm-up (bytecode caches, page cache), in
    rounds of one run of each: a busy spell on a shared machine slows them alike, so
    the ratio to the interpreter holds where the milliseconds do not."""
    for case in cases:
        run_once(case.argv, env)
    samples: list[list[float]] = [[] for _ in cases]
    for _ in range(runs):
        for case, out in zip(cases, samples, strict=True):
            out.append(run_once(case.argv, env))
    return [Timing(case, out) for case, out in zip(cases, samples, strict=True)]


def import_times(argv: list[str], env: dict[str, str], repeats: int) -> dict[str, tuple[int, int]]:
    """``name -> (self_us, cumulative_us)``, the minimum over ``repeats`` runs.

    Names keep importtime's indentation so nesting stays visible.
    """
    best: dict[str, tuple[int, int]] = {}
    for _ in range(repeats):
        proc = subprocess.run([sys.executable, "-X", "importtime", *argv], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
        for line in proc.stderr.decode(errors="replace").splitlines():
            if not line.startswith("import time:") or "self [us]" in line:
                continue
            self_us, cumulative_us, name = line[len("import time:"):].split("|", 2)
            key = name.rstrip()
            value = (int(self_us), int(cumulative_us))
            old = best.get(key)
            best[key] = value if old is None else (min(old[0], value[0]), min(old[1], value[1]))
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="few runs (CI smoke test)")
    parser.add_argument("--runs", type=int, help="timed runs per command (default 25; 3 quick)")
    opts = parser.parse_args()
    runs = opts.runs or (3 if opts.quick else 25)

    adjutant = str(BIN / "adjutant")
    if not Path(adjutant).exists():
        raise SystemExit(f"{adjutant} not found: run from the workspace venv")
    with tempfile.TemporaryDirectory(prefix="adjutant-bench-") as home:
        # A throw-away data home: the benchmark must not read or write the user's.
        env = {**os.environ, "ADJUTANT_HOME": home}
        baseline = Case("python -c pass", [sys.executable, "-c", "pass"])
        cases = [baseline, Case("adjutant --help", [adjutant, "--help"]),
                 Case("adjutant mode", [adjutant, "mode"])]
        timings = time_cases(cases, runs, env)
        imports = import_times([adjutant, "--help"], env, repeats=1 if opts.quick else 3)

    base = timings[0].median_ms
    print(f"startup: {runs} rounds of each command after one warm-up (wall time of a fresh "
          f"subprocess; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")
    print(f"goal: each command at most {GOAL_RATIO:g}x the bare interpreter (median)\n")
    print(f"{'command':<20} {'min ms':>8} {'median ms':>10} {'x baseline':>11}  goal")
    for t in timings:
        ratio = t.median_ms / base
        verdict = "-" if t is timings[0] else ("met" if ratio <= GOAL_RATIO else "MISSED")
        print(f"{t.case.label:<20} {t.min_ms:>8.1f} {t.median_ms:>10.1f} "
              f"{ratio:>10.2f}x  {verdict}")
    for t in timings[1:]:
        print(f"  {t.case.label}: {t.median_ms - base:.1f} ms above the interpreter floor")

    print("\nimporttime, `adjutant --help`: top 8 by cumulative time (min of runs; indent = "
          "nesting)")
    print(f"{'cumulative ms':>13} {'self ms':>8}  module")
    top = sorted(imports.items(), key=lambda kv: kv[1][1], reverse=True)[:8]
    for name, (self_us, cumulative_us) in top:
        print(f"{cumulative_us / 1000:>13.1f} {self_us / 1000:>8.1f}  {name}")
    top_self = sorted(imports.items(), key=lambda kv: kv[1][0], reverse=True)[:8]
    print("\nand top 8 by self time (the module's own body, children excluded)")
    for name, (self_us, _) in top_self:
        print(f"{self_us / 1000:>13.1f}  {name.strip()}")
    total = sum(s for s, _ in imports.values()) / 1000
    print(f"\nall imports: {len(imports)} modules, {total:.1f} ms self time in total")


if __name__ == "__main__":
    main()
