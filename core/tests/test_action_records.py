"""The action log's records are one typed, versioned schema:
`adjutant_hookspecs.records`, written validated and read back as Structs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec
import pytest

from adjutant import Copilot
from adjutant.testing import FakeRead, FakeWrite, Harness, ScriptedApprover, fake_tools
from adjutant_hookspecs import Plan, ToolCall, Verdict, hookimpl
from adjutant_hookspecs.records import (
    RECORDS,
    VERSION,
    ActionRecord,
    ExtensionRecord,
    ResultRecord,
    ToolCallRecord,
    read_record,
    record_body,
)

pytestmark = pytest.mark.anyio


class AllowReads:
    name = "allow-reads"

    async def evaluate(self, request: Any) -> Verdict:
        if request.declaration.safety.level == "read":
            return Verdict(decision="allow", reason="reads are fine")
        return Verdict(decision="ask", reason="writes ask")

    @hookimpl
    def register_policies(self, register: Any) -> None:
        register(self)


async def test_every_record_an_operator_writes_reads_back_as_its_struct(
        tmp_path: Path) -> None:
    tools = fake_tools(FakeRead("notes.read"), FakeWrite("notes.write"), name="notes")
    async with Harness(tools, AllowReads()) as h:
        (h.workspace / "n.txt").write_text("note\n")
        copilot = Copilot(h.kernel, approver=ScriptedApprover(plan="step",
                                                              steps=["grant", "deny"]))
        await copilot.set_mode("model-said-so", channel="model")
        await copilot.set_mode("execute-with-confirmation", channel="user")
        await copilot.grant("network:notes.read", seconds=60, channel="user")
        await copilot.revoke("network:notes.read")
        h.provider.queue(Plan(steps=(
            ToolCall(tool="notes.read", args={"path": "n.txt"}),
            ToolCall(tool="notes.write", args={"path": "a.txt", "text": "a"}),
            ToolCall(tool="notes.write", args={"path": "b.txt", "text": "b"}))))
        outcome = await copilot.handle("read n, write a and b")
        assert [r.status for r in outcome.results] == ["ok", "ok", "denied"]
        h.provider.queue("not json at all", '{"type":"response","text":"hi"}')
        await copilot.handle("hello")
        await copilot.call(ToolCall(tool="notes.read", args={"path": "n.txt"}), caller="app")
        await copilot.replay(outcome.run_id, 1, dry_run=True)
        await copilot.notice("the build failed")
        h.provider.queue('{"type":"response","text":"ok"}')
        await copilot.assign("tidy up", assigned_by="scheduler")
        await copilot.export_bundle(tmp_path / "b.tar.gz", run_id=outcome.run_id)
        records = await copilot.log.read()
    kinds = {type(r) for r in records}
    untyped = [r for r in records if not isinstance(r, ActionRecord)]
    assert untyped == []
    assert {r.v for r in records if isinstance(r, ActionRecord)} == {VERSION}
    assert len(kinds) >= 20, sorted(k.__name__ for k in kinds)
    (result,) = [r for r in records if isinstance(r, ResultRecord) and r.tool == "notes.write"
                 and r.status == "ok"]
    assert result.args == {"path": "a.txt", "text": "a"} and result.step == 1


def test_a_record_of_a_listed_kind_is_checked_when_written() -> None:
    with pytest.raises(msgspec.ValidationError, match=r"Expected `int`, got `str` - at `\$.step`"):
        record_body("tool_call", 1.0, "r", {"step": "0", "tool": "t"})
    with pytest.raises(msgspec.ValidationError, match="unknown field `colour`"):
        record_body("outcome", 1.0, "r", {"status": "executed", "colour": "red"})


def test_the_head_is_kind_time_run_id_version_then_step_and_tool() -> None:
    """Log stores index runs from a record's first bytes (adjutant-lmdb)."""
    body = record_body("tool_call", 1.5, "r1", {"approved": True, "tool": "t", "step": 3,
                                                "args": {}, "cwd": "/", "digest": None})
    assert msgspec.json.encode(body).startswith(
        b'{"kind":"tool_call","time":1.5,"run_id":"r1","v":1,"step":3,"tool":"t",')


def test_older_and_foreign_records_are_read_not_refused() -> None:
    old = read_record({"kind": "tool_call", "time": 1.0, "run_id": "r", "step": 0,
                       "tool": "t", "args": {}, "cwd": "/", "digest": None,
                       "approved": False})
    assert isinstance(old, ToolCallRecord) and old.v == 1  # before versions: 1
    plugin = read_record({"kind": "dock_answer", "time": 2.0, "run_id": "r", "scope": "step"})
    assert plugin == ExtensionRecord(kind="dock_answer", time=2.0, run_id="r",
                                     fields={"scope": "step"})
    assert isinstance(read_record({"kind": "outcome", "time": 1.0, "weird": 1}),
                      ExtensionRecord)
    assert "outcome" in RECORDS and "dock_answer" not in RECORDS
