"""The planner's bank of worked examples (core/src/adjutant/operator/bank.jsonl) against
the real tools: every call fits its tool's schema, states no value its request does
not, and no request is one of the golden sets' (the bank was written apart from them;
a test set the planner learnt from would flatter it)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from adjutant.operator._bank import bundled

GOLDEN = Path(__file__).parent / "golden"
packs = [pytest.importorskip(name) for name in (
    "adjutant_files", "adjutant_system", "adjutant_git", "adjutant_memory", "adjutant_tasks")]


def _declarations() -> dict[str, Any]:
    import anyio

    from adjutant.testing import Harness

    files, system, git, memory, tasks = packs
    plugins = (files, system, git, memory.MemoryPlugin(), tasks.TasksPlugin())

    async def load() -> dict[str, Any]:
        async with Harness(*plugins) as h:
            return {n: t.declaration for n, t in h.kernel.tools.items()}

    return anyio.run(load)


TOOLS = _declarations()
BANK = bundled()
#: Values a request implies rather than states: an enum's choice ("how many cores?" ->
#: sections ["cpu"]), a flag, a whole new text or patch the request describes.
IMPLIED = {"sections", "kind", "content", "patch", "text", "when", "capability",
           "cron"}  # a cron line is what "every Friday at 17:00" says, not its words


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def test_the_bank_is_large_and_covers_every_bundled_tool() -> None:
    assert len(BANK) >= 600
    first = {e.label for e in BANK}
    assert set(TOOLS) <= first, set(TOOLS) - first
    assert sum(not e.steps for e in BANK) >= 60  # answers in words
    assert sum(len(e.steps) > 1 for e in BANK) >= 60  # requests of several steps


@pytest.mark.parametrize("index", range(len(BANK)))
def test_each_call_fits_its_tool_and_states_only_the_requests_values(index: int) -> None:
    example = BANK[index]
    asked = example.request.lower()
    for tool, args in example.steps:
        jsonschema.Draft202012Validator(TOOLS[tool].args_schema).validate(args)
        for key, value in args.items():
            values = value if isinstance(value, list) else [value]
            for item in values:
                if key in IMPLIED or isinstance(item, (bool, dict)):
                    continue
                assert str(item).lower() in asked, (key, item, example.request)


def test_no_bank_request_is_a_golden_request() -> None:
    """Apart from every set that measures the planner: no request the same, none
    sharing three quarters of its words with one."""
    bank = [set(_words(e.request)) for e in BANK]
    for name in ("requests", "heldout", "heldout2", "heldout3", "heldout4", "heldout5",
                 "heldout6", "heldout7", "heldout8", "heldout9", "heldout10",
                 "heldout11", "heldout12", "heldout13", "heldout14", "heldout15",
                 "heldout16", "heldout17", "heldout18", "heldout19",
                 "heldout20", "heldout21", "heldout22", "heldout23",
                 "heldout24", "heldout25", "heldout26"):
        for line in (GOLDEN / f"{name}.jsonl").read_text().splitlines():
            asked = set(_words(json.loads(line)["request"]))
            for words in bank:
                overlap = len(asked & words) / max(1, len(asked | words))
                assert overlap < 0.75, (name, sorted(asked))
