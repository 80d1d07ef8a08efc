"""Streaming latency: what the framework adds per token, and time to the first token.

1. Per-token overhead. A provider yields N tokens, stamping each with
   ``perf_counter_ns()`` as it yields; the operator's generation loop publishes each
   as a `TextMessageContent` event; a bus subscriber stamps each on receipt. The
   difference is what Adjutant adds between the backend and a UI. Baseline in the
   same run: the same provider iterated directly (provider -> consumer, no
   operator, no bus). Goal: p99 under 1 ms.
2. Time to the first plan token with the embedded model (llama.cpp, Gemma 3 270M,
   the planner's grammar and prompt), model already loaded, and the time to the
   whole plan; skipped when adjutant-llamacpp is not installed.

Run: ``.venv/bin/python bench/stream.py [--quick]``.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import AsyncIterator
from contextlib import aclosing
from typing import Any

import anyio
import anyio.lowlevel

from adjutant import Copilot
from adjutant.testing import Harness
from adjutant_hookspecs import CompletionChunk, CompletionRequest, TextMessageContent

GOAL_P99_MS = 1.0


class Stamping:
    """Yields ``n`` tokens, recording when each left the provider."""

    name = "stamping"

    def __init__(self, n: int) -> None:
        self.n = n
        self.sent: dict[str, int] = {}

    async def complete(self, request: CompletionRequest) -> AsyncIterator[CompletionChunk]:
        for i in range(self.n):
            token = f"t{i} "
            self.sent[token] = time.perf_counter_ns()
            yield CompletionChunk(text=token)
            await anyio.lowlevel.checkpoint()  # a real backend waits for its next token
        yield CompletionChunk(text='{"type":"response","text":"done"}', finish_reason="stop")

    async def aclose(self) -> None:
        pass


def percentiles(samples: list[float]) -> tuple[float, float, float]:
    ordered = sorted(samples)
    def at(q: float) -> float:
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))]
    return statistics.median(ordered), at(0.99), ordered[-1]


async def through_the_operator(n: int) -> list[float]:
    provider = Stamping(n)
    from adjutant import ModelPreset, Profile

    profile = Profile(model=ModelPreset(provider="stamping"))
    received: list[float] = []
    async with Harness(provider=provider, profile=profile) as h:  # type: ignore[arg-type]
        copilot = Copilot(h.kernel)

        async def subscriber(sub: Any) -> None:
            async for envelope in sub:
                if isinstance(envelope.event, TextMessageContent):
                    delta = envelope.event.delta
                    if delta in provider.sent:
                        received.append((time.perf_counter_ns() - provider.sent[delta]) / 1e6)
                        if len(received) == n:
                            return

        sub = h.kernel.bus.subscribe()
        async with anyio.create_task_group() as tg:
            tg.start_soon(subscriber, sub)
            await copilot.handle("go")
    return received


async def direct(n: int) -> list[float]:
    provider = Stamping(n)
    latencies = []
    async with aclosing(provider.complete(CompletionRequest(prompt="x"))) as stream:
        async for chunk in stream:
            if chunk.text in provider.sent:
                latencies.append((time.perf_counter_ns() - provider.sent[chunk.text]) / 1e6)
    return latencies


async def first_token(rounds: int) -> None:
    try:
        from adjutant_llamacpp import DEFAULT_MODEL, LlamaCpp
    except ImportError:
        print("embedded model: skipped (adjutant-llamacpp not installed)")
        return
    from adjutant.operator.planner import END, Planner
    from adjutant_hookspecs import ToolDeclaration, ToolSafety

    read = ToolDeclaration(
        name="fs.read", version="1", description="Read a text file.",
        args_schema={"type": "object", "properties": {"path": {"type": "string"}},
                     "required": ["path"], "x-adjutant-requests": ["show me notes.txt"]},
        safety=ToolSafety(), examples=({"path": "notes.txt"},))
    planner = Planner({"fs.read": read})
    provider = LlamaCpp()
    start = time.perf_counter()
    await provider.load_model(DEFAULT_MODEL)  # the shipped default
    print(f"embedded model load: {(time.perf_counter() - start) * 1000:.0f} ms")
    firsts, wholes = [], []
    for _ in range(rounds):
        request = CompletionRequest(prompt=planner.prompt("open README.md", ["fs.read"],
                                                          system="Answer with JSON."),
                                    grammar=planner.grammar(["fs.read"]), stop=(END,),
                                    max_tokens=64, temperature=0.0)
        start = time.perf_counter()
        first = None
        async with aclosing(provider.complete(request)) as stream:
            async for chunk in stream:
                if first is None and chunk.text:
                    first = time.perf_counter() - start
        firsts.append((first or 0) * 1000)
        wholes.append((time.perf_counter() - start) * 1000)
    await provider.aclose()
    print(f"embedded model, time to first plan token: median {statistics.median(firsts):.0f} ms"
          f"; whole plan: median {statistics.median(wholes):.0f} ms ({rounds} rounds)")


async def main(quick: bool) -> None:
    n = 2_000 if quick else 20_000
    runs = (("direct (baseline)", direct), ("operator + bus", through_the_operator))
    for backend_note, run in runs:
        samples = await run(n)
        p50, p99, worst = percentiles(samples)
        print(f"{backend_note:>20}: {len(samples)} tokens, per-token latency p50 {p50:.3f} ms, "
              f"p99 {p99:.3f} ms, max {worst:.3f} ms")
    print(f"goal: framework p99 under {GOAL_P99_MS} ms")
    await first_token(2 if quick else 5)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true")
    anyio.run(main, parser.parse_args().quick)
