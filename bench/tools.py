"""Per-call latency of the caged file tools, and search.grep against raw ripgrep.

``fs.read`` and ``fs.write`` are called directly (no operator, no policy), so what
is measured is the tool itself: the fd-relative cage walk, the fstat re-checks and,
for writes, the temporary file, fsync and atomic replace. ``search.grep`` runs
ripgrep in the bubblewrap sandbox; raw ``rg`` with the same options on the same
generated tree runs beside it, and the ratio is printed from the same run.

Run: ``.venv/bin/python bench/tools.py [--quick]``.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio

from adjutant_files import FsRead, FsWrite, SearchGrep
from adjutant_hookspecs import ToolCall, ToolContext


def stats(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(samples), ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]


def report(label: str, samples: list[float]) -> float:
    median, p99 = stats(samples)
    print(f"{label:40} {median:9.3f} {p99:9.3f} {len(samples):7}")
    return median


def tree(root: Path, files: int) -> None:
    for i in range(files):
        sub = root / f"d{i % 20}"
        sub.mkdir(exist_ok=True)
        body = "".join(f"line {j} of file {i} {'needle' if j % 50 == 7 else 'hay'}\n"
                       for j in range(200))
        (sub / f"f{i}.txt").write_text(body)


async def measure(root: Path, calls: int, greps: int) -> None:
    ctx = ToolContext(cwd=str(root), cages=(str(root),))
    (root / "small.txt").write_text("hello\n" * 100)
    print(f"{'call':40} {'median ms':>9} {'p99 ms':>9} {'calls':>7}")
    for label, tool, args in (
        ("fs.read  (600 B)", FsRead(), {"path": "d3/f3.txt"}),
        ("fs.write (600 B, fsync + replace)", FsWrite(), {"path": "small.txt"}),
    ):
        samples = []
        for i in range(calls):
            call_args = dict(args)
            if "content" in tool.declaration.args_schema["properties"]:
                call_args["content"] = f"hello {i}\n" * 60
            call = ToolCall(tool=tool.declaration.name, args=call_args)
            start = time.perf_counter()
            result = await tool.execute(call, ctx)
            samples.append((time.perf_counter() - start) * 1000)
            if result.status != "ok":
                raise SystemExit(f"{label}: {result.stderr}")
        report(label, samples)
    if shutil.which("rg") is None:
        print("ripgrep not installed: no search.grep figure")
        return
    grep = SearchGrep()
    call = ToolCall(tool="search.grep", args={"pattern": "needle", "max_count": 1000})
    argv, _ = grep.argv(call, ctx)
    tool_ms, raw_ms = [], []
    for _ in range(greps):
        start = time.perf_counter()
        result = await grep.execute(call, ctx)
        tool_ms.append((time.perf_counter() - start) * 1000)
        if result.status != "ok":
            raise SystemExit(f"search.grep: {result.stderr}")
        start = time.perf_counter()
        subprocess.run(argv, cwd=root, capture_output=True, check=False)  # noqa: ASYNC221 - raw baseline
        raw_ms.append((time.perf_counter() - start) * 1000)
    tool_median = report("search.grep (sandboxed rg)", tool_ms)
    raw_median = report("raw rg, same argv", raw_ms)
    print(f"\nsearch.grep / raw rg: {tool_median / raw_median:.2f}x "
          f"(+{tool_median - raw_median:.1f} ms: bubblewrap + prlimit + anyio process)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true")
    opts = parser.parse_args()
    files, calls, greps = (200, 200, 10) if opts.quick else (2000, 2000, 50)
    with tempfile.TemporaryDirectory(prefix="adjutant-bench-") as tmp:
        root = Path(tmp)
        tree(root, files)
        print(f"caged file tools, {files} files x 200 lines; asyncio\n")
        anyio.run(measure, root, calls, greps)
    return 0


if __name__ == "__main__":
    sys.exit(main())
