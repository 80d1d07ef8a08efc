"""The operator end to end through the harness: modes, consent, the pipeline, the log."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import msgspec
import pytest

from adjutant import Approver, ModelPreset, Profile, StepDecision
from adjutant.testing import (
    FakeRead,
    FakeWrite,
    Harness,
    MemoryKeyValueStore,
    MemoryLogStore,
    ScriptedApprover,
    ScriptedProvider,
    fake_tools,
)
from adjutant.testing import plan as steps
from adjutant_hookspecs import (
    ActivitySnapshot,
    ExecutionResult,
    Plan,
    ProviderError,
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


def plan(*calls: tuple[str, dict[str, Any]]) -> Plan:
    """The model's plan, each step explained "because"."""
    return steps(*calls, explain="because")


CONFIRM = "execute-with-confirmation"


async def test_mode_persists_across_a_restart_and_only_the_user_changes_it() -> None:
    kv, log = MemoryKeyValueStore(), MemoryLogStore()
    async with Harness(notes(), kv=kv, log=log) as h:
        copilot = h.copilot
        assert await copilot.mode() == "propose-only"  # read-only by default
        assert await copilot.set_mode(CONFIRM, channel="user")
        assert not await copilot.set_mode("execute-auto", channel="model")
        assert await copilot.mode() == CONFIRM
        assert [r["channel"] for r in await h.records("mode_change_ignored")] == ["model"]
    async with Harness(notes(), kv=kv, log=log) as h:
        assert await h.copilot.mode() == CONFIRM


async def test_read_only_step_runs_without_asking_in_execute_with_confirmation() -> None:
    approver = ScriptedApprover()
    async with Harness(notes(), AllowReads(), mode=CONFIRM, approver=approver) as h:
        (h.workspace / "todo.txt").write_text("buy milk\n")
        run = await h.run("what is on my todo list?",
                          reply=plan(("notes.read", {"path": "todo.txt"})))
        assert run.status == "executed"
        assert [r.stdout for r in run.results] == ["buy milk\n"]
        assert approver.asked == [] and run.asked == ()
        assert approver.plans == [] and run.plans == ()
        names = run.names()
        assert names[0] == "RUN_STARTED"
        assert names[-1] == "RUN_FINISHED"
        assert "TOOL_CALL_RESULT" in names
        assert "TEXT_MESSAGE_CONTENT" in names


async def test_write_is_previewed_runs_only_after_approval_and_is_logged() -> None:
    write = plan(("notes.write", {"path": "a.txt", "text": "hello\n"}))
    async with Harness(notes(), AllowReads(), mode=CONFIRM,
                       approver=ScriptedApprover(steps=["deny"])) as h:
        denied = await h.run("write hello to a.txt", reply=write)
        assert not (h.workspace / "a.txt").exists()
        assert denied.results[0].status == "denied"
        assert [(d.by, d.reason) for d in denied.refused] == [("user", "denied by the user")]

        approver = ScriptedApprover(steps=["grant"])
        h.approver = approver
        run = await h.run("write hello to a.txt", reply=write)
        assert (h.workspace / "a.txt").read_text() == "hello\n"
        assert "+hello" in approver.asked[0].preview
        assert approver.asked[0].intent == "because"
        assert run.asked == tuple(approver.asked)
        assert run.kinds == ["prompt", "context", "attempt", "plan", "decision", "decision",
                             "approval", "tool_call", "result", "artifact", "outcome"]
        assert run.logged("result")[-1]["artifacts"] == [str(h.workspace / "a.txt")]
        assert run.tools == ["notes.write"]


async def test_malformed_plan_is_retried_simplified_and_every_attempt_logged() -> None:
    async with Harness(notes(), AllowReads(), mode=CONFIRM, script=[
            '{"type":"plan","steps":[{"tool":"notes.read","tool":"x"}]}',
            "Sure! Here is the plan:", plan(("notes.read", {"path": "n.txt"}))]) as h:
        (h.workspace / "n.txt").write_text("x")
        run = await h.run("read n.txt")
        assert run.status == "executed"
        attempts = run.logged("attempt")
        assert [(a["ok"], a["simplified"]) for a in attempts] == [
            (False, False), (False, True), (True, True)]
        assert "duplicate key 'tool'" in attempts[0]["error"]
        assert "not valid JSON" in attempts[1]["error"]
        second = h.provider.requests[1].prompt
        assert "duplicate key 'tool'" in second
        assert "args:" not in second
        assert len(run.of_type(ActivitySnapshot)) >= 3


