"""The operator end to end through the harness: modes, consent, the pipeline, the log."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec
import pytest

from adjutant import Copilot, ModelPreset, Profile, StepDecision
from adjutant.testing import (
    FakeRead,
    FakeWrite,
    Harness,
    MemoryKeyValueStore,
    MemoryLogStore,
    ScriptedApprover,
    fake_tools,
)
from adjutant_hookspecs import (
    ExecutionResult,
    Plan,
    Response,
    ToolCall,
    ToolContext,
    Verdict,
    hookimpl,
)

pytestmark = pytest.mark.anyio


def notes() -> Any:
    """The operator tests' plugin: ``notes.read`` and ``notes.write``."""
    return fake_tools(FakeRead("notes.read"), FakeWrite("notes.write"), name="notes")


class AllowReads:
    """Stands in for the guard: reads allowed, writes asked."""

    name = "allow-reads"

    async def evaluate(self, request: Any) -> Verdict:
        if request.declaration.safety.level == "read":
            return Verdict(decision="allow", reason="reads are fine")
        return Verdict(decision="ask", reason="writes ask")

    @hookimpl
    def register_policies(self, register: Any) -> None:
        register(self)


def plan(*steps: tuple[str, dict[str, Any]]) -> Plan:
    return Plan(steps=tuple(ToolCall(tool=t, args=a, explain="because") for t, a in steps))


async def records(copilot: Copilot, kind: str | None = None) -> list[dict[str, Any]]:
    return [r for r in await copilot.log.records() if kind is None or r["kind"] == kind]


async def test_mode_persists_across_a_restart_and_only_the_user_changes_it() -> None:
    kv, log = MemoryKeyValueStore(), MemoryLogStore()
    async with Harness(notes(), kv=kv, log=log) as h:
        copilot = Copilot(h.kernel)
        assert await copilot.mode() == "propose-only"  # read-only by default
        assert await copilot.set_mode("execute-with-confirmation", channel="user")
        assert not await copilot.set_mode("execute-auto", channel="model")
        assert await copilot.mode() == "execute-with-confirmation"
        assert [r["channel"] for r in await records(copilot, "mode_change_ignored")] == ["model"]
    async with Harness(notes(), kv=kv, log=log) as h:
        assert await Copilot(h.kernel).mode() == "execute-with-confirmation"


async def test_read_only_step_runs_without_asking_in_execute_with_confirmation() -> None:
    approver = ScriptedApprover()
    async with Harness(notes(), AllowReads()) as h:
        (h.workspace / "todo.txt").write_text("buy milk\n")
        h.provider.queue(plan(("notes.read", {"path": "todo.txt"})))
        copilot = Copilot(h.kernel, approver=approver)
        await copilot.set_mode("execute-with-confirmation", channel="user")
        h.events.clear()
        outcome = await copilot.handle("what is on my todo list?")
        assert outcome.status == "executed"
        assert [r.stdout for r in outcome.results] == ["buy milk\n"]
        assert approver.asked == []
        assert approver.plans == []
        names = h.events.names()
        assert names[0] == "RUN_STARTED"
        assert names[-1] == "RUN_FINISHED"
        assert "TOOL_CALL_RESULT" in names
        assert "TEXT_MESSAGE_CONTENT" in names


async def test_write_is_previewed_runs_only_after_approval_and_is_logged() -> None:
    async with Harness(notes(), AllowReads()) as h:
        copilot = Copilot(h.kernel, approver=ScriptedApprover(steps=["deny"]))
        await copilot.set_mode("execute-with-confirmation", channel="user")
        h.provider.queue(plan(("notes.write", {"path": "a.txt", "text": "hello\n"})))
        denied = await copilot.handle("write hello to a.txt")
        assert not (h.workspace / "a.txt").exists()
        assert denied.results[0].status == "denied"

        approver = ScriptedApprover(steps=["grant"])
        copilot.approver = approver
        h.provider.queue(plan(("notes.write", {"path": "a.txt", "text": "hello\n"})))
        outcome = await copilot.handle("write hello to a.txt")
        assert (h.workspace / "a.txt").read_text() == "hello\n"
        assert "+hello" in approver.asked[0].preview
        assert approver.asked[0].intent == "because"
        kinds = [r["kind"] for r in await records(copilot) if r["run_id"] == outcome.run_id]
        assert kinds == ["prompt", "context", "attempt", "plan", "decision", "decision",
                         "approval", "tool_call", "result", "artifact", "outcome"]
        result = (await records(copilot, "result"))[-1]
        assert result["artifacts"] == [str(h.workspace / "a.txt")]


