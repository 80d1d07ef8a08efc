"""Spoken requests, end to end on this machine: espeak-ng says each request, Whisper
base (adjutant-stt) transcribes it, and the embedded model plans both the typed and
the heard text in the golden workspace (propose-only: nothing runs).

Figures, per set (``tuning``: the requests the planner was tuned on, ``heldout``:
written blind, never tuned on; adjutant-stt's vocabulary hint was chosen on neither):

- word error rate of the transcripts against the typed requests;
- same first tool: the heard request's plan starts with the typed one's tool;
- right first tool, typed and heard: against the set's expected tool, so what speech
  costs is the difference between the two.

Run: ``.venv/bin/python bench/spoken.py [--quick] [--limit N] [--sets tuning,heldout]``
(needs espeak-ng; ``--quick`` takes 4 requests of the held-out set).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio

sys.path.insert(0, str(Path(__file__).parent))
from planning import load, workspace  # the golden sets and workspace


def espeak(text: str, path: Path) -> Path:
    subprocess.run(["espeak-ng", "-v", "en-us", "-w", str(path), text], check=True)
    return path


def first_tool(outcome: Any) -> str | None:
    return outcome.plan.steps[0].tool if outcome.plan and outcome.plan.steps else None


async def measure(name: str, entries: list[dict[str, Any]], tmp: Path) -> None:
    import adjutant_files
    import adjutant_git
    import adjutant_system
    from adjutant import Copilot, ModelPreset, Profile
    from adjutant.testing import Harness
    from adjutant_llamacpp import LlamaCpp
    from adjutant_stt import transcribe
    from adjutant_stt.wer import word_errors

    heard, edits, words, spent, audio_s = [], 0, 0, 0.0, 0.0
    for index, entry in enumerate(entries):
        wav = espeak(entry["request"], tmp / f"{name}-{index}.wav")
        start = time.perf_counter()
        transcript = await anyio.to_thread.run_sync(transcribe, str(wav))
        spent += time.perf_counter() - start
        audio_s += transcript.duration_s
        wrong, total = word_errors(entry["request"], transcript.text)
        edits, words = edits + wrong, words + total
        heard.append(transcript.text)
    provider = LlamaCpp()
    profile = Profile(model=ModelPreset(provider="llama-cpp", model="qwen2.5-coder-0.5b",
                                        temperature=0.0, max_tokens=200))
    same = typed_right = heard_right = 0
    async with Harness(adjutant_files, adjutant_system, adjutant_git, provider=provider,
                       profile=profile) as h:  # type: ignore[arg-type]
        copilot = Copilot(h.kernel, cwd=str(workspace(tmp / name)))
        for entry, text in zip(entries, heard, strict=True):
            typed = first_tool(await copilot.handle(entry["request"]))
            spoken = first_tool(await copilot.handle(text))
            expected = entry["steps"][0]["tool"]
            same += typed == spoken
            typed_right += typed == expected
            heard_right += spoken == expected
            mark = "" if typed == spoken else "   <- differs"
            print(f"  {entry['id']}: {entry['request']!r}\n      heard {text!r}: "
                  f"{typed} / {spoken} (expected {expected}){mark}", flush=True)
    await provider.aclose()
    n = len(entries)
    print(f"\n{name}: {n} spoken single-step requests; word error rate "
          f"{edits / max(words, 1):.1%}; same first tool as typed {same}/{n}; right "
          f"first tool typed {typed_right}/{n}, heard {heard_right}/{n}; transcription "
          f"real-time factor {spent / max(audio_s, 1e-9):.3f}\n", flush=True)


async def main(opts: argparse.Namespace) -> int:
    if shutil.which("espeak-ng") is None:
        print("skipped: espeak-ng is not installed (./dev installs it)")
        return 0
    for name in opts.sets.split(","):
        singles = [e for e in load(name, None) if e["kind"] == "single"]
        step = max(1, len(singles) // opts.limit)
        with tempfile.TemporaryDirectory() as tmp:
            await measure(name, singles[::step][:opts.limit], Path(tmp))
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="4 held-out requests (CI)")
    parser.add_argument("--limit", type=int, default=20, help="requests per set")
    parser.add_argument("--sets", default="tuning,heldout")
    options = parser.parse_args()
    if options.quick:
        options.limit, options.sets = 4, "heldout"
    sys.exit(anyio.run(main, options))
