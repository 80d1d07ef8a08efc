"""The memory plugin's relevance gate: what retrieval adds to each request's prompt,
with the gate off (every hit passing ``min_coverage``, as before) and on (passages only
for a question about the project, only its strongest hits).

For each request: the characters of the memory context, its tokens by the shipped
model's tokenizer (qwen2.5-coder-0.5b, loaded vocabulary only; characters / 4 when it
is not downloaded) and the passages given. On two projects: the plugin tests' fixture
and this repository (the working tree; ``--project`` for another). Working memory is
empty, so what is counted is retrieval alone.

Run: ``.venv/bin/python bench/memory_gate.py [--project PATH]``. Figures, never a
pass/fail. The time a token costs is measured in the stop notes (issue 28: +114 prompt
tokens took the first token from 2.0 to 4.8 s on the loaded 2-core machine).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import anyio

HERE = Path(__file__).resolve().parent
MODEL = Path.home() / ".cache/adjutant/models/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"

#: (request, kind): questions about the project, about the machine, commands
REQUESTS = [
    ("where do we parse the config?", "project"),
    ("how do I run the tests?", "project"),
    ("where is the action log stored?", "project"),
    ("how does the sandbox run a command?", "project"),
    ("what files are in this folder?", "machine"),
    ("how much disk is free?", "machine"),
    ("how much free memory is there?", "machine"),
    ("what time is it?", "machine"),
    ("create a file notes.txt saying hello", "command"),
    ("run the tests", "command"),
    ("rename README.md to README.txt", "command"),
]


def tokenizer() -> tuple[str, Callable[[str], int]]:
    if MODEL.is_file():
        try:
            from llama_cpp import Llama

            llm = Llama(model_path=str(MODEL), vocab_only=True, verbose=False)
            return ("qwen2.5-coder tokens",
                    lambda text: len(llm.tokenize(text.encode(), add_bos=False)) if text else 0)
        except ImportError:
            pass
    return "characters / 4", lambda text: len(text) // 4


async def measure(project: Path, label: str, count: Callable[[str], int], unit: str) -> None:
    from adjutant import ModelPreset, Profile
    from adjutant.testing import Harness
    from adjutant_memory import MemoryPlugin

    print(f"\n{label}: {project}")
    rows: dict[str, list[tuple[int, int, int]]] = {}
    first: dict[str, str] = {}
    for gate in (False, True):
        profile = Profile(model=ModelPreset(provider="scripted"),
                          plugins={"memory": {"gate": gate}})
        async with Harness(MemoryPlugin, profile=profile) as h:
            plugin = h.kernel.plugin("memory")
            assert isinstance(plugin, MemoryPlugin)
            service = plugin.require()
            await service.refresh(str(project), force=True)
            chunks = service.index(str(project)).counts()["chunks"]
            for request, _ in REQUESTS:
                memory = await service.context(str(project), request)
                text = str(memory.get("text") or "")
                rows.setdefault(request, []).append(
                    (len(text), count(text), len(memory["sources"])))
                if gate and memory["sources"]:
                    first[request] = memory["sources"][0]
    print(f"  {chunks} chunks; per request: chars / {unit} / passages, gate off -> on")
    totals = {"project": [0, 0], "machine": [0, 0], "command": [0, 0]}
    for request, kind in REQUESTS:
        (c0, t0, p0), (c1, t1, p1) = rows[request]
        totals[kind][0] += t0
        totals[kind][1] += t1
        print(f"  [{kind:7}] {request:42} {c0:4} / {t0:3} / {p0}  ->  {c1:4} / {t1:3} / {p1}"
              + (f"  {first[request]}" if request in first else ""))
    for kind, (off, on) in totals.items():
        n = sum(1 for _, k in REQUESTS if k == kind)
        print(f"  mean {unit} per {kind} request: {off / n:6.1f} -> {on / n:6.1f}")


async def main_async(project: Path) -> None:
    sys.path.insert(0, str(HERE.parent / "plugins" / "adjutant-memory" / "tests"))
    from memkit import write_project

    unit, count = tokenizer()
    with tempfile.TemporaryDirectory(prefix="bench-gate-") as tmp:
        await measure(write_project(Path(tmp) / "p"), "the fixture project", count, unit)
    await measure(project, "this repository", count, unit)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--project", type=Path, default=HERE.parent)
    opts = parser.parse_args()
    anyio.run(main_async, opts.project.resolve())
    return 0


if __name__ == "__main__":
    sys.exit(main())