async def test_malformed_plan_is_retried_simplified_and_every_attempt_logged() -> None:
    async with Harness(notes(), AllowReads()) as h:
        (h.workspace / "n.txt").write_text("x")
        h.provider.queue('{"type":"plan","steps":[{"tool":"notes.read","tool":"x"}]}',
                         "Sure! Here is the plan:",
                         plan(("notes.read", {"path": "n.txt"})))
        copilot = Copilot(h.kernel)
        await copilot.set_mode("execute-with-confirmation", channel="user")
        outcome = await copilot.handle("read n.txt")
        assert outcome.status == "executed"
        attempts = await records(copilot, "attempt")
        assert [(a["ok"], a["simplified"]) for a in attempts] == [
            (False, False), (False, True), (True, True)]
        assert "duplicate key 'tool'" in attempts[0]["error"]
        assert "not valid JSON" in attempts[1]["error"]
        second = h.provider.requests[1].prompt
        assert "duplicate key 'tool'" in second
        assert "args:" not in second
        assert len(h.events.of_type(__import__("adjutant_hookspecs").ActivitySnapshot)) >= 3


async def test_a_model_that_never_plans_fails_clearly() -> None:
    async with Harness(notes()) as h:
        h.provider.queue("no", "still no", '{"type": "shell", "cmd": "rm -rf /"}')
        outcome = await Copilot(h.kernel).handle("hi")
        assert outcome.status == "failed"
        assert "no valid plan in 3 attempts" in outcome.error
        assert "Invalid value 'shell'" in outcome.error
        assert h.events.names()[-1] == "RUN_ERROR"


async def test_write_gate_holds_in_execute_auto() -> None:
    approver = ScriptedApprover(steps=["deny"])
    async with Harness(notes()) as h:
        copilot = Copilot(h.kernel, approver=approver)
        await copilot.set_mode("execute-auto", channel="user")
        h.provider.queue(plan(("notes.write", {"path": "b.txt", "text": "x"})))
        outcome = await copilot.handle("write b")
        assert approver.asked
        assert not (h.workspace / "b.txt").exists()
        assert outcome.results[0].status == "denied"


async def test_an_approval_does_not_authorise_a_changed_preview() -> None:
    class Racing(FakeWrite):
        """The file changes between approval and execution (another process wrote it)."""

        calls = 0

        async def dry_run(self, call: ToolCall, ctx: ToolContext) -> ExecutionResult:
            Racing.calls += 1
            if Racing.calls == 3:  # after the user approved the second preview
                (Path(ctx.cwd) / "c.txt").write_text("changed behind our back\n")
            return await super().dry_run(call, ctx)

    class RacingPlugin:
        @hookimpl
        def register_tools(self, register: Any) -> None:
            register(Racing("notes.write"))

    approver = ScriptedApprover(steps=["grant", "deny"])
    async with Harness(RacingPlugin()) as h:
        copilot = Copilot(h.kernel, approver=approver)
        await copilot.set_mode("execute-with-confirmation", channel="user")
        h.provider.queue(plan(("notes.write", {"path": "c.txt", "text": "mine\n"})))
        outcome = await copilot.handle("write c")
        assert (h.workspace / "c.txt").read_text() == "changed behind our back\n"
        assert len(approver.asked) == 2  # asked again with the new preview, then denied
        assert "-changed behind our back" in approver.asked[1].preview
        assert outcome.results[0].status == "denied"
        assert await records(copilot, "changed")


