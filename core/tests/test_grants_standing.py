"""Standing write grants (``file:<path>``, ``tool:<name>``): consent given in advance,
and nothing more. A grant for one file never covers another file, a link named
differently, nor a ``..`` walk through a link; it expires; a revocation holds from the
next step; the yes it gives is bound to the previewed digest; propose-only still runs
nothing and without a grant execute-auto still asks."""

from __future__ import annotations

import json
import os
from typing import Any

import pytest

from adjutant import Approver, PlanPacket, StepDecision, StepPacket
from adjutant.testing import FakeWrite, Harness, ScriptedApprover, fake_tools
from adjutant_hookspecs import ExecutionResult, ToolCall, ToolContext, Verdict, hookimpl

from .test_operator import CONFIRM, notes, plan

pytestmark = pytest.mark.anyio


class NoObjection:
    """Stands in for a guard with nothing to say about these paths (an opinion: with
    none, the kernel asks itself, and a grant does not answer that): the write's
    questions are the mode's and the write-gate's, the ones a standing grant answers."""

    name = "no-objection"

    async def evaluate(self, request: Any) -> Verdict:
        return Verdict(decision="allow", reason="nothing to say about this path")

    @hookimpl
    def register_policies(self, register: Any) -> None:
        register(self)


class AsksAboutLinks(NoObjection):
    """Another policy that asks about one file: a standing grant does not answer it."""

    name = "links"

    async def evaluate(self, request: Any) -> Verdict:
        if request.call.args.get("path") == "watched.txt":
            return Verdict(decision="ask", reason="watched.txt is watched")
        return await super().evaluate(request)


def write(path: str, text: str = "x\n") -> Any:
    return plan(("notes.write", {"path": path, "text": text}))


async def test_a_file_grant_answers_for_that_file_only(tmp_path: Any) -> None:
    approver = ScriptedApprover(steps=["deny"] * 8)
    async with Harness(notes(), NoObjection(), mode=CONFIRM, approver=approver) as h:
        a = h.workspace / "a.txt"
        a.write_text("old\n")
        assert await h.copilot.grant(f"file:{a}", seconds=60, channel="user")
        run = await h.run("write a", reply=write("a.txt", "new\n"))
        assert a.read_text() == "new\n" and approver.asked == []  # not asked
        [approval] = run.logged("approval")
        [decision] = [d for d in run.logged("decision") if d["stage"] == "step"]
        assert approval["grant"] == f"file:{a}" and approval["action"] == "grant"
        assert approval["digest"] == decision["digest"] == run.logged("tool_call")[0]["digest"]
        # another file, the same file by a walk out and back, a sibling's name: asked
        for other in ("b.txt", "sub/../b.txt", "a.txt/../b.txt"):
            run = await h.run("write other", reply=write(other))
            assert run.statuses == ["denied"], other
        assert len(approver.asked) == 3 and not (h.workspace / "b.txt").exists()


async def test_links_named_differently_and_dotdot_through_a_link_are_not_covered(
        tmp_path: Any) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    approver = ScriptedApprover(steps=["deny"] * 8)
    async with Harness(notes(), NoObjection(), mode=CONFIRM, approver=approver) as h:
        ws = h.workspace
        a = ws / "a.txt"
        a.write_text("granted\n")
        (elsewhere / "a.txt").write_text("not yours\n")
        await h.copilot.grant(f"file:{a}", seconds=60, channel="user")
        (ws / "sym-out.txt").symlink_to(elsewhere / "a.txt")  # resolves elsewhere
        (ws / "sym-in.txt").symlink_to(a)  # resolves to A, under another name
        (ws / "linkdir").symlink_to(elsewhere)
        (ws / "sub").mkdir()
        for name in ("sym-out.txt", "sym-in.txt", "linkdir/a.txt",
                     "linkdir/../a.txt"):  # the kernel walks the link, then ..
            run = await h.run("write", reply=write(name, "changed\n"))
            assert run.statuses == ["denied"], name
        assert (elsewhere / "a.txt").read_text() == "not yours\n"
        assert len(approver.asked) == 4
        os.link(a, ws / "hard.txt")  # a hard link: another name for A...
        for name in ("hard.txt", "a.txt"):  # ...and A itself now has two names
            run = await h.run("write", reply=write(name, "changed\n"))
            assert run.statuses == ["denied"], name
        assert a.read_text() == "granted\n" and len(approver.asked) == 6


