"""Why adjutant-llamacpp runs all model work in one thread (`_thread.ModelThread`).

ggml's CPU backend parallelises with OpenMP, and OpenMP gives every OS thread that
starts parallel work its own team of helpers. This measures, in one process and on
one loaded model (the default preset, two threads), single-token decodes and 16-token
batches after a prompt: first from one thread only, then from the same thread once a
second thread, one that stays alive as anyio's worker threads do, has run one decode
(what anyio's pool for scoring and a new thread per generation did to every request;
a second thread that exits at once leaves no mark). Prints medians and the ratio.

    .venv/bin/python bench/model_thread.py [--context 1000] [--rounds 9] [--quick]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any


def measure(llama: Any, tokens: list[int], base: int, size: int, rounds: int) -> float:
    """Median seconds to evaluate ``size`` tokens after the first ``base``."""
    times = []
    for _ in range(rounds):
        llama._ctx.kv_cache_seq_rm(-1, base, -1)
        llama.n_tokens = base
        start = time.perf_counter()
        llama.eval(tokens[base:base + size])
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--context", type=int, default=1000, help="prompt tokens before")
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--quick", action="store_true", help="a smoke run (CI)")
    opts = parser.parse_args()
    if opts.quick:
        opts.context, opts.rounds = 64, 2
    from llama_cpp import Llama

    from adjutant_llamacpp._provider import _quiet_llama_cpp, default_model_path

    _quiet_llama_cpp()
    model = ThreadPoolExecutor(1)  # the model's own thread, as the provider has it

    def load() -> tuple[Any, list[int]]:
        llama = Llama(model_path=str(default_model_path()), n_ctx=opts.context + 64,
                      n_threads=2, n_threads_batch=2, verbose=False)
        text = b"The ferry leaves the north pier at seven and returns at noon. " * 200
        tokens = llama.tokenize(text)[:opts.context + 16]
        llama.eval(tokens[:opts.context])
        return llama, tokens

    llama, tokens = model.submit(load).result()

    def figures() -> tuple[float, float]:
        return (measure(llama, tokens, opts.context, 1, opts.rounds),
                measure(llama, tokens, opts.context, 16, max(opts.rounds // 3, 1)))

    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; "
          f"{opts.context} tokens held, 2 threads")
    one = model.submit(figures).result()
    other = ThreadPoolExecutor(1)  # a second thread that stays, as anyio's workers do
    other.submit(lambda: measure(llama, tokens, opts.context, 1, 1)).result()
    two = model.submit(figures).result()
    other.shutdown()
    print(f"{'':44} {'1 token':>9} {'16 tokens':>10}")
    print(f"{'one thread has run the model':44} {one[0] * 1000:7.0f}ms {one[1] * 1000:8.0f}ms")
    print(f"{'after a second thread ran it once':44} {two[0] * 1000:7.0f}ms "
          f"{two[1] * 1000:8.0f}ms")
    print(f"{'ratio (second / one)':44} {two[0] / one[0]:9.2f} {two[1] / one[1]:10.2f}")
    model.shutdown()


if __name__ == "__main__":
    main()
