"""The golden regression set (tests/golden/requests.jsonl) in CI, with the scripted
provider: the data is coherent with the real tools, the planner's narrowing finds
the expected tools, and each expected plan goes through the real operator and
pipeline (propose-only: checked and dry-run, nothing executed).

The same set measures the embedded model in `bench/planning.py`."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any

import jsonschema
import pytest

GOLDEN = Path(__file__).parent / "golden"
ENTRIES = [json.loads(line) for line in (GOLDEN / "requests.jsonl").read_text().splitlines()
           if line.strip()]
packs = pytest.importorskip("adjutant_files"), pytest.importorskip("adjutant_system"), \
    pytest.importorskip("adjutant_git")
TOOLS = {cls.declaration.name: cls.declaration for pack in packs for cls in pack.TOOLS}
FLOWS = {"fix-error", "feature-branch-commit", "run-and-explain", "list-python-processes"}


def test_the_set_covers_every_tool_and_flow() -> None:
    assert len(ENTRIES) >= 60
    assert len({e["id"] for e in ENTRIES}) == len(ENTRIES), "ids are unique"
    singles = Counter(e["steps"][0]["tool"] for e in ENTRIES if e["kind"] == "single")
    assert {t for t, n in singles.items() if n >= 2} == set(TOOLS), singles
    assert {e["flow"] for e in ENTRIES if e["flow"]} == FLOWS
    assert sum(e["kind"] == "multi" for e in ENTRIES) >= 10
    assert sum(e["kind"] == "response" for e in ENTRIES) >= 3


@pytest.mark.parametrize("entry", ENTRIES, ids=[e["id"] for e in ENTRIES])
def test_expected_steps_fit_the_real_schemas(entry: dict[str, Any]) -> None:
    assert (len(entry["steps"]) == 1) == (entry["kind"] == "single")
    assert (not entry["steps"]) == (entry["kind"] == "response")
    for step in entry["steps"]:
        schema = TOOLS[step["tool"]].args_schema
        jsonschema.Draft202012Validator(schema).validate(step["args"])


def menu_recall(size: int) -> tuple[float, float]:
    """Share of single-step requests whose tool is in the menu, and share of
    multi-step requests whose every tool is."""
    from adjutant.operator.planner import Planner

    planner = Planner(TOOLS)
    single = [e for e in ENTRIES if e["kind"] == "single"]
    multi = [e for e in ENTRIES if e["kind"] == "multi"]
    hit_single = sum(e["steps"][0]["tool"] in planner.menu(e["request"], size) for e in single)
    hit_multi = sum({s["tool"] for s in e["steps"]} <= set(planner.menu(e["request"], size))
                    for e in multi)
    return hit_single / len(single), hit_multi / len(multi)


def test_narrowing_finds_the_expected_tools() -> None:
    """The planner's default menu (4 tools) holds the right tool for nearly every
    single-step request; a wider one holds every tool of most multi-step ones."""
    single, _ = menu_recall(4)
    _, multi = menu_recall(8)
    assert single >= 0.9, f"top-4 recall {single:.0%}"
    assert multi >= 0.6, f"top-8 recall for multi-step {multi:.0%}"


@pytest.fixture(scope="module")
def golden_workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("golden")
    target = root / "workspace"
    shutil.copytree(GOLDEN / "workspace", target)
    env = {"PATH": "/usr/bin:/bin", "HOME": str(root), "GIT_CONFIG_NOSYSTEM": "1"}
    for argv in (["init", "-q", "-b", "main"], ["config", "user.name", "Golden"],
                 ["config", "user.email", "golden@example.com"], ["add", "."],
                 ["commit", "-q", "-m", "golden workspace"], ["branch", "develop"],
                 ["branch", "release/1.0"], ["switch", "-q", "-c", "work"]):
        subprocess.run(["git", *argv], cwd=target, env=env, check=True, capture_output=True)
    # uncommitted changes, so that the commit requests have something to commit
    (target / "notes.txt").write_text("buy milk\ncall the plumber\nwater the plants\n")
    (target / "README.md").write_text("# inventory\n\nA tiny inventory service.\n")
    return target


#: Calls whose dry-run depends on a state the fixture cannot have (a pid to stop).
UNPREVIEWABLE = {"proc.kill"}


@pytest.mark.anyio
@pytest.mark.parametrize("entry", [e for e in ENTRIES if e["steps"]],
                         ids=[e["id"] for e in ENTRIES if e["steps"]])
async def test_the_first_step_previews_in_the_workspace(entry: dict[str, Any],
                                                        golden_workspace: Path) -> None:
    """The expected calls are real calls: their dry-runs succeed on the fixture."""
    from adjutant_hookspecs import ToolCall, ToolContext

    step = entry["steps"][0]
    if step["tool"] in UNPREVIEWABLE:
        pytest.skip("needs a live process")
    tool = next(cls() for pack in packs for cls in pack.TOOLS
                if cls.declaration.name == step["tool"])
    ctx = ToolContext(cwd=str(golden_workspace), cages=(str(golden_workspace),))
    result = await tool.dry_run(ToolCall(tool=step["tool"], args=step["args"]), ctx)
    assert result.status == "dry_run", result.stderr


@pytest.mark.anyio
@pytest.mark.parametrize("entry", ENTRIES, ids=[e["id"] for e in ENTRIES])
async def test_the_operator_proposes_the_expected_plan(entry: dict[str, Any],
                                                       golden_workspace: Path) -> None:
    from adjutant.testing import Harness
    from adjutant_hookspecs import Plan, Response, ToolCall

    if entry["kind"] == "response":
        reply: Any = Response(text="An explanation.")
    else:
        reply = Plan(steps=tuple(ToolCall(tool=s["tool"], args=s["args"])
                                 for s in entry["steps"]))
    async with Harness(*packs, script=[reply]) as h:
        outcome = await h.observe(h.operator(cwd=str(golden_workspace)).handle(entry["request"]))
    if entry["kind"] == "response":
        assert outcome.status == "answered"
        return
    assert outcome.status == "proposed", outcome.error
    assert [s.tool for s in outcome.plan.steps] == [s["tool"] for s in entry["steps"]]
