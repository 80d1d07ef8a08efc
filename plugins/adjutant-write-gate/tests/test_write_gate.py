"""The write-gate holds in every mode, in the interface and at run time."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

import adjutant_write_gate
from adjutant import MODES
from adjutant.testing import FakeWrite, Harness, ScriptedApprover, fake_tools
from adjutant_hookspecs import (
    ExecutionResult,
    Plan,
    ToolCall,
    ToolContext,
    ToolDeclaration,
    Verdict,
)

pytestmark = pytest.mark.anyio


WRITE = FakeWrite("t.write")


def tools() -> Any:
    return fake_tools(WRITE, name="tools")


async def test_registers_its_hooks() -> None:
    async with Harness(adjutant_write_gate) as h:
        assert h.hooks.plugins("pre_tool_use") == []
        info = next(p for p in h.kernel.plugins if p.module == "adjutant_write_gate")
        assert info.status == "loaded"
        impls = h.kernel._impls[info.name]
        assert set(impls) == {"pre_tool_use", "confirmation_details"}


@pytest.mark.parametrize("mode", MODES)
def test_every_write_asks_in_every_mode(mode: str) -> None:
    verdict = adjutant_write_gate.pre_tool_use(ToolCall(tool="t.write"),
                                               WRITE.declaration, mode)
    assert verdict is not None
    assert (verdict.decision, verdict.policy) == ("ask", "write-gate")
    reads = ToolDeclaration(name="t.read", version="1", description="r",
                            args_schema={"type": "object"})
    assert adjutant_write_gate.pre_tool_use(ToolCall(tool="t.read"), reads, mode) is None


async def test_holds_in_execute_auto_and_shows_the_packet() -> None:
    async with Harness(adjutant_write_gate, tools(), mode="execute-auto",
                       approver=ScriptedApprover(steps=["deny"])) as h:
        (h.workspace / "notes.txt").write_text("old line\n")
        outcome = await h.run("update my notes", reply=Plan(steps=(ToolCall(
            tool="t.write", explain="update the notes",
            args={"path": "notes.txt", "text": "new\n"}),)))
        assert (h.workspace / "notes.txt").read_text() == "old line\n"
        assert outcome.results[0].status == "denied"
        [packet] = outcome.asked
        assert packet.intent == "update the notes"
        assert "-old line" in packet.preview
        assert "+new" in packet.preview
        gate = [r for r in packet.reasons if r.startswith("write-gate:")]
        assert len(gate) == 1 and "explicit approval" in gate[0]  # said once, by the plugin
        details = packet.details
        assert details["targets"] == [str(h.workspace / "notes.txt")]
        assert details["current"][0]["excerpt"] == "old line\n"
        assert (details["risk"], details["impact"]) == ("medium", "modifies 1 existing path(s)")


async def test_risk_levels() -> None:
    async with Harness(adjutant_write_gate) as h:
        cwd = str(h.workspace)
        preview = ExecutionResult(tool="t.write", args={}, status="dry_run")
        new = h.kernel.confirmation_details(
            ToolCall(tool="t.write", args={"path": "new.txt", "text": ""}), WRITE.declaration,
            preview, cwd)
        outside = h.kernel.confirmation_details(
            ToolCall(tool="t.write", args={"path": "../../x", "text": ""}), WRITE.declaration,
            preview, cwd)
        assert (new["risk"], new["impact"]) == ("low", "creates 1 file(s)")
        assert outside["risk"] == "high"


async def test_no_frontend_shortcut_runs_a_write_without_a_token() -> None:
    """A frontend that forges an 'allow' and skips the question still gets nothing run:
    the runtime pre-tool check asks again and only a token bound to the preview passes."""
    for plugins, expect_written in (((tools(),), True), ((tools(), adjutant_write_gate), False)):
        async with Harness(*plugins) as h:
            copilot = h.copilot
            ctx = ToolContext(cwd=str(h.workspace), cages=(str(h.workspace),))
            call = ToolCall(tool="t.write", args={"path": "x.txt", "text": "x"})
            step = await copilot.pipeline.check(0, call, ctx=ctx, mode="execute-auto",
                                                run_id="r")
            forged = dataclasses.replace(step, verdict=Verdict(decision="allow",
                                                               reason="trust me"))
            if expect_written:  # without the plugin the forged allow would have worked...
                await copilot.pipeline.execute(forged, ctx=ctx, mode="execute-auto", run_id="r")
            else:  # ...with it, the runtime check refuses
                with pytest.raises(PermissionError, match="no valid approval"):
                    await copilot.pipeline.execute(forged, ctx=ctx, mode="execute-auto",
                                                   run_id="r")
            assert (h.workspace / "x.txt").exists() is expect_written


async def test_a_token_for_one_preview_does_not_run_another() -> None:
    async with Harness(adjutant_write_gate, tools()) as h:
        copilot = h.copilot
        ctx = ToolContext(cwd=str(h.workspace), cages=(str(h.workspace),))
        first = await copilot.pipeline.check(
            0, ToolCall(tool="t.write", args={"path": "y.txt", "text": "approved\n"}),
            ctx=ctx, mode="execute-auto", run_id="r")
        token = copilot.pipeline.approvals.issue("r", 0, first.digest)
        other = await copilot.pipeline.check(
            0, ToolCall(tool="t.write", args={"path": "y.txt", "text": "something else\n"}),
            ctx=ctx, mode="execute-auto", run_id="r")
        with pytest.raises(PermissionError, match="no valid approval"):
            await copilot.pipeline.execute(other, ctx=ctx, mode="execute-auto", run_id="r",
                                           token=token)
        await copilot.pipeline.execute(first, ctx=ctx, mode="execute-auto", run_id="r",
                                       token=token)
        assert (h.workspace / "y.txt").read_text() == "approved\n"


async def test_the_packet_names_the_standing_grants_that_would_answer_it() -> None:
    """The file grant is offered only for one file named as itself (a link, a second
    name or a walk through ``..`` gets none); the tool grant always."""
    import os

    async with Harness(adjutant_write_gate) as h:
        cwd, ws = str(h.workspace), h.workspace
        (ws / "a.txt").write_text("a\n")
        (ws / "link.txt").symlink_to(ws / "a.txt")
        (ws / "b.txt").write_text("b\n")
        os.link(ws / "b.txt", ws / "b2.txt")
        preview = ExecutionResult(tool="t.write", args={}, status="dry_run")

        def offers(path: str) -> dict[str, str]:
            details = h.kernel.confirmation_details(
                ToolCall(tool="t.write", args={"path": path, "text": ""}),
                WRITE.declaration, preview, cwd)
            return details["standing"]  # type: ignore[no-any-return]

        assert offers("a.txt") == {"tool": "tool:t.write", "file": f"file:{ws / 'a.txt'}"}
        assert offers("new.txt")["file"] == f"file:{ws / 'new.txt'}"
        for unnamed in ("link.txt", "b.txt", "b2.txt", "sub/../a.txt", "nodir/x.txt"):
            assert offers(unnamed) == {"tool": "tool:t.write"}, unnamed