async def test_a_grant_expires_and_another_policys_question_still_asks() -> None:
    now = [1_000_000.0]
    approver = ScriptedApprover(steps=["deny"] * 4)
    async with Harness(notes(), AsksAboutLinks(), mode=CONFIRM, approver=approver) as h:
        op = h.operator(wall=lambda: now[0])
        await op.set_mode(CONFIRM, channel="user")
        a, watched = h.workspace / "a.txt", h.workspace / "watched.txt"
        await op.grant(f"file:{a}", seconds=900, channel="user")
        await op.grant(f"file:{watched}", seconds=900, channel="user")
        h.provider.queue(write("watched.txt"))
        await h.observe(op.handle("write watched"))
        assert not watched.exists() and len(approver.asked) == 1  # its question stays
        now[0] += 901
        h.provider.queue(write("a.txt"))
        run = await h.observe(op.handle("write a later"))
        assert run.statuses == ["denied"] and not a.exists() and len(approver.asked) == 2
        assert op.grants == []


class RevokesOnTheSecondQuestion(Approver):
    """Says "step by step" to the plan; at the first step question, revokes the grant
    (as the user would in another tab) and grants that step."""

    def __init__(self, revoke: Any) -> None:
        self.revoke = revoke
        self.asked: list[StepPacket] = []

    async def approve_plan(self, packet: PlanPacket) -> str:  # type: ignore[override]
        return "step"

    async def approve_step(self, packet: StepPacket) -> StepDecision:
        self.asked.append(packet)
        if len(self.asked) == 1:
            await self.revoke()
            return StepDecision("grant")
        return StepDecision("deny")


async def test_a_revocation_holds_from_the_next_step() -> None:
    async with Harness(notes(), NoObjection(), mode=CONFIRM) as h:
        a = h.workspace / "a.txt"
        grant = f"file:{a}"
        approver = RevokesOnTheSecondQuestion(lambda: h.copilot.revoke(grant))
        h.approver = approver
        await h.copilot.grant(grant, seconds=900, channel="user")
        run = await h.run("three writes", reply=plan(
            ("notes.write", {"path": "a.txt", "text": "1\n"}),  # covered
            ("notes.write", {"path": "b.txt", "text": "2\n"}),  # asked: revokes, grants
            ("notes.write", {"path": "a.txt", "text": "3\n"})))  # asked now: denied
        assert run.statuses == ["ok", "ok", "denied"]
        assert [p.args["path"] for p in approver.asked] == ["b.txt", "a.txt"]
        assert a.read_text() == "1\n"
        assert [r.get("grant") for r in run.logged("approval") if r["scope"] == "step"] == [
            grant, None, None]


class Shifting:
    """A write whose preview changes every time it is previewed (the file moves on)."""

    def __init__(self) -> None:
        self.inner, self.previews = FakeWrite("notes.write"), 0
        self.declaration = self.inner.declaration

    async def dry_run(self, call: ToolCall, ctx: ToolContext) -> ExecutionResult:
        self.previews += 1
        shown = await self.inner.dry_run(call, ctx)
        return ExecutionResult(tool=call.tool, args=call.args, status="dry_run",
                               dry_run_diff=f"{shown.dry_run_diff}\n(preview {self.previews})")

    async def execute(self, call: ToolCall, ctx: ToolContext) -> ExecutionResult:
        return await self.inner.execute(call, ctx)


async def test_the_grants_yes_is_bound_to_the_previewed_digest() -> None:
    async with Harness(fake_tools(Shifting(), name="shifting"), NoObjection(), mode=CONFIRM,
                       approver=ScriptedApprover(steps=["deny"])) as h:
        a = h.workspace / "a.txt"
        await h.copilot.grant(f"file:{a}", seconds=60, channel="user")
        run = await h.run("write a", reply=write("a.txt"))
        assert run.statuses == ["denied"] and not a.exists()
        assert "kept changing" in run.results[0].stderr
        digests = [r["digest"] for r in run.logged("approval")]
        assert len(digests) == 3 and len(set(digests)) == 3  # one yes per preview