async def test_tokens_are_bound_to_run_step_and_preview() -> None:
    async with Harness(notes()) as h:
        approvals = Copilot(h.kernel).pipeline.approvals
        token = approvals.issue("run", 0, "digest")
        assert approvals.valid(token, "run", 0, "digest")
        assert not approvals.valid(token, "run", 0, "other")
        assert not approvals.valid(token, "run", 1, "digest")
        assert not approvals.valid(token, "other-run", 0, "digest")
        assert not approvals.valid(None, "run", 0, "digest")


async def test_edited_arguments_are_previewed_again() -> None:
    edit = StepDecision("edit", {"path": "d.txt", "text": "edited\n"})
    approver = ScriptedApprover(steps=[edit, "grant"])
    async with Harness(notes(), AllowReads()) as h:
        copilot = Copilot(h.kernel, approver=approver)
        await copilot.set_mode("execute-with-confirmation", channel="user")
        h.provider.queue(plan(("notes.write", {"path": "d.txt", "text": "original\n"})))
        await copilot.handle("write d")
        assert (h.workspace / "d.txt").read_text() == "edited\n"
        assert "+edited" in approver.asked[1].preview


async def test_mode_and_grants_changed_elsewhere_hold_at_the_next_run() -> None:
    """Two operators on one store, as a long `mcp serve` and the user's `adjutant mode`
    / `adjutant grant` in another terminal: a downgrade or revocation is never stale."""
    async with Harness(notes(), AllowReads()) as h:
        serving, user = Copilot(h.kernel), Copilot(h.kernel)
        await user.set_mode("execute-with-confirmation", channel="user")
        read = ToolCall(tool="notes.read", args={"path": "n.txt"})
        (h.workspace / "n.txt").write_text("note\n")
        assert (await serving.call(read, caller="mcp:x")).status == "executed"
        await user.set_mode("propose-only", channel="user")
        assert (await serving.call(read, caller="mcp:x")).status == "proposed"
        await serving.grant("network:a", seconds=60, channel="user")
        await user.grant("network:b", seconds=60, channel="user")  # merged, not clobbered
        await user.revoke("network:a")
        await serving.mode()
        assert serving.grants == ["network:b"]


async def test_a_run_where_nothing_ran_says_denied_and_who_did_not_answer() -> None:
    async with Harness(notes(), AllowReads()) as h:
        write = plan(("notes.write", {"path": "n.txt", "text": "x\n"}))
        said_no = Copilot(h.kernel, approver=ScriptedApprover(steps=["deny"]))
        await said_no.set_mode("execute-with-confirmation", channel="user")
        h.provider.queue(write)
        outcome = await said_no.handle("write n")
        assert (outcome.status, outcome.error) == ("denied", "denied by the user")
        # checked when the plan is previewed and again right before it may run
        assert [d["stage"] for d in await records(said_no, "decision")] == ["plan", "step"]
        nobody = Copilot(h.kernel)  # the default approver can ask no one
        h.provider.queue(write)
        unanswered = await nobody.handle("write n")
        assert unanswered.status == "denied" and "nobody could give it" in unanswered.error
        approvals = await records(nobody, "approval")
        assert [a["unanswered"] for a in approvals] == [
            None, "this frontend has no way to ask the user"]
        outcomes = [r["status"] for r in await records(nobody, "outcome")]
        assert outcomes == ["denied", "denied"] and not (h.workspace / "n.txt").exists()
        two = plan(("notes.write", {"path": "a", "text": ""}), ("notes.write",
                                                                  {"path": "b", "text": ""}))
        h.provider.queue(two)
        refused = await Copilot(h.kernel, approver=ScriptedApprover(plan="deny")).handle("ab")
        assert (refused.status, refused.error, refused.results) == ("denied", "plan denied", [])


