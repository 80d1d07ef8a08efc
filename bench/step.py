"""Kernel overhead per plan step, with a no-op tool.

One step through the operator is: JSON-schema validation, the mode gate, the policy
chain (every installed policy plugin), the write gate, the dry-run and its hash, the
runtime pre-tool check, four action-log records (decision, tool_call, result,
artifact) and the tool-call events. The tool itself does nothing, so what is
measured is the kernel's own cost. It runs with the in-memory log (the kernel
alone) and, when ``adjutant-lmdb`` is installed, with the LMDB log:

- durable, as the kernel writes it (group commit: one LMDB commit a step, the
  step's intent with its decision and the previous step's result; LMDB's commit is
  two fsyncs, data then meta page), on asyncio and trio;
- durable, the way it was before group commit (``before``: a second commit after
  each step for its result, and every checkpoint line fsync'd: two commits of three
  fsyncs a step), for comparison in the same run;
- on tmpfs (``/dev/shm``) where there is one: fsync is free there, so that row is
  the CPU cost of the log alone (not durable; the figure a fast disk approaches).

It prints the disk's own write+fsync time in the same directory beside them: a
durable step costs about the tmpfs row plus two of those.

Goal: the whole per-step overhead, durable logging included, under 1 ms median.
For reference, pydantic-ai's agent loop takes about 3.3 ms per model→tool step here
with no policy and no logging.

Run: ``.venv/bin/python bench/step.py [--quick] [--steps N] [--dir DIR]`` (the default
directory is under ``.cache/`` in the checkout, on the same disk as the code).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from log import filesystem  # bench/log.py: this directory is the script's sys.path[0]

from adjutant import Copilot, Kernel, Run
from adjutant.testing import MemoryKeyValueStore, MemoryLogStore, ScriptedApprover
from adjutant_hookspecs import (
    ExecutionResult,
    ToolCall,
    ToolContext,
    ToolDeclaration,
    hookimpl,
)

GOAL_MS = 1.0
ROOT = Path(__file__).resolve().parents[1]
SHM = Path("/dev/shm")


class Noop:
    declaration = ToolDeclaration(
        name="bench.noop", version="1", description="Does nothing.",
        args_schema={"type": "object", "properties": {"i": {"type": "integer"}},
                     "required": ["i"], "additionalProperties": False})

    async def dry_run(self, call: ToolCall, ctx: ToolContext) -> ExecutionResult:
        return ExecutionResult(tool=call.tool, args=call.args, status="dry_run",
                               dry_run_diff="nothing")

    async def execute(self, call: ToolCall, ctx: ToolContext) -> ExecutionResult:
        return ExecutionResult(tool=call.tool, args=call.args, status="ok")


class Plugin:
    name = "bench"

    def __init__(self, memory: bool) -> None:
        self.memory = memory

    @hookimpl
    def register_tools(self, register: Any) -> None:
        register(Noop())

    @hookimpl
    def register_stores(self, register: Any) -> None:
        if self.memory:
            register(MemoryKeyValueStore())
            register(MemoryLogStore())


def _installed_policies() -> list[object]:
    plugins: list[object] = []
    try:
        import adjutant_guard

        plugins.append(adjutant_guard)
    except ImportError:
        pass
    try:
        import adjutant_write_gate

        plugins.append(adjutant_write_gate)
    except ImportError:
        pass
    return plugins


async def measure(steps: int, durable: bool, home: Path, before: bool = False) -> list[float]:
    """Per-step milliseconds. ``before``: the commit pattern before group commit (the
    step's result committed after it, each checkpoint line fsync'd)."""
    plugins: list[object] = [Plugin(memory=not durable), *_installed_policies()]
    if durable:
        import adjutant_lmdb

        plugins.append(adjutant_lmdb)
    kernel = Kernel(plugins=plugins, load_installed=False, env={"HOME": str(home)}, home=home,
                    strict=True)
    async with kernel:
        (home / "workspace").mkdir(exist_ok=True)
        # Grants whatever asks (no policy installed means every step asks): the
        # approval round-trip is part of the measured cost then.
        copilot = Copilot(kernel, max_steps=steps + 10,
                          approver=ScriptedApprover(default="grant"))
        await copilot.set_mode("execute-auto", channel="user")
        if before:
            for store in kernel.stores.values():
                if hasattr(store, "checkpoint_sync_s"):
                    store.checkpoint_sync_s = 0.0
        run = Run(thread_id="bench", input={}, bus_publish=kernel.bus.publish,
                  run_id="bench", mode="execute-auto", ctx=copilot.tool_context("bench"))

        samples = []
        for i in range(steps):
            call = ToolCall(tool="bench.noop", args={"i": i})
            start = time.perf_counter()
            result = await copilot.execution.one_step(i, call, run, [], copilot.approver)
            if before:
                await copilot.log.flush()
            samples.append((time.perf_counter() - start) * 1000)
            if result.status != "ok":
                raise SystemExit(f"step {i} did not run: {result.stderr}")
    return samples


def fsync_ms(directory: Path, runs: int) -> float:
    path = directory / "fsync-probe"
    samples = []
    with open(path, "ab") as handle:
        for _ in range(runs):
            start = time.perf_counter()
            handle.write(b"x" * 200)
            handle.flush()
            os.fsync(handle.fileno())
            samples.append((time.perf_counter() - start) * 1000)
    path.unlink()
    return statistics.median(samples)


def report(label: str, samples: list[float], goal: bool = True) -> float:
    """Print one row; returns the median."""
    ordered = sorted(samples)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    median = statistics.median(samples)
    verdict = ("met" if median < GOAL_MS else "MISSED") if goal else "(not durable)"
    print(f"{label:34} {median:8.3f} {p99:8.3f} {len(samples):7}  {verdict}")
    return median


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--steps", type=int)
    parser.add_argument("--dir", type=Path, help="where to write (default: under .cache/)")
    opts = parser.parse_args()
    steps = opts.steps or (200 if opts.quick else 2000)
    policies = [getattr(p, "__name__", "?") for p in _installed_policies()]
    print(f"per-step kernel overhead, no-op tool, execute-auto, {steps} steps; "
          f"policies: {', '.join(policies) or 'none (every step asks: auto-approved here)'}")
    print(f"goal: under {GOAL_MS} ms median, durable logging included\n")
    print(f"{'configuration':34} {'median':>8} {'p99':>8} {'steps':>7}  goal")
    parent = opts.dir or ROOT / ".cache"
    parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="adjutant-bench-", dir=parent) as tmp:
        home = Path(tmp)
        medians: dict[str, float] = {}
        for backend in ("asyncio", "trio"):
            (home / f"mem-{backend}").mkdir()
            medians[f"memory-{backend}"] = report(
                f"memory log, {backend}",
                anyio.run(measure, steps, False, home / f"mem-{backend}", backend=backend))
        try:
            import adjutant_lmdb  # noqa: F401
        except ImportError:
            print("adjutant-lmdb not installed: no durable figure")
        else:
            for label, name, backend, before in (
                    ("LMDB log (durable), asyncio", "lmdb", "asyncio", False),
                    ("LMDB log (durable), trio", "lmdb-trio", "trio", False),
                    ("LMDB, before group commit", "lmdb-before", "asyncio", True)):
                (home / name).mkdir()
                medians[name] = report(label, anyio.run(measure, steps, True, home / name,
                                                        before, backend=backend))
            if SHM.is_dir():
                with tempfile.TemporaryDirectory(prefix="adjutant-bench-", dir=SHM) as shm:
                    report("LMDB on tmpfs (CPU only)",
                           anyio.run(measure, steps, True, Path(shm)), goal=False)
        fsync = fsync_ms(home, 50 if opts.quick else 200)
        print(f"\ndisk: write+fsync of 200 bytes in the same directory: {fsync:.3f} ms median "
              f"({filesystem(home)}, {os.cpu_count()} cores, load average "
              f"{os.getloadavg()[0]:.1f})")
        if "lmdb" in medians:
            durable, memory = medians["lmdb"], medians["memory-asyncio"]
            print(f"durable against in-memory (asyncio): {durable:.3f} ms against "
                  f"{memory:.3f} ms a step: durability costs {durable - memory:.3f} ms, one "
                  f"LMDB commit (two fsyncs; the probe's one took {fsync:.3f} ms)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
