"""Planning quality with the embedded model on the golden set (tests/golden/).

Each golden request goes through the real operator in propose-only mode: the
planner narrows the tool menu, builds the prompt and the GBNF grammar, the embedded
llama.cpp model (Gemma 3 270M, temperature 0) answers, the reply is decoded and
every step checked by the pipeline (schema, policies, dry-run), with the operator's
retries. Figures, per configuration:

- valid replies: a plan or response that decoded (goal 100%);
- right tool, single-step requests: the plan's first tool is the expected one
  (goal at least 85%; unaided the model gets about one in four);
- exact sequence, multi-step requests: the tools in the expected order;
- seconds per request.

Configurations: the planner as shipped (menu of 4), and the same with narrowing off
(every tool offered), so the gain is visible in one run.

Run: ``.venv/bin/python bench/planning.py [--quick] [--limit N]``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "tests" / "golden"


def load(limit: int | None) -> list[dict[str, Any]]:
    entries = [json.loads(line) for line in (GOLDEN / "requests.jsonl").read_text().splitlines()
               if line.strip()]
    if limit is None:
        return entries
    # a spread of kinds, not just the first lines
    by_kind: dict[str, list[dict[str, Any]]] = {}
    for entry in entries:
        by_kind.setdefault(entry["kind"], []).append(entry)
    picked: list[dict[str, Any]] = []
    while len(picked) < limit and any(by_kind.values()):
        for kind in list(by_kind):
            if by_kind[kind] and len(picked) < limit:
                picked.append(by_kind[kind].pop(0))
    return picked


def workspace(into: Path) -> Path:
    target = into / "workspace"
    shutil.copytree(GOLDEN / "workspace", target)
    env = {"PATH": "/usr/bin:/bin", "HOME": str(into), "GIT_CONFIG_NOSYSTEM": "1"}
    for argv in (["init", "-q", "-b", "main"], ["config", "user.name", "Bench"],
                 ["config", "user.email", "bench@example.com"], ["add", "."],
                 ["commit", "-q", "-m", "golden workspace"]):
        subprocess.run(["git", *argv], cwd=target, env=env, check=True, capture_output=True)
    return target


async def run(entries: list[dict[str, Any]], menu: int) -> dict[str, Any]:
    import adjutant_files
    import adjutant_git
    import adjutant_system
    from adjutant import Copilot, ModelPreset, Profile
    from adjutant.testing import Harness
    from adjutant_llamacpp import LlamaCpp

    provider = LlamaCpp()
    profile = Profile(model=ModelPreset(provider="llama-cpp", temperature=0.0, max_tokens=160),
                      tool_menu=menu)
    tally = {"valid": 0, "single": 0, "single_ok": 0, "multi": 0, "multi_ok": 0,
             "seconds": 0.0, "n": len(entries)}
    with tempfile.TemporaryDirectory() as tmp:
        async with Harness(adjutant_files, adjutant_system, adjutant_git,
                           provider=provider, profile=profile) as h:  # type: ignore[arg-type]
            space = workspace(Path(tmp))
            copilot = Copilot(h.kernel, cwd=str(space))
            for entry in entries:
                start = time.perf_counter()
                outcome = await copilot.handle(entry["request"])
                tally["seconds"] += time.perf_counter() - start
                tools = [s.tool for s in outcome.plan.steps] if outcome.plan else []
                tally["valid"] += outcome.status in ("proposed", "answered")
                expected = [s["tool"] for s in entry["steps"]]
                if entry["kind"] == "single":
                    tally["single"] += 1
                    tally["single_ok"] += bool(tools) and tools[0] == expected[0]
                elif entry["kind"] == "multi":
                    tally["multi"] += 1
                    tally["multi_ok"] += tools == expected
        await provider.aclose()
    return tally


def pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.0f}% ({part}/{whole})" if whole else "n/a"


async def main(limit: int | None, configs: list[int]) -> None:
    try:
        import adjutant_llamacpp  # noqa: F401
    except ImportError:
        print("skipped: adjutant-llamacpp is not installed")
        return
    entries = load(limit)
    print(f"golden requests: {len(entries)}")
    for menu in configs:
        tally = await run(entries, menu)
        label = f"narrowed to {menu} tools" if menu else "every tool offered"
        print(f"{label:>24}: valid {pct(tally['valid'], tally['n'])}, right tool (single) "
              f"{pct(tally['single_ok'], tally['single'])}, exact sequence (multi) "
              f"{pct(tally['multi_ok'], tally['multi'])}, "
              f"{tally['seconds'] / max(1, tally['n']):.1f} s/request", flush=True)
    print("goals: valid 100%, right tool at least 85%")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="6 requests, shipped planner only")
    parser.add_argument("--limit", type=int, default=None)
    opts = parser.parse_args()
    anyio.run(main, 6 if opts.quick else opts.limit, [4] if opts.quick else [4, 0])