async def test_the_kernel_asks_for_writes_even_with_no_write_gate_plugin() -> None:
    approver = ScriptedApprover(steps=["deny"])
    async with Harness(notes()) as h:  # no policy plugin at all
        copilot = Copilot(h.kernel, approver=approver)
        await copilot.set_mode("execute-auto", channel="user")
        h.provider.queue(plan(("notes.write", {"path": "w.txt", "text": "x"})))
        outcome = await copilot.handle("write w")
        assert outcome.status == "denied" and not (h.workspace / "w.txt").exists()
        assert approver.asked[0].reasons[-1] == ("write-gate: notes.write writes: it needs "
                                                 "your approval")


async def test_schema_and_unknown_tools_are_refused_before_anything_runs() -> None:
    async with Harness(notes(), AllowReads()) as h:
        copilot = Copilot(h.kernel)
        await copilot.set_mode("execute-with-confirmation", channel="user")
        h.provider.queue(plan(("notes.read", {"path": 3}), ("rm.everything", {})))
        outcome = await copilot.handle("go")
        assert [r.status for r in outcome.results] == ["denied", "denied"]
        assert outcome.status == "aborted"  # more than half the steps failed
        decisions = await records(copilot, "decision")
        assert "3 is not of type 'string' @ $.path" in decisions[0]["reason"]
        assert decisions[1]["reason"] == "unknown tool 'rm.everything'"


async def test_multi_step_write_plan_needs_plan_approval_and_execute_binds_each_preview() -> None:
    approver = ScriptedApprover(plan="execute")
    async with Harness(notes(), AllowReads()) as h:
        copilot = Copilot(h.kernel, approver=approver)
        await copilot.set_mode("execute-with-confirmation", channel="user")
        h.provider.queue(plan(("notes.write", {"path": "e.txt", "text": "1\n"}),
                              ("notes.write", {"path": "f.txt", "text": "2\n"})))
        outcome = await copilot.handle("write two notes")
        assert [r.status for r in outcome.results] == ["ok", "ok"]
        assert len(approver.plans) == 1
        assert approver.asked == []


async def test_stuck_and_error_rate_guardrails() -> None:
    async with Harness(notes(), AllowReads()) as h:
        (h.workspace / "s.txt").write_text("s")
        copilot = Copilot(h.kernel)
        await copilot.set_mode("execute-with-confirmation", channel="user")
        same = ("notes.read", {"path": "s.txt"})
        h.provider.queue(plan(same, same, same, same))
        stuck = await copilot.handle("loop")
        assert stuck.status == "paused"
        assert "I seem to be stuck" in stuck.error
        assert len(stuck.results) == 2
        h.provider.queue(plan(("notes.read", {"path": "missing1"}),
                              ("notes.read", {"path": "missing2"}),
                              ("notes.read", {"path": "s.txt"})))
        failing = await copilot.handle("read missing files")
        assert failing.status == "aborted"
        assert "2 of 2 steps failed" in failing.error


async def test_propose_only_never_executes_and_off_never_plans() -> None:
    async with Harness(notes(), AllowReads()) as h:
        copilot = Copilot(h.kernel)
        h.provider.queue(plan(("notes.write", {"path": "g.txt", "text": "x"})))
        proposed = await copilot.handle("write g")  # default mode: propose-only
        assert proposed.status == "proposed"
        assert not (h.workspace / "g.txt").exists()
        await copilot.set_mode("off", channel="user")
        assert (await copilot.handle("anything")).status == "ignored"
        assert len(h.provider.requests) == 1  # off asked the model nothing


async def test_preset_switch_takes_effect_without_restart() -> None:
    async with Harness(notes()) as h:
        copilot = Copilot(h.kernel)
        h.provider.queue(Response(text="one"), Response(text="two"))
        assert (await copilot.handle("a")).text == "one"
        await copilot.use_preset(Profile(name="precise", model=ModelPreset(
            provider="scripted", temperature=0.0, stop=("\n\n",))))
        assert (await copilot.handle("b")).text == "two"
        assert [r.temperature for r in h.provider.requests] == [0.2, 0.0]
        assert h.provider.requests[1].stop == ("\n\n", "<END>")


