"""What the sandbox costs: ``shell.exec`` through bubblewrap versus a plain subprocess.

Each command (``true``, ``echo hi``) runs through the ``shell.exec`` tool of
``adjutant-system`` (argument checks, ``prlimit``, bubblewrap with fresh
user/pid/net/ipc/uts namespaces, a pids cgroup where the host allows one, output
capture and cleaning) and, in the same run, as a plain ``subprocess.run`` of the same
argv with captured output. The ratio of the medians is the price of the isolation.

No goal is set: a sandboxed command is dominated by namespace and process creation,
and a few milliseconds per command is far below the time a user takes to approve it.

Then the bind layout alone (`adjutant.safety.sandbox.sandbox_layout`, computed for every
sandboxed call: the deny rules' fixed places, a bounded walk of each writable cage,
git directories): for an empty cage, a repository of 2,000 files, and a tree larger
than the walk's budget, with the entries walked and the mounts it adds.

Run: ``.venv/bin/python bench/sandbox.py [--quick] [--runs N]``.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio

from adjutant.safety import sandbox
from adjutant_hookspecs import ToolCall, ToolContext

COMMANDS = (["true"], ["echo", "hi"])


def stats(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(samples), ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]


async def through_tool(argv: list[str], runs: int, cwd: str) -> list[float]:
    from adjutant_system import ShellExec

    tool = ShellExec()
    ctx = ToolContext(cwd=cwd, cages=(cwd,))
    call = ToolCall(tool="shell.exec", args={"argv": argv}, dry_run=False)
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        result = await tool.execute(call, ctx)
        samples.append((time.perf_counter() - start) * 1000)
        if result.status != "ok":
            raise SystemExit(f"{argv} failed in the sandbox: {result.stderr}")
    return samples


def _tree(root: Path, dirs: int, files: int) -> Path:
    for d in range(dirs):
        sub = root / f"pkg{d}" / "src"
        sub.mkdir(parents=True)
        for f in range(files):
            (sub / f"m{f}.py").write_text("")
    return root


def layout_cost(runs: int, base: Path) -> None:
    from adjutant.safety.protection import Shield

    empty = base / "empty"
    empty.mkdir()
    repo = _tree(base / "repo", 200, 10)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    big = _tree(base / "big", 1000, 20)
    shield = Shield(str(base / "home"), str(base / "data"))
    print(f"\nthe bind layout per sandboxed call, {runs} runs each\n")
    print(f"{'cage':34} {'median':>8} {'p99':>8} {'walked':>7} {'mounts':>7}")
    for name, cages in (("none (a read)", []), ("empty directory", [empty]),
                        ("git repository, 2,000 files", [repo]),
                        ("20,000 files (over the budget)", [big])):
        samples = []
        for _ in range(runs):
            start = time.perf_counter()
            layout = sandbox.sandbox_layout(shield, [str(c) for c in cages])
            samples.append((time.perf_counter() - start) * 1000)
            layout.close()
        med, p99 = stats(samples)
        mounts = sum(a.startswith("--") and a != "--remount-ro" for a in layout.args)
        print(f"{name:34} {med:6.2f}ms {p99:6.2f}ms {layout.walked:7} {mounts:7}")


def plain(argv: list[str], runs: int, cwd: str) -> list[float]:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, cwd=cwd, capture_output=True, check=True)
        samples.append((time.perf_counter() - start) * 1000)
    return samples


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--runs", type=int)
    opts = parser.parse_args()
    if (why := sandbox.available()) is not None:
        print(f"sandbox unavailable: {why}; nothing measured")
        return 0
    try:
        import adjutant_system  # noqa: F401
    except ImportError:
        print("adjutant-system not installed: nothing measured")
        return 0
    runs = opts.runs or (20 if opts.quick else 200)
    print(f"shell.exec through the sandbox vs plain subprocess.run, {runs} runs each, asyncio\n")
    print(f"{'command':14} {'sandbox med':>11} {'p99':>8} {'plain med':>10} {'p99':>8} "
          f"{'ratio':>7}")
    with tempfile.TemporaryDirectory(prefix="adjutant-bench-") as cwd:
        for argv in COMMANDS:
            plain(argv, 3, cwd)  # warm the page cache for both
            anyio.run(through_tool, argv, 3, cwd)
            boxed_med, boxed_p99 = stats(anyio.run(through_tool, argv, runs, cwd))
            plain_med, plain_p99 = stats(plain(argv, runs, cwd))
            print(f"{' '.join(argv):14} {boxed_med:9.2f}ms {boxed_p99:6.2f}ms "
                  f"{plain_med:8.2f}ms {plain_p99:6.2f}ms {boxed_med / plain_med:6.1f}x")
        layout_cost(runs, Path(cwd))
    return 0


if __name__ == "__main__":
    sys.exit(main())
