"""`adjutant.testing.Harness` as a client of the operator: each `RunResult` holds its
own run's events, log records and questions, and nothing of another run's, on asyncio
and trio, also when two runs go at once."""

from __future__ import annotations

import anyio
import pytest

from adjutant import Approver, StepDecision, StepPacket
from adjutant.testing import Harness, RunResult, ScriptedApprover, plan
from adjutant_hookspecs import Response, RunStarted

from .test_operator import notes

pytestmark = pytest.mark.anyio


class Slow(Approver):
    """Grants after a pause, so that two runs' questions overlap."""

    async def approve_step(self, packet: StepPacket) -> StepDecision:
        await anyio.sleep(0.05)
        return StepDecision("grant")


async def test_the_mode_is_set_as_the_user_sets_it_and_the_default_asks_nobody() -> None:
    async with Harness(notes(), mode="execute-with-confirmation") as h:
        assert await h.copilot.mode() == "execute-with-confirmation"
        [change] = await h.records("mode")
        assert change["why"] == "user"
        run = await h.run("write", reply=plan(("notes.write", {"path": "a", "text": "x"})))
    assert run.status == "denied" and [r.by for r in run.refused] == ["nobody"]
    assert run.logged("approval")[0]["unanswered"] == "this frontend has no way to ask the user"


async def test_a_result_has_its_own_run_only() -> None:
    async with Harness(notes(), mode="execute-with-confirmation",
                       approver=ScriptedApprover(default="grant"),
                       script=[Response(text="hello")]) as h:
        (h.workspace / "n.txt").write_text("n\n")
        first = await h.run("greet me")
        second = await h.run("read n", reply=plan(("notes.read", {"path": "n.txt"})))
    assert (first.status, first.text, first.tools) == ("answered", "hello", [])
    assert first.kinds == ["prompt", "context", "attempt", "response", "outcome"]
    assert second.tools == ["notes.read"] and second.asked[0].tool == "notes.read"
    for run in (first, second):
        assert {e.run_id for e in run.envelopes} == {run.run_id}
        assert {r["run_id"] for r in run.records} == {run.run_id}
        assert run.names()[0] == "RUN_STARTED" and run.names()[-1] == "RUN_FINISHED"
        assert len(run.of_type(RunStarted)) == 1
    assert first.asked == () and len(second.asked) == 1


async def test_two_runs_at_once_keep_their_events_records_and_questions_apart() -> None:
    async with Harness(notes(), mode="execute-with-confirmation", approver=Slow()) as h:
        for name in ("a.txt", "b.txt"):
            (h.workspace / name).write_text(f"{name}\n")
        h.provider.queue(plan(("notes.read", {"path": "a.txt"})),
                         plan(("notes.read", {"path": "b.txt"})))
        results: dict[str, RunResult] = {}

        async def run(request: str) -> None:  # one frontend each, on one kernel
            results[request] = await h.observe(h.operator().handle(request))

        async with anyio.create_task_group() as tg:
            tg.start_soon(run, "first")
            tg.start_soon(run, "second")
    assert results["first"].run_id != results["second"].run_id
    for request, result in results.items():
        assert result.status == "executed"
        assert result.records[0]["text"] == request
        assert {r["run_id"] for r in result.records} == {result.run_id}
        assert {e.run_id for e in result.envelopes} == {result.run_id}
        assert [p.run_id for p in result.asked] == [result.run_id]
        assert result.results[0].stdout == f"{result.asked[0].args['path']}\n"


async def test_a_direct_call_and_a_swapped_approver() -> None:
    async with Harness(notes(), mode="execute-with-confirmation",
                       approver=ScriptedApprover(steps=["deny"])) as h:
        denied = await h.call("notes.write", path="a.txt", text="x")
        h.approver = ScriptedApprover(steps=["grant"])
        granted = await h.call("notes.write", caller="mcp:someone", path="a.txt", text="x")
        assert (h.workspace / "a.txt").read_text() == "x"
    assert (denied.status, denied.tools, [r.by for r in denied.refused]) == (
        "denied", [], ["user"])
    assert granted.tools == ["notes.write"]
    assert [c["caller"] for c in granted.logged("direct_call")] == ["mcp:someone"]


async def test_runs_beyond_the_bus_window_are_not_silently_cut() -> None:
    async with Harness(notes(), bus_capacity=4, script=[" ".join(["w"] * 50)]) as h:
        with pytest.raises(AssertionError, match="larger bus_capacity"):
            await h.run("talk")


class _RealProvider:
    """Stands in for a real provider (the benchmarks pass llama.cpp): nothing to queue."""

    name = "real"


def test_a_real_provider_needs_no_script_and_refuses_one() -> None:
    h = Harness(provider=_RealProvider())  # type: ignore[arg-type]
    assert h.provider.name == "real"
    with pytest.raises(TypeError, match="script= needs a ScriptedProvider, not _RealProvider"):
        Harness(provider=_RealProvider(), script=[plan()])  # type: ignore[arg-type]