async def test_idle_execute_auto_downgrades_to_propose_only() -> None:
    now = [0.0]
    async with Harness(notes()) as h:
        copilot = Copilot(h.kernel, idle_downgrade_s=60, clock=lambda: now[0])
        await copilot.set_mode("execute-auto", channel="user")
        now[0] = 61
        assert await copilot.mode() == "propose-only"
        assert (await records(copilot, "mode"))[-1]["why"] == "idle: execute-auto expired"


async def test_calls_from_another_program_do_not_keep_execute_auto_alive() -> None:
    now = [0.0]
    async with Harness(notes(), AllowReads()) as h:
        (h.workspace / "n.txt").write_text("note\n")
        copilot = Copilot(h.kernel, idle_downgrade_s=60, clock=lambda: now[0])
        await copilot.set_mode("execute-auto", channel="user")
        read = ToolCall(tool="notes.read", args={"path": "n.txt"})
        for minute in range(1, 4):  # an agent over MCP calling every 30 s
            now[0] = minute * 30
            outcome = await copilot.call(read, caller="mcp:agent", by_user=False)
        assert outcome.status == "proposed" and await copilot.mode() == "propose-only"
        now[0] = 200
        await copilot.set_mode("execute-auto", channel="user")
        now[0] = 250
        assert (await copilot.call(read, caller="app")).status == "executed"  # by the user
        now[0] = 300
        assert await copilot.mode() == "execute-auto"


async def test_cancel_interrupts_generation() -> None:
    import anyio

    from adjutant.testing import ScriptedProvider

    provider = ScriptedProvider(delay=0.05)
    async with Harness(notes(), provider=provider) as h:
        provider.queue(" ".join(["word"] * 200))
        copilot = Copilot(h.kernel)
        async with anyio.create_task_group() as tg:
            async def cancel_soon() -> None:
                await anyio.sleep(0.2)
                copilot.cancel()
            tg.start_soon(cancel_soon)
            outcome = await copilot.handle("talk a lot")
        assert outcome.status == "cancelled"
        assert h.events.names()[-1] == "RUN_ERROR"
        assert msgspec.json.encode([r["kind"] for r in await records(copilot)]).count(
            b"outcome") == 1


async def test_cancel_during_a_step_stops_the_plan() -> None:
    import anyio

    running = anyio.Event()

    class Slow(FakeRead):
        async def execute(self, call: ToolCall, ctx: ToolContext) -> ExecutionResult:
            running.set()
            await anyio.sleep(30)
            raise AssertionError("not reached")

    class SlowPlugin:
        @hookimpl
        def register_tools(self, register: Any) -> None:
            register(Slow("notes.read"))

    async with Harness(SlowPlugin(), AllowReads()) as h:
        copilot = Copilot(h.kernel)
        await copilot.set_mode("execute-with-confirmation", channel="user")
        h.provider.queue(plan(("notes.read", {"path": "a"}), ("notes.read", {"path": "b"})))
        async with anyio.create_task_group() as tg:
            async def cancel_when_running() -> None:
                await running.wait()
                copilot.cancel()
            tg.start_soon(cancel_when_running)
            with anyio.fail_after(10):
                outcome = await copilot.handle("read two")
        assert outcome.status == "cancelled"
        kinds = [r["kind"] for r in await records(copilot)]
        assert kinds.count("tool_call") == 1 and "result" not in kinds
        assert kinds[-1] == "outcome"