async def test_a_model_that_never_plans_fails_clearly() -> None:
    async with Harness(notes(), script=[
            "no", "still no", '{"type": "shell", "cmd": "rm -rf /"}']) as h:
        run = await h.run("hi")
        assert run.status == "failed"
        assert "no valid plan in 3 attempts" in run.error
        assert "Invalid value 'shell'" in run.error
        assert run.names()[-1] == "RUN_ERROR"
        assert h.events.names()[-1] == "RUN_ERROR"


async def test_write_gate_holds_in_execute_auto() -> None:
    approver = ScriptedApprover(steps=["deny"])
    async with Harness(notes(), mode="execute-auto", approver=approver) as h:
        run = await h.run("write b", reply=plan(("notes.write", {"path": "b.txt", "text": "x"})))
        assert approver.asked and run.asked
        assert not (h.workspace / "b.txt").exists()
        assert run.results[0].status == "denied" and run.tools == []


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
    async with Harness(RacingPlugin(), mode=CONFIRM, approver=approver) as h:
        run = await h.run("write c", reply=plan(("notes.write", {"path": "c.txt",
                                                                "text": "mine\n"})))
        assert (h.workspace / "c.txt").read_text() == "changed behind our back\n"
        assert len(approver.asked) == 2  # asked again with the new preview, then denied
        assert "-changed behind our back" in approver.asked[1].preview
        assert run.results[0].status == "denied"
        assert run.logged("changed")


async def test_tokens_are_bound_to_run_step_and_preview() -> None:
    async with Harness(notes()) as h:
        approvals = h.copilot.pipeline.approvals
        token = approvals.issue("run", 0, "digest")
        assert approvals.valid(token, "run", 0, "digest")
        assert not approvals.valid(token, "run", 0, "other")
        assert not approvals.valid(token, "run", 1, "digest")
        assert not approvals.valid(token, "other-run", 0, "digest")
        assert not approvals.valid(None, "run", 0, "digest")


async def test_edited_arguments_are_previewed_again() -> None:
    edit = StepDecision("edit", {"path": "d.txt", "text": "edited\n"})
    approver = ScriptedApprover(steps=[edit, "grant"])
    async with Harness(notes(), AllowReads(), mode=CONFIRM, approver=approver) as h:
        run = await h.run("write d", reply=plan(("notes.write", {"path": "d.txt",
                                                                "text": "original\n"})))
        assert (h.workspace / "d.txt").read_text() == "edited\n"
        assert "+edited" in approver.asked[1].preview
        assert [p.args["text"] for p in run.asked] == ["original\n", "edited\n"]


async def test_mode_and_grants_changed_elsewhere_hold_at_the_next_run() -> None:
    """Two operators on one store, as a long `mcp serve` and the user's `adjutant mode`
    / `adjutant grant` in another terminal: a downgrade or revocation is never stale."""
    async with Harness(notes(), AllowReads()) as h:
        serving, user = h.operator(), h.operator()
        await user.set_mode(CONFIRM, channel="user")
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
    write = plan(("notes.write", {"path": "n.txt", "text": "x\n"}))
    async with Harness(notes(), AllowReads(), mode=CONFIRM,
                       approver=ScriptedApprover(steps=["deny"])) as h:
        said_no = await h.run("write n", reply=write)
        assert (said_no.status, said_no.error) == ("denied", "denied by the user")
        # checked when the plan is previewed and again right before it may run
        assert [d["stage"] for d in said_no.logged("decision")] == ["plan", "step"]
        h.approver = Approver()  # the default approver can ask no one
        unanswered = await h.run("write n", reply=write)
        assert unanswered.status == "denied" and "nobody could give it" in unanswered.error
        approvals = await h.records("approval")
        assert [a["unanswered"] for a in approvals] == [
            None, "this frontend has no way to ask the user"]
        assert [d.by for d in unanswered.refused] == ["nobody"]
        outcomes = [r["status"] for r in await h.records("outcome")]
        assert outcomes == ["denied", "denied"] and not (h.workspace / "n.txt").exists()
        two = plan(("notes.write", {"path": "a", "text": ""}), ("notes.write",
                                                                  {"path": "b", "text": ""}))
        h.approver = ScriptedApprover(plan="deny")
        refused = await h.run("ab", reply=two)
        assert (refused.status, refused.error, refused.results) == ("denied", "plan denied", [])
        assert len(refused.plans) == 1 and refused.asked == ()


