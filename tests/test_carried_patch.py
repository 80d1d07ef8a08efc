"""A diff pasted into a request goes into the plan as pasted: the model plans from a
mention of it and its ``patch`` argument may only say so (a small model cannot copy a
diff into a JSON string: it wrote hundreds of "\\n" until its token limit, three
times, and the request failed). The real editor.patch, write-gate and log; the model
scripted."""

from __future__ import annotations

from typing import Any

import pytest

from adjutant.operator._words import carried_patch
from adjutant.operator.planner import PASTED
from adjutant.testing import Harness, ScriptedApprover, ScriptedProvider
from adjutant_hookspecs import ProviderCapabilities

packs = [pytest.importorskip(m) for m in ("adjutant_files", "adjutant_write_gate",
                                          "adjutant_lmdb")]
pytestmark = pytest.mark.anyio

DIFF = ("--- a/util.py\n+++ b/util.py\n@@ -1,2 +1,4 @@\n def average(values):\n"
        "-    return sum(values) / len(values)\n+    if not values:\n+        return 0.0\n"
        "+    return sum(values) / len(values)\n")
OLD = "def average(values):\n    return sum(values) / len(values)\n"


class PatchFirst(ScriptedProvider):
    """Scores editor.patch first, as the 0.5B model did for "apply this patch"."""

    capabilities = ProviderCapabilities(grammar=True)

    async def score(self, request: Any, continuations: Any) -> list[float]:
        return [3.0 if '"editor.patch"' in c else 0.0 for c in continuations]


def test_a_diff_pasted_in_a_request_is_found_once_and_mentioned() -> None:
    patch, planned = carried_patch(f"apply this patch please:\n{DIFF}")
    assert patch == DIFF and "\n" not in planned and "util.py" in planned
    assert planned.startswith("apply this patch please:")
    assert carried_patch("apply the patch in fix.diff") is None  # named, not pasted
    assert carried_patch(f"apply these:\n{DIFF}and\n{DIFF}") is None  # two: the model's


async def test_the_pasted_diff_is_the_plan_s_patch_previewed_and_applied() -> None:
    reply = ('{"type":"plan","steps":[{"tool":"editor.patch","args":{"patch":"'
             + PASTED + '"}}]}')
    provider = PatchFirst(reply)
    async with Harness(*packs, provider=provider, mode="execute-with-confirmation",
                       approver=ScriptedApprover(default="grant")) as h:
        (h.workspace / "util.py").write_text(OLD)
        run = await h.run(f"apply this patch:\n{DIFF}")
        [asked] = provider.requests
        patched = (h.workspace / "util.py").read_text()
    assert PASTED in (asked.grammar or "")  # the model may only mention it
    assert "@@" not in asked.prompt.rsplit("Request:", 1)[-1]  # nor sees it to copy
    [step] = run.plan.steps
    assert step.tool == "editor.patch" and step.args == {"patch": DIFF}
    assert "+    if not values:" in (run.asked[0].preview or "")  # what was approved
    assert run.status == "executed"
    assert patched == (
        "def average(values):\n    if not values:\n        return 0.0\n"
        "    return sum(values) / len(values)\n")