async def test_system_events_are_recorded_and_tasks_follow_the_mode() -> None:
    async with Harness(notes()) as h:
        copilot = Copilot(h.kernel)
        await copilot.set_mode("listen-only", channel="user")
        await copilot.notice("build failed: exit 2", source="ci")
        outcome = await copilot.assign("fix the build", assigned_by="scheduler")
        assert outcome.status == "ignored"  # listen-only: heard, never planned
        assert h.provider.requests == []
        kinds = [(r["kind"], r.get("source") or r.get("assigned_by")) for r in
                 await records(copilot) if r["kind"] in ("event", "assignment")]
        assert kinds == [("event", "ci"), ("assignment", "scheduler")]
        assert "CUSTOM" in h.events.names()


class Sources:
    """Two context sources: one that works, one that breaks; and one off by default."""

    class Good:
        name = "good"

        async def gather(self, cwd: str) -> dict[str, Any]:
            return {"recent_shell": ["make test"]}

    class Broken:
        name = "broken"

        async def gather(self, cwd: str) -> dict[str, Any]:
            raise OSError("history file vanished")

    class Clipboard:
        name = "clipboard"
        default_enabled = False

        async def gather(self, cwd: str) -> dict[str, Any]:
            return {"clipboard": "secret-ish text"}

    from adjutant import hookimpl

    @hookimpl
    def register_context_providers(self, register: Any) -> None:
        for cls in (self.Good, self.Broken, self.Clipboard):
            register(cls())


async def test_a_broken_context_source_costs_its_fields_not_the_request() -> None:
    async with Harness(Sources()) as h:
        h.provider.queue(Response(text="ok"))
        copilot = Copilot(h.kernel)
        outcome = await copilot.handle("hi")
        (context,) = await records(copilot, "context")
        (error,) = await records(copilot, "context_error")
    assert outcome.status == "answered"
    assert context["bulletin"]["recent_shell"] == ["make test"]
    assert context["bulletin"]["clipboard"] is None, "off unless switched on"
    assert error["provider"] == "broken" and "vanished" in error["error"]


async def test_a_default_off_source_needs_the_profile() -> None:
    profile = Profile(model=ModelPreset(provider="scripted"),
                      context_providers={"clipboard": True})
    async with Harness(Sources(), profile=profile) as h:
        assert (await Copilot(h.kernel).bulletin()).clipboard == "secret-ish text"


async def test_included_files_join_the_context_and_only_real_inner_files_are_offered(
        ) -> None:
    async with Harness(notes()) as h:
        (h.workspace / "a.txt").write_text("x")
        (h.workspace.parent / "outside.txt").write_text("x")
        copilot = Copilot(h.kernel)
        offered = copilot.mentioned_files("look at a.txt, ../outside.txt, b.txt and a.txt")
        h.provider.queue(Response(text="ok"))
        await copilot.handle("look at a.txt", include=["a.txt"])
        (context,) = await records(copilot, "context")
    assert offered == ["a.txt"]
    assert context["bulletin"]["selected_files"] == ["a.txt"]


@pytest.mark.anyio
async def test_a_direct_call_is_a_logged_one_step_run_under_the_mode() -> None:
    async with Harness(notes(), AllowReads()) as h:
        (h.workspace / "n.txt").write_text("hello")
        read_call = ToolCall(tool="notes.read", args={"path": "n.txt"})
        copilot = Copilot(h.kernel, approver=ScriptedApprover(steps=["deny"]))
        proposed = await copilot.call(read_call, caller="mcp:x")
        assert proposed.status == "proposed" and proposed.results == []
        await copilot.set_mode("execute-with-confirmation", channel="user")
        read = await copilot.call(read_call, caller="mcp:x")
        assert [r.status for r in read.results] == ["ok"]
        write_call = ToolCall(tool="notes.write", args={"path": "n.txt", "text": "x"})
        write = await copilot.call(write_call, caller="mcp:x")
        assert [r.status for r in write.results] == ["denied"]
        assert (h.workspace / "n.txt").read_text() == "hello"
        calls = [r for r in await copilot.log.records() if r["kind"] == "direct_call"]
        assert [(c["caller"], c["tool"]) for c in calls] == [
            ("mcp:x", "notes.read"), ("mcp:x", "notes.read"), ("mcp:x", "notes.write")]