async def test_a_tool_grant_covers_that_tool_only_and_modes_keep_their_meaning() -> None:
    approver = ScriptedApprover(steps=["deny"] * 4)
    two = fake_tools(FakeWrite("notes.write"), FakeWrite("other.write"), name="two")
    async with Harness(two, NoObjection(), mode="execute-auto", approver=approver) as h:
        run = await h.run("auto, no grant", reply=write("a.txt"))
        assert run.statuses == ["denied"] and len(approver.asked) == 1  # auto still asks
        await h.copilot.grant("tool:notes.write", seconds=60, channel="user")
        run = await h.run("auto, tool grant", reply=write("c.txt"))
        assert run.statuses == ["ok"] and len(approver.asked) == 1
        run = await h.run("another tool", reply=plan(("other.write", {"path": "d.txt"})))
        assert run.statuses == ["denied"] and len(approver.asked) == 2
        await h.copilot.set_mode("propose-only", channel="user")
        run = await h.run("propose", reply=write("e.txt"))
        assert not (h.workspace / "e.txt").exists() and run.tools == []


async def test_only_the_user_gives_a_standing_grant_and_bad_ones_are_refused() -> None:
    async with Harness(notes(), NoObjection()) as h:
        assert not await h.copilot.grant("tool:notes.write", seconds=60, channel="model")
        for bad in ("file:relative.txt", "file:", "tool:", "tool:a b"):
            with pytest.raises(ValueError, match="invalid grant"):
                await h.copilot.grant(bad, seconds=60, channel="user")
        assert h.copilot.grants == []


def test_the_cli_gives_lists_and_revokes_the_new_kinds(tmp_path: Any) -> None:
    """`adjutant grant` through the real command, grants kept in LMDB between calls."""
    import subprocess
    import sys
    from pathlib import Path

    pytest.importorskip("adjutant_lmdb")
    home = tmp_path / "home"
    env = {**os.environ, "ADJUTANT_HOME": str(home), "ADJUTANT_LOAD_PLUGINS": "lmdb",
           "NO_COLOR": "1", "XDG_CACHE_HOME": str(tmp_path / "cache")}
    env.pop("ADJUTANT_DISABLE_PLUGINS", None)

    def grant(*args: str) -> list[str]:
        done = subprocess.run([str(Path(sys.executable).with_name("adjutant")), "grant",
                               *args, "--json"], env=env, cwd=tmp_path, capture_output=True,
                              text=True, timeout=120, check=True)
        return list(json.loads(done.stdout)["grants"])

    target = f"file:{tmp_path / 'notes.md'}"
    assert grant(target, "--minutes", "5") == [target]
    assert grant("tool:notes.write", "--minutes", "5") == [target, "tool:notes.write"]
    assert grant() == [target, "tool:notes.write"]  # kept
    assert grant(target, "--revoke") == ["tool:notes.write"]


@pytest.mark.parametrize(("tool", "args"), [
    ("shell.exec", {"argv": ["touch", "made-unasked.txt"]}),  # runs a program
    ("proc.kill", {}),  # destructive (a child of ours, pid filled in)
])
async def test_a_tool_grant_never_answers_a_program_or_a_destructive_tool(
        tool: str, args: dict[str, Any]) -> None:
    """``tool:shell.exec`` for an hour would let the model run anything unasked: a
    standing grant answers only writes whose preview shows their effect."""
    import subprocess

    child = subprocess.Popen(["sleep", "60"])  # noqa: ASYNC220 - ended below
    if tool == "proc.kill":
        args = {"pid": child.pid}
    try:
        await _never_answered(tool, args)
    finally:
        child.kill()
        child.wait()


async def _never_answered(tool: str, args: dict[str, Any]) -> None:
    guard = pytest.importorskip("adjutant_guard")
    gate = pytest.importorskip("adjutant_write_gate")
    system = pytest.importorskip("adjutant_system")
    approver = ScriptedApprover(steps=["deny"] * 2)
    async with Harness(guard, gate, system, mode=CONFIRM, approver=approver) as h:
        assert await h.copilot.grant(f"tool:{tool}", seconds=600, channel="user")
        run = await h.run("do it", reply=plan((tool, args)))
        assert run.statuses == ["denied"] and len(approver.asked) == 1
        assert not (h.workspace / "made-unasked.txt").exists()
        [packet] = approver.asked
        assert not packet.details.get("standing"), packet.details  # never offered
