"""The first-party safety stack together: guard + write-gate + LMDB log, through the
operator, as a user would meet it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import adjutant_guard
import adjutant_lmdb
import adjutant_write_gate
from adjutant import Copilot
from adjutant.testing import FakeRead, FakeWrite, Harness, ScriptedApprover
from adjutant_hookspecs import (
    Plan,
    ToolCall,
    hookimpl,
)

pytestmark = pytest.mark.anyio


class Tools:
    name = "fs"

    @hookimpl
    def register_tools(self, register: Any) -> None:
        register(FakeRead("fs.read"))
        register(FakeWrite("fs.write"))


STACK = (adjutant_guard, adjutant_write_gate, adjutant_lmdb, Tools())


def steps(*calls: tuple[str, dict[str, Any]]) -> Plan:
    return Plan(steps=tuple(ToolCall(tool=t, args=a) for t, a in calls))


async def test_reads_run_writes_ask_escapes_are_denied_and_the_log_verifies(
        tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("not yours\n")
    approver = ScriptedApprover(steps=["grant"])
    async with Harness(*STACK, home=tmp_path / "home") as h:
        (h.workspace / "todo.txt").write_text("milk\n")
        (h.workspace / "link").symlink_to(outside)
        copilot = Copilot(h.kernel, approver=approver)
        await copilot.set_mode("execute-with-confirmation", channel="user")
        h.provider.queue(steps(("fs.read", {"path": "todo.txt"})))
        read = await copilot.handle("what do I need?")
        assert [r.stdout for r in read.results] == ["milk\n"]
        assert approver.asked == []  # a read in the cage runs without a prompt

        h.provider.queue(steps(("fs.write", {"path": "link", "text": "pwned\n"}),
                               ("fs.write", {"path": "todo.txt", "text": "eggs\n"}),
                               ("fs.write", {"path": ".git/hooks/pre-commit", "text": "x"})))
        approver.plan = "step"
        write = await copilot.handle("update my files")
        statuses = [r.status for r in write.results]
        assert statuses == ["denied", "ok", "denied"]
        assert outside.read_text() == "not yours\n"  # the symlink out of the cage held
        assert (h.workspace / "todo.txt").read_text() == "eggs\n"
        assert not (h.workspace / ".git").exists()
        assert [p.tool for p in approver.asked] == ["fs.write"]  # only the legitimate one
        assert approver.asked[0].details["risk"] == "medium"

        decisions = [r for r in await copilot.log.records(run_id=write.run_id)
                     if r["kind"] == "decision"]
        denied = {d["args"]["path"]: (d["policy"], d["reason"]) for d in decisions
                  if d["decision"] == "deny"}
        assert set(denied) == {"link", ".git/hooks/pre-commit"}
        assert all(policy == "guard" for policy, _ in denied.values())
        report = await h.kernel.stores["log:lmdb"].verify()
        assert report.ok


async def test_mode_and_grants_survive_a_restart_on_lmdb(tmp_path: Path) -> None:
    home = tmp_path / "home"
    async with Harness(*STACK, home=home) as h:
        copilot = Copilot(h.kernel)
        await copilot.set_mode("execute-with-confirmation", channel="user")
        await copilot.grant("network:fs.read", seconds=600, channel="user")
        assert not await copilot.set_mode("execute-auto", channel="model")
    async with Harness(*STACK, home=home) as h:
        copilot = Copilot(h.kernel)
        assert await copilot.mode() == "execute-with-confirmation"
        assert copilot.grants == ["network:fs.read"]
        kinds = [r["kind"] for r in await copilot.log.records()]
        assert "mode_change_ignored" in kinds
