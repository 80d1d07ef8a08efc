"""The router's cost per request: the rule-based choice (with the context estimate it
needs) and the budget check against a month of recorded calls in the real LMDB store (the first
check of a process sums the past days once; later ones read only today's calls).

Goal: well under 10 ms per request for both, at p99. Prints p50/p99 in milliseconds
next to a baseline measured in the same run: one `json.dumps` of the same context,
the least any router that looks at the context must pay.

Run: ``.venv/bin/python bench/router.py [--quick]``.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any


def percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]


def bulletin(files: int) -> dict[str, Any]:
    return {"cwd": "/home/me/project", "git": {"branch": "main", "dirty": ["a.py"] * 20},
            "selected_files": [f"src/module_{n}.py" for n in range(files)],
            "recent_shell": ["pytest -q", "git status"] * 10, "clipboard": "x" * 2000}


async def ledger_check(calls: int, rounds: int) -> dict[str, list[float]]:
    """The budget check as it was (a sum of the windows, no lock), and as it is: check
    and reserve under the data home's flock (the sum, then one durable put), with the
    release (one durable delete) that gives it back; and folding the month's old days."""
    from adjutant.kernel._settings import Budgets, Cap
    from adjutant.providers._budget import Ledger, Spend, over_budget
    from adjutant_lmdb import LmdbKeyValueStore

    with tempfile.TemporaryDirectory() as home:
        store = LmdbKeyValueStore()
        store.open(Path(home) / "kv")
        ledger = Ledger(store, Path(home) / "budget.lock")
        today = dt.date.today()
        for n in range(calls):  # a month of calls, spread over its days
            day = today - dt.timedelta(days=n % 28)
            ledger._pruned = day  # recorded as of then (no folding while filling)
            await ledger.add(preset="strong", tokens=3000, cost=0.001, metered=True,
                             estimated=False, run_id=str(n), when=day)
        budgets = Budgets(day=Cap(cost_usd=5.0), month=Cap(cost_usd=50.0))
        planned = Spend(3500, 0.002, 1)
        found: dict[str, list[float]] = {"sum": [], "reserve": [], "release": []}
        for _ in range(rounds):
            start = time.perf_counter()
            over_budget(budgets, planned, await ledger.spent(today))
            found["sum"].append((time.perf_counter() - start) * 1000)
        ledger._pruned = today
        for _ in range(rounds):
            start = time.perf_counter()
            held = await ledger.reserve(budgets, planned, preset="strong", run_id="b")
            middle = time.perf_counter()
            await ledger.release(held)
            found["reserve"].append((middle - start) * 1000)
            found["release"].append((time.perf_counter() - middle) * 1000)
        start = time.perf_counter()
        deleted = await Ledger(store).prune(today)
        found["prune"] = [(time.perf_counter() - start) * 1000, float(deleted)]
        await store.aclose()
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true")
    opts = parser.parse_args()
    rounds = 50 if opts.quick else 1000

    from adjutant.kernel._settings import ModelPreset, Profile, RouterSettings
    from adjutant.providers._router import estimate_tokens, route

    profile = Profile(models={"strong": ModelPreset(provider="openrouter", model="x")},
                      router=RouterSettings(escalate_to="strong"))
    requests = [("list the files here", bulletin(0)), ("explain this " * 400, bulletin(3)),
                ("summarize the PDFs", bulletin(12))]
    base, routed = [], []
    for n in range(rounds):
        prompt, context = requests[n % len(requests)]
        start = time.perf_counter()
        text = json.dumps(context, default=str)
        middle = time.perf_counter()
        route(profile, tokens=estimate_tokens(prompt, text),
              attachments=len(context["selected_files"]), tools=24)
        end = time.perf_counter()
        base.append((middle - start) * 1000)
        routed.append((end - start) * 1000)
    calls = 200 if opts.quick else 3000
    checked = asyncio.run(ledger_check(calls, 20 if opts.quick else 200))
    cold, summed = checked["sum"][0], checked["sum"][1:]

    print(f"{'':<52}{'p50 ms':>9}{'p99 ms':>9}")
    for label, samples in [("baseline: json.dumps of the context", base),
                           ("route (estimate + rules)", routed),
                           (f"sum of the windows, {calls:,} calls in the month", summed),
                           ("check and reserve (flock, sum, one put)", checked["reserve"]),
                           ("release (one delete)", checked["release"])]:
        p50, p99 = percentiles(samples)
        print(f"{label:<52}{p50:>9.3f}{p99:>9.3f}")
    print(f"{'first sum of the process (reads the past days)':<61}{cold:>9.3f}")
    took, deleted = checked["prune"]
    print(f"{f'prune: {int(deleted):,} calls of days past folded':<61}{took:>9.3f}")
    print("goal: route and budget check each well under 10 ms at p99")


if __name__ == "__main__":
    main()
