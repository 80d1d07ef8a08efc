"""``doc.summarize`` on the embedded model: a generated 20-page PDF summarised with
map-reduce (``--quick``: 2 pages), timed end to end, with the time per model call.

Run: ``.venv/bin/python bench/summarize.py [--quick] [--pages N]``.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "plugins" / "adjutant-tasks" / "tests"))

PARAGRAPH = ("The committee reviewed the quarterly results of the cooperative. Sales of "
             "regional produce rose by {n} percent, while transport costs fell after the "
             "new depot opened. Members asked for a second cold store and for longer "
             "opening hours on Saturdays; the board will decide at the next meeting. ")


class Context:
    """The task context, in memory (the benchmark times the capability, not the queue)."""

    def __init__(self, kernel: Any, inputs: dict[str, Any], artifacts: Path) -> None:
        self.task_id, self.inputs, self.attempt = "bench", inputs, 1
        self.artifacts, self.kernel = artifacts, kernel
        self.state: Any = None
        self.calls: list[float] = []

    async def progress(self, fraction: float, message: str = "") -> None:
        self.calls.append(time.perf_counter())
        print(f"  {time.perf_counter() - self.calls[0]:7.1f} s  {message}", flush=True)

    async def save_checkpoint(self, state: Any) -> None:
        self.state = state

    async def load_checkpoint(self) -> Any:
        return self.state


async def run(pages: int) -> None:
    from pdfs import text_pdf

    from adjutant import ModelPreset, Profile
    from adjutant.testing import Harness
    from adjutant_llamacpp import LlamaCpp
    from adjutant_tasks import TasksPlugin
    from adjutant_tasks._summarize import SummarizeCapability

    provider = LlamaCpp(context_size=2048)
    profile = Profile(model=ModelPreset(provider="llama-cpp", model="gemma3-270m",
                                        temperature=0.0, context_size=2048))
    with tempfile.TemporaryDirectory() as tmp:
        pdf = text_pdf(Path(tmp) / "report.pdf",
                       [PARAGRAPH.format(n=n) * 4 for n in range(pages)])
        inputs = {"documents": [{"path": str(pdf),
                                 "sha256": hashlib.sha256(pdf.read_bytes()).hexdigest()}]}
        async with Harness(TasksPlugin(), provider=provider, profile=profile) as h:  # type: ignore[arg-type]
            context = Context(h.kernel, inputs, Path(tmp) / "out")
            start = time.perf_counter()
            outputs = await SummarizeCapability().run(context)
            total = time.perf_counter() - start
        await provider.aclose()
    parts = int(outputs["parts"])
    calls = parts + (1 if parts > 1 else 0)
    print(f"pages                 {outputs['pages']:>8}")
    print(f"map pieces            {parts:>8}")
    print(f"model calls           {calls:>8}  (maps + reduce)")
    print(f"total s               {total:>8.1f}")
    print(f"s per page            {total / max(1, int(outputs['pages'])):>8.2f}")
    print(f"s per model call      {total / calls:>8.2f}")
    print(f"summary characters    {len(outputs['summary']):>8}")
    print("summary:", " ".join(str(outputs["summary"]).split())[:300])
    print("goal: none set; the figure to watch is seconds per model call on this machine")


def main() -> int:
    import anyio

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="2 pages (CI smoke run)")
    parser.add_argument("--pages", type=int, default=20)
    opts = parser.parse_args()
    anyio.run(run, 2 if opts.quick else opts.pages)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