async def test_the_kernel_asks_for_writes_even_with_no_write_gate_plugin() -> None:
    # no policy plugin at all
    async with Harness(notes(), mode="execute-auto",
                       approver=ScriptedApprover(steps=["deny"])) as h:
        run = await h.run("write w", reply=plan(("notes.write", {"path": "w.txt", "text": "x"})))
        assert run.status == "denied" and not (h.workspace / "w.txt").exists()
        assert run.asked[0].reasons[-1] == ("write-gate: notes.write writes: it needs "
                                            "your approval")


async def test_schema_and_unknown_tools_are_refused_before_anything_runs() -> None:
    async with Harness(notes(), AllowReads(), mode=CONFIRM) as h:
        run = await h.run("go", reply=plan(("notes.read", {"path": 3}), ("rm.everything", {})))
        assert run.statuses == ["denied", "denied"]
        assert run.status == "aborted"  # more than half the steps failed
        decisions = run.logged("decision")
        assert "3 is not of type 'string' @ $.path" in decisions[0]["reason"]
        assert decisions[1]["reason"] == "unknown tool 'rm.everything'"


async def test_multi_step_write_plan_needs_plan_approval_and_execute_binds_each_preview() -> None:
    approver = ScriptedApprover(plan="execute")
    async with Harness(notes(), AllowReads(), mode=CONFIRM, approver=approver) as h:
        run = await h.run("write two notes", reply=plan(
            ("notes.write", {"path": "e.txt", "text": "1\n"}),
            ("notes.write", {"path": "f.txt", "text": "2\n"})))
        assert run.statuses == ["ok", "ok"]
        assert len(approver.plans) == 1 and len(run.plans[0].steps) == 2
        assert approver.asked == []


async def test_stuck_and_error_rate_guardrails() -> None:
    async with Harness(notes(), AllowReads(), mode=CONFIRM) as h:
        (h.workspace / "s.txt").write_text("s")
        same = ("notes.read", {"path": "s.txt"})
        other = ("notes.read", {"path": "t.txt"})
        (h.workspace / "t.txt").write_text("t")
        stuck = await h.run("loop", reply=plan(same, other, same, other, same))
        assert stuck.status == "paused"
        assert "I seem to be stuck" in stuck.error
        assert len(stuck.results) == 4
        again = await h.run("read s", reply=plan(same, same, same))
        assert again.status == "executed"  # the same read again, right after: planned once
        assert [r.status for r in again.results] == ["ok"]
        failing = await h.run("read missing1, missing2 and s.txt", reply=plan(
            ("notes.read", {"path": "missing1"}), ("notes.read", {"path": "missing2"}),
            ("notes.read", {"path": "s.txt"})))
        assert failing.status == "aborted"
        assert "2 of 2 steps failed" in failing.error


async def test_propose_only_never_executes_and_off_never_plans() -> None:
    async with Harness(notes(), AllowReads()) as h:
        # default mode: propose-only
        proposed = await h.run("write g", reply=plan(("notes.write", {"path": "g.txt",
                                                                     "text": "x"})))
        assert proposed.status == "proposed" and proposed.tools == []
        assert not (h.workspace / "g.txt").exists()
        await h.set_mode("off")
        assert (await h.run("anything")).status == "ignored"
        assert len(h.provider.requests) == 1  # off asked the model nothing


async def test_preset_switch_takes_effect_without_restart() -> None:
    async with Harness(notes(), script=[Response(text="one"), Response(text="two")]) as h:
        assert (await h.run("a")).text == "one"
        await h.copilot.use_preset(Profile(name="precise", model=ModelPreset(
            provider="scripted", temperature=0.7, stop=("\n\n",))))
        assert (await h.run("b")).text == "two"
        assert [r.temperature for r in h.provider.requests] == [0.0, 0.7]
        assert h.provider.requests[1].stop == ("\n\n", "<END>")


async def test_idle_execute_auto_downgrades_to_propose_only() -> None:
    now = [0.0]
    async with Harness(notes()) as h:
        copilot = h.operator(idle_downgrade_s=60, clock=lambda: now[0])
        await copilot.set_mode("execute-auto", channel="user")
        now[0] = 61
        assert await copilot.mode() == "propose-only"
        assert (await h.records("mode"))[-1]["why"] == "idle: execute-auto expired"


