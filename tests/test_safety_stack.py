"""The first-party safety stack together: guard + write-gate + LMDB log, through the
operator, as a user would meet it."""

from __future__ import annotations

from pathlib import Path

import pytest

import adjutant_guard
import adjutant_lmdb
import adjutant_write_gate
from adjutant.testing import FakeRead, FakeWrite, Harness, ScriptedApprover, fake_tools, plan

pytestmark = pytest.mark.anyio


def stack() -> tuple[object, ...]:
    return (adjutant_guard, adjutant_write_gate, adjutant_lmdb,
            fake_tools(FakeRead("fs.read"), FakeWrite("fs.write"), name="fs"))


async def test_reads_run_writes_ask_escapes_are_denied_and_the_log_verifies(
        tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("not yours\n")
    approver = ScriptedApprover(steps=["grant"])
    async with Harness(*stack(), home=tmp_path / "home", mode="execute-with-confirmation",
                       approver=approver) as h:
        (h.workspace / "todo.txt").write_text("milk\n")
        (h.workspace / "link").symlink_to(outside)
        read = await h.run("what do I need?", reply=plan(("fs.read", {"path": "todo.txt"})))
        assert [r.stdout for r in read.results] == ["milk\n"]
        assert approver.asked == []  # a read in the cage runs without a prompt

        approver.plan = "step"
        write = await h.run("update my files", reply=plan(
            ("fs.write", {"path": "link", "text": "pwned\n"}),
            ("fs.write", {"path": "todo.txt", "text": "eggs\n"}),
            ("fs.write", {"path": ".git/hooks/pre-commit", "text": "x"})))
        assert write.statuses == ["denied", "ok", "denied"]
        assert write.tools == ["fs.write"] and len(write.plans) == 1
        assert outside.read_text() == "not yours\n"  # the symlink out of the cage held
        assert (h.workspace / "todo.txt").read_text() == "eggs\n"
        assert not (h.workspace / ".git").exists()
        assert [p.tool for p in approver.asked] == ["fs.write"]  # only the legitimate one
        assert approver.asked[0].details["risk"] == "medium"

        denied = {d["args"]["path"]: (d["policy"], d["reason"]) for d in write.logged("decision")
                  if d["decision"] == "deny"}
        assert set(denied) == {"link", ".git/hooks/pre-commit"}
        assert all(policy == "guard" for policy, _ in denied.values())
        report = await h.kernel.stores["log:lmdb"].verify()
        assert report.ok


async def test_mode_and_grants_survive_a_restart_on_lmdb(tmp_path: Path) -> None:
    home = tmp_path / "home"
    async with Harness(*stack(), home=home, mode="execute-with-confirmation") as h:
        await h.copilot.grant("network:fs.read", seconds=600, channel="user")
        assert not await h.copilot.set_mode("execute-auto", channel="model")
    async with Harness(*stack(), home=home) as h:
        assert await h.copilot.mode() == "execute-with-confirmation"
        assert h.copilot.grants == ["network:fs.read"]
        assert await h.records("mode_change_ignored")
