"""The profile's ``tools`` allow-list: validated when loaded, enforced by the pipeline for
every entry point (planned, direct, replayed), and the planner's menu."""

from __future__ import annotations

import pytest

from adjutant import ModelPreset, Profile, ProfileError, parse_profile
from adjutant.testing import Harness, ScriptedApprover
from adjutant_hookspecs import ToolCall

from .test_operator import AllowReads, notes, plan

pytestmark = pytest.mark.anyio


def profile(tools: tuple[str, ...]) -> Profile:
    return Profile(model=ModelPreset(provider="scripted"), tools=tools)


@pytest.mark.parametrize(("tools", "tool", "allowed"), [
    (("*",), "fs.write", True),
    (("fs.*",), "fs.write", True),
    (("fs.*",), "fsx.write", False),
    (("fs.read",), "fs.read", True),
    (("fs.read",), "fs.readall", False),
    (("fs.read",), "fs.write", False),
    (("mcp.*.get",), "mcp.time.get", True),
    ((), "fs.read", False),  # empty: nothing
])
def test_allows_matches_names_and_globs(tools: tuple[str, ...], tool: str,
                                        allowed: bool) -> None:
    assert Profile(tools=tools).allows(tool) is allowed


def test_absent_means_every_tool_and_empty_means_none() -> None:
    assert parse_profile({}).allows("shell.exec")
    assert not parse_profile({"tools": []}).allows("fs.read")


@pytest.mark.parametrize("entry", ["", "fs read", "FS.read", "fs..read", ".fs", "fs.",
                                   "fs.read\n", "fs/read", "[a-z]*", "fs.?"])
def test_malformed_entries_refuse_the_profile(entry: str) -> None:
    with pytest.raises(ProfileError) as info:
        parse_profile({"tools": ["fs.read", entry]})
    assert any("is not a tool name or glob" in p and "$.tools" in p
               for p in info.value.problems), info.value.problems
    with pytest.raises(ValueError, match="is not a tool name or glob"):
        Profile(tools=(entry,))


async def test_a_granted_plan_runs_only_the_allowed_steps() -> None:
    approver = ScriptedApprover(plan="step", steps=["grant", "grant"])
    async with Harness(notes(), AllowReads(), profile=profile(("notes.read",)),
                       mode="execute-auto", approver=approver) as h:
        (h.workspace / "n.txt").write_text("note")
        outcome = await h.run("write then read", reply=plan(
            ("notes.write", {"path": "w.txt", "text": "x"}), ("notes.read", {"path": "n.txt"})))
        assert not (h.workspace / "w.txt").exists()
        assert outcome.statuses == ["denied", "ok"] and outcome.tools == ["notes.read"]
        assert outcome.results[0].stderr.startswith("allow-list: notes.write is not in the "
                                                    "tool allow-list of profile 'default' "
                                                    '("tools": ["notes.read"])')
        assert approver.asked == []  # refused before anyone is asked
        decisions = [r for r in outcome.logged("decision") if r["tool"] == "notes.write"]
        assert decisions and {d["policy"] for d in decisions} == {"allow-list"}
        assert h.provider.requests[0].prompt.count("notes.write") == 0  # not on the menu


async def test_direct_and_replayed_calls_are_held_to_the_allow_list() -> None:
    async with Harness(notes(), AllowReads(), profile=profile(("notes.*",)),
                       mode="execute-with-confirmation") as h:
        (h.workspace / "n.txt").write_text("note")
        copilot = h.copilot
        first = await h.call("notes.read", caller="test", path="n.txt")
        assert first.results[0].status == "ok"
        h.kernel.profile = profile(())
        direct = await h.call("notes.read", caller="test", path="n.txt")
        replayed = await copilot.replay(first.run_id, 0, dry_run=False)
        preview = await copilot.replay(first.run_id, 0, dry_run=True)
        for outcome in (direct, replayed):
            assert outcome.status == "denied"
            assert '"tools": []' in outcome.results[0].stderr
        assert "allow-list" in preview.text or '"tools": []' in preview.text
        assert copilot.offered_tools() == {}


async def test_a_profile_switched_after_the_check_is_enforced_at_execution() -> None:
    async with Harness(notes(), AllowReads(), profile=profile(("*",))) as h:
        copilot = h.copilot
        pipeline = copilot.pipeline
        ctx = copilot.tool_context("run")
        step = await pipeline.check(0, ToolCall(tool="notes.write",
                                                args={"path": "a", "text": "x"}),
                                    ctx=ctx, mode="execute-auto", run_id="run")
        token = pipeline.approvals.issue("run", 0, step.digest or "")
        h.kernel.profile = profile(("notes.read",))
        with pytest.raises(PermissionError, match="not in the tool allow-list"):
            await pipeline.execute(step, ctx=ctx, mode="execute-auto", run_id="run",
                                   token=token)
        assert not (h.workspace / "a").exists()


async def test_with_no_tool_allowed_the_model_can_only_answer() -> None:
    async with Harness(notes(), profile=profile(())) as h:
        planner = h.copilot._planner()
        assert planner.tools == {}
        grammar = planner.grammar([], planner.first_choices("write a note", []))
        assert grammar.startswith("root ::= (response)") and "notes." not in grammar