async def test_calls_from_another_program_do_not_keep_execute_auto_alive() -> None:
    now = [0.0]
    async with Harness(notes(), AllowReads()) as h:
        (h.workspace / "n.txt").write_text("note\n")
        copilot = h.operator(idle_downgrade_s=60, clock=lambda: now[0])
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

    provider = ScriptedProvider(" ".join(["word"] * 200), delay=0.05)
    async with Harness(notes(), provider=provider) as h:
        async with anyio.create_task_group() as tg:
            async def cancel_soon() -> None:
                await anyio.sleep(0.2)
                h.copilot.cancel()
            tg.start_soon(cancel_soon)
            run = await h.run("talk a lot")
        assert run.status == "cancelled"
        assert run.names()[-1] == "RUN_ERROR" and h.events.names()[-1] == "RUN_ERROR"
        assert msgspec.json.encode([r["kind"] for r in await h.records()]).count(
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

    async with Harness(SlowPlugin(), AllowReads(), mode=CONFIRM) as h:
        async with anyio.create_task_group() as tg:
            async def cancel_when_running() -> None:
                await running.wait()
                h.copilot.cancel()
            tg.start_soon(cancel_when_running)
            with anyio.fail_after(10):
                run = await h.run("read two", reply=plan(("notes.read", {"path": "a"}),
                                                         ("notes.read", {"path": "b"})))
        assert run.status == "cancelled"
        kinds = [r["kind"] for r in await h.records()]
        assert kinds.count("tool_call") == 1 and "result" not in kinds
        assert kinds[-1] == "outcome" and run.kinds[-1] == "outcome"


async def test_system_events_are_recorded_and_tasks_follow_the_mode() -> None:
    async with Harness(notes(), mode="listen-only") as h:
        await h.copilot.notice("build failed: exit 2", source="ci")
        run = await h.observe(h.copilot.assign("fix the build", assigned_by="scheduler"))
        assert run.status == "ignored"  # listen-only: heard, never planned
        assert h.provider.requests == []
        kinds = [(r["kind"], r.get("source") or r.get("assigned_by")) for r in
                 await h.records() if r["kind"] in ("event", "assignment")]
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
    async with Harness(Sources(), script=[Response(text="ok")]) as h:
        run = await h.run("hi")
        (context,) = run.logged("context")
        (error,) = await h.records("context_error")
    assert run.status == "answered"
    assert context["bulletin"]["recent_shell"] == ["make test"]
    assert context["bulletin"]["clipboard"] is None, "off unless switched on"
    assert error["provider"] == "broken" and "vanished" in error["error"]


async def test_a_default_off_source_needs_the_profile() -> None:
    profile = Profile(model=ModelPreset(provider="scripted"),
                      context_providers={"clipboard": True})
    async with Harness(Sources(), profile=profile) as h:
        assert (await h.copilot.bulletin()).clipboard == "secret-ish text"


class Retrieval:
    """A context source that answers the request (``gather_for``)."""

    class Source:
        name = "retrieval"

        def __init__(self) -> None:
            self.asked: list[tuple[str, str | None]] = []

        async def gather(self, cwd: str) -> dict[str, Any]:
            return {"memory": {"text": "pinned only"}}

        async def gather_for(self, cwd: str, prompt: str,
                             thread_id: str | None) -> dict[str, Any]:
            self.asked.append((prompt, thread_id))
            return {"memory": {"text": f"Retrieved for {prompt!r}: untrusted data"}}

    def __init__(self) -> None:
        self.source = self.Source()

    from adjutant import hookimpl

    @hookimpl
    def register_context_providers(self, register: Any) -> None:
        register(self.source)


async def test_a_retrieval_source_answers_the_request_and_its_text_reaches_the_prompt(
        ) -> None:
    plugin = Retrieval()
    async with Harness(plugin, script=[Response(text="ok")]) as h:
        run = await h.run("where is it?", thread_id="t1")
        (context,) = run.logged("context")
        assert plugin.source.asked == [("where is it?", "t1")]
        assert context["bulletin"]["memory"]["text"].startswith("Retrieved for")
        prompt = h.provider.requests[-1].prompt
        assert "Retrieved for 'where is it?': untrusted data" in prompt
        assert prompt.index("Retrieved for") < prompt.index("Request: where is it?")
        assert (await h.copilot.bulletin()).memory == {"text": "pinned only"}


async def test_included_files_join_the_context_and_only_real_inner_files_are_offered(
        ) -> None:
    async with Harness(notes()) as h:
        (h.workspace / "a.txt").write_text("x")
        (h.workspace.parent / "outside.txt").write_text("x")
        offered = h.copilot.mentioned_files("look at a.txt, ../outside.txt, b.txt and a.txt")
        run = await h.run("look at a.txt", include=["a.txt"], reply=Response(text="ok"))
        (context,) = run.logged("context")
    assert offered == ["a.txt"]
    assert context["bulletin"]["selected_files"] == ["a.txt"]


async def test_file_names_are_found_in_a_pasted_wall_of_text_at_once() -> None:
    """``[\\w./-]+\\.\\w+`` over 100,000 characters backtracked for 34 s before the
    request was refused as too long; names are found token by token now."""
    async with Harness(notes()) as h:
        (h.workspace / "src").mkdir()
        (h.workspace / "src" / "app.py").write_text("x")
        (h.workspace / "notes.txt").write_text("x")
        wall = "x" * 100_000 + " see src/app.py. and notes.txt, or nothing.here"
        assert h.copilot.mentioned_files(wall) == []  # past what is scanned
        assert h.copilot.mentioned_files("see src/app.py. and notes.txt, or nothing.here"
                                          ) == ["src/app.py", "notes.txt"]
        assert h.copilot.mentioned_files("x" * 7000 + ".py notes.txt") == ["notes.txt"]


@pytest.mark.anyio
async def test_a_direct_call_is_a_logged_one_step_run_under_the_mode() -> None:
    async with Harness(notes(), AllowReads(), approver=ScriptedApprover(steps=["deny"])) as h:
        (h.workspace / "n.txt").write_text("hello")
        proposed = await h.call("notes.read", caller="mcp:x", path="n.txt")
        assert proposed.status == "proposed" and proposed.results == []
        await h.set_mode(CONFIRM)
        read = await h.call("notes.read", caller="mcp:x", path="n.txt")
        assert read.statuses == ["ok"] and read.tools == ["notes.read"]
        write = await h.call("notes.write", caller="mcp:x", path="n.txt", text="x")
        assert write.statuses == ["denied"] and len(write.asked) == 1
        assert (h.workspace / "n.txt").read_text() == "hello"
        calls = await h.records("direct_call")
        assert [(c["caller"], c["tool"]) for c in calls] == [
            ("mcp:x", "notes.read"), ("mcp:x", "notes.read"), ("mcp:x", "notes.write")]


class Waiting:
    """A context source that answers only once the model is being prepared: if the
    operator gathered the context first and prepared the model after, it would wait
    forever."""

    class Source:
        name = "slow-git"

        def __init__(self) -> None:
            self.preparing = anyio.Event()

        async def gather(self, cwd: str) -> dict[str, Any]:
            with anyio.fail_after(10):
                await self.preparing.wait()
            return {"recent_shell": ["git status"]}

    def __init__(self) -> None:
        self.source = self.Source()

    from adjutant import hookimpl

    @hookimpl
    def register_context_providers(self, register: Any) -> None:
        register(self.source)


async def test_the_model_gets_ready_while_the_context_is_gathered() -> None:
    """`Provider.prepare` (a local model's load on a cold start) runs beside the context
    gathering, not after it; a provider whose preparing fails still answers, and one
    without `prepare` is not asked."""
    from adjutant.scripted import ScriptedProvider

    class Preparing(ScriptedProvider):
        def __init__(self, waiting: Waiting, fail: bool) -> None:
            super().__init__(Response(text="ok"))
            self.waiting, self.fail = waiting, fail
            self.prepared: list[str | None] = []

        async def prepare(self, model: str | None) -> None:
            self.prepared.append(model)
            self.waiting.source.preparing.set()
            if self.fail:
                raise ProviderError("no such model file")

    for fail in (False, True):
        waiting = Waiting()
        provider = Preparing(waiting, fail)
        async with Harness(waiting, provider=provider) as h:
            run = await h.run("hi")
            assert run.outcome.status == "answered", (fail, run.outcome.error)
            assert provider.prepared == [h.kernel.profile.model.model]
            (context,) = run.logged("context")  # the source answered: not timed out
            assert context["bulletin"]["recent_shell"] == ["git status"]
