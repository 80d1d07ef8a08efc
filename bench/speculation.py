"""adjutant-llamacpp's greedy loop (``LlamaCpp(speculate=0)``, or N drafted tokens per
decode) against llama-cpp-python's (``off``) on real prompts, in one process,
alternating: the planner's replies to golden requests (captured by running the
copilot over them) and the copilot agent's answer prompt
with its grammar, at temperature 0. For each side: tokens generated, drafted,
accepted, decode steps, tokens replayed for a close choice, and seconds per generated
token; then the ratio, and whether every reply was the same text.

    nice -n 10 .venv/bin/python bench/speculation.py [--limit 8] [--settings off,0,3] \\
        [--rounds 1] [--model gemma3-270m]

Other sessions may share the cores: the load average is printed, and only the ratio
within this run means anything.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from contextlib import aclosing
from pathlib import Path
from typing import Any

import anyio

sys.path.insert(0, str(Path(__file__).parent))

ROOT = Path(__file__).resolve().parents[1]


async def planner_requests(limit: int) -> list[Any]:
    """The completion requests the planner makes for ``limit`` golden requests (the
    reply after the scored choice: what `complete` generates)."""
    from planning import load, workspace

    import adjutant_files
    import adjutant_git
    import adjutant_system
    from adjutant import Copilot, ModelPreset, Profile
    from adjutant.testing import Harness
    from adjutant_llamacpp import LlamaCpp

    seen: list[Any] = []

    class Recording(LlamaCpp):
        async def complete(self, request: Any) -> Any:
            seen.append(request)
            async for chunk in super().complete(request):
                yield chunk

    provider = Recording(speculate=0, keep_scores=False)
    profile = Profile(model=ModelPreset(provider="llama-cpp", model="qwen2.5-coder-0.5b",
                                        temperature=0.0, max_tokens=200))
    with tempfile.TemporaryDirectory() as tmp:
        async with Harness(adjutant_files, adjutant_system, adjutant_git,
                           provider=provider, profile=profile) as h:  # type: ignore[arg-type]
            copilot = Copilot(h.kernel, cwd=str(workspace(Path(tmp))))
            for entry in load("tuning", limit):
                await copilot.handle(entry["request"])
    await provider.aclose()
    return seen


def copilot_requests() -> list[Any]:
    """The copilot agent's answer prompt (system, grammar) for the first lines of two
    scripted meetings, at temperature 0 (the agent itself asks at 0.1, where
    speculation does not apply)."""
    from adjutant_copilot_agent._analysis import GRAMMAR, SYSTEM, build_prompt
    from adjutant_hookspecs import CompletionRequest

    meetings = json.loads((ROOT / "bench" / "copilot_heldout2.json").read_text())
    out = []
    for meeting in meetings[:2]:
        lines = [line[-1] for line in meeting["lines"][:6]]  # [speaker, words]
        out.append(CompletionRequest(prompt=build_prompt("", lines), system=SYSTEM,
                                     grammar=GRAMMAR, temperature=0.0, max_tokens=300))
    return out


async def generate(provider: Any, request: Any) -> tuple[str, dict[str, float], float]:
    started = time.perf_counter()
    async with aclosing(provider.complete(request)) as stream:
        text = "".join([chunk.text async for chunk in stream if chunk.text])
    return text, dict(provider.timings), time.perf_counter() - started


async def main(opts: argparse.Namespace) -> None:
    from adjutant_hookspecs import CompletionRequest
    from adjutant_llamacpp import LlamaCpp

    print(f"load average at start: {os.getloadavg()}", flush=True)
    requests = await planner_requests(opts.limit)
    kinds = ["planner"] * len(requests)
    copilot = copilot_requests()
    requests += copilot
    kinds += ["copilot"] * len(copilot)
    requests = [CompletionRequest(**{**{f: getattr(r, f) for f in r.__struct_fields__},
                                     "temperature": 0.0,
                                     "model": opts.model or r.model}) for r in requests]
    print(f"{len(requests)} prompts ({kinds.count('planner')} planner, "
          f"{kinds.count('copilot')} copilot)", flush=True)
    settings: list[int | None] = [None if v == "off" else int(v)
                                  for v in opts.settings.split(",")]
    provider = LlamaCpp(keep_scores=False)
    sides: dict[int | None, dict[str, list[float]]] = {s: {} for s in settings}
    differ: dict[int | None, int] = dict.fromkeys(settings, 0)
    repeat_differs = 0
    for _ in range(opts.rounds):
        for index, request in enumerate(requests):
            # once, not timed: a request's first run may not be its repeat's (the
            # forced tokens evaluated with the prompt's last chunk, then the last one
            # alone: llama.cpp rounds by batch shape), so every timed run is a repeat
            provider.speculate = settings[0]
            first, _, _ = await generate(provider, request)
            texts = {}
            order = settings if index % 2 == 0 else settings[::-1]
            for setting in order:
                provider.speculate = setting
                text, timings, _ = await generate(provider, request)
                texts[setting] = text
                tally = sides[setting]
                for key in ("generated_tokens", "drafted_tokens", "accepted_tokens",
                            "decode_steps", "replayed_tokens"):
                    tally.setdefault(key, []).append(timings.get(key, 0))
                # the first token comes from the prompt: per generated token after it
                tally.setdefault("generating_s", []).append(
                    timings["per_token_s"] * max(timings["generated_tokens"] - 1, 1))
                tally.setdefault(f"{kinds[index]}_per_token_s", []).append(
                    timings["per_token_s"])
            repeat_differs += first != texts[settings[0]]
            for setting in settings[1:]:
                if texts[setting] != texts[settings[0]]:
                    differ[setting] += 1
                    print(f"  DIFFERENT ({kinds[index]} {index}, {setting}):\n"
                          f"    {texts[settings[0]]!r}\n    {texts[setting]!r}", flush=True)
    await provider.aclose()
    print(f"load average at end: {os.getloadavg()}")
    total = opts.rounds * len(requests)
    print(f"a request's first run differed from its repeats (any setting): "
          f"{repeat_differs} of {total}")
    per_token = {}
    for setting, tally in sides.items():
        tokens = sum(tally["generated_tokens"])
        seconds = sum(tally["generating_s"])
        per_token[setting] = seconds / max(tokens - len(tally["generated_tokens"]), 1)
        label = ("off (create_completion)" if setting is None
                 else f"speculate={setting}")
        kinds_said = ", ".join(
            f"{k.split('_')[0]} median {statistics.median(v):.3f}"
            for k, v in tally.items() if k.endswith("_per_token_s"))
        print(f"{label:<24} tokens {tokens:5.0f}  drafted {sum(tally['drafted_tokens']):5.0f}"
              f"  accepted {sum(tally['accepted_tokens']):5.0f}  decode steps "
              f"{sum(tally['decode_steps']):5.0f}  replayed {sum(tally['replayed_tokens']):4.0f}"
              f"  s/token {per_token[setting]:.4f} ({kinds_said});"
              f" same text as {settings[0]}: {total - differ[setting]} of {total}")
    for setting in settings[1:]:
        print(f"ratio {setting}/{settings[0]}, seconds per generated token: "
              f"{per_token[setting] / per_token[settings[0]]:.3f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=8, help="golden planner requests")
    parser.add_argument("--settings", default="off,0,3",
                        help="speculate values to compare, the first the reference "
                             "(off: llama-cpp-python's own loop)")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--model", default=None,
                        help="generate with this preset (the prompts are still the "
                             "default model's planner's)")
    anyio.run(main, parser.parse_args())
