"""adjutant-memory's vector indexes: exact (numpy, the default) against hnswlib's HNSW
graph (the ``hnsw`` extra), at 10k and 100k chunks, in the default model's 384
dimensions and the static model's 64.

Vectors are random (clustered around 200 centres, so neighbours exist); queries are
perturbed stored vectors. For each: build time, query p50/p99 (k=5, one query at a
time, as a request does) and recall@5 of HNSW against exact.

Run: ``nice -n 10 .venv/bin/python bench/memory_hnsw.py [--quick]``. Figures, never a
pass/fail.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np


def percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return (statistics.median(ordered) * 1000,
            ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1000)


def run(count: int, dim: int, queries: int) -> None:
    from adjutant_memory._vectors import ExactIndex, HnswIndex

    rng = np.random.default_rng(11)
    centres = rng.standard_normal((200, dim)).astype(np.float32)
    vectors = (centres[rng.integers(0, 200, count)]
               + 0.6 * rng.standard_normal((count, dim))).astype(np.float32)
    asks = (vectors[rng.integers(0, count, queries)]
            + 0.3 * rng.standard_normal((queries, dim))).astype(np.float32)
    t = time.perf_counter()
    exact = ExactIndex(vectors)
    exact_build = time.perf_counter() - t
    t = time.perf_counter()
    hnsw = HnswIndex(dim, threads=2)
    hnsw.sync(list(range(count)), vectors)
    hnsw_build = time.perf_counter() - t
    results = {}
    for name, index in (("exact", exact), ("hnsw", hnsw)):
        samples, answers = [], []
        for q in asks:
            t = time.perf_counter()
            answers.append({i for i, _ in index.search(q, 5)})
            samples.append(time.perf_counter() - t)
        results[name] = (percentiles(samples), answers)
    recall = statistics.mean(len(a & b) / 5 for a, b in
                             zip(results["exact"][1], results["hnsw"][1], strict=True))
    for name, build in (("exact", exact_build), ("hnsw", hnsw_build)):
        (p50, p99), _ = results[name]
        print(f"{count:>7} x {dim:3}  {name:5}  build {build:7.2f} s  query p50 {p50:6.2f} ms"
              f"  p99 {p99:6.2f} ms" + (f"  recall@5 vs exact {recall:.3f}"
                                        if name == "hnsw" else ""))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="10k only")
    opts = parser.parse_args()
    for count in (10_000,) if opts.quick else (10_000, 100_000):
        for dim in (384, 64):
            run(count, dim, 200)
    return 0


if __name__ == "__main__":
    sys.exit(main())
