"""Two runs at the same time on one operator: each run's events,
approvals, cancellation and log records stay its own. A web dock and a voice frontend,
or two clients of ``adjutant mcp serve``, share one `Copilot` this way."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from adjutant import Approver, Copilot, StepDecision, StepPacket
from adjutant.testing import FakeRead, FakeWrite, Harness, fake_tools
from adjutant_hookspecs import (
    ApprovalRequested,
    Plan,
    RunStarted,
    StateDelta,
    ToolCall,
    ToolCallStart,
    Verdict,
    hookimpl,
)

pytestmark = pytest.mark.anyio


class AllowReads:
    """Reads allowed, writes asked (the guard's stand-in)."""

    name = "allow-reads"

    async def evaluate(self, request: Any) -> Verdict:
        if request.declaration.safety.level == "read":
            return Verdict(decision="allow", reason="reads are fine")
        return Verdict(decision="ask", reason="writes ask")

    @hookimpl
    def register_policies(self, register: Any) -> None:
        register(self)


class Gate(Approver):
    """Holds each step question until the test answers it."""

    def __init__(self) -> None:
        self.asked: list[StepPacket] = []
        self.waiting = anyio.Event()
        self._answer: dict[str, str] = {}
        self._released: dict[str, anyio.Event] = {}

    async def approve_plan(self, packet: Any) -> Any:
        return "step"  # ask each step

    async def approve_step(self, packet: StepPacket) -> StepDecision:
        self.asked.append(packet)
        released = self._released.setdefault(packet.run_id, anyio.Event())
        self.waiting.set()
        await released.wait()
        return StepDecision(self._answer[packet.run_id])  # type: ignore[arg-type]

    def answer(self, run_id: str, action: str) -> None:
        self._answer[run_id] = action
        self._released.setdefault(run_id, anyio.Event()).set()


def write(path: str) -> Plan:
    return Plan(steps=(ToolCall(tool="notes.write", args={"path": path, "text": path}),))


def tools() -> Any:
    return fake_tools(FakeRead("notes.read"), FakeWrite("notes.write"), name="notes")


async def asked_once(gate: Gate) -> StepPacket:
    with anyio.fail_after(10):
        await gate.waiting.wait()
    gate.waiting = anyio.Event()
    return gate.asked[-1]


async def test_two_runs_keep_their_threads_approvals_cancellation_and_records() -> None:
    async with Harness(tools(), AllowReads()) as h:
        copilot = Copilot(h.kernel)
        await copilot.set_mode("execute-with-confirmation", channel="user")
        h.events.clear()
        gate_a, gate_b = Gate(), Gate()  # each frontend answers for its own runs
        outcomes: dict[str, Any] = {}

        async def run(thread: str, gate: Gate) -> None:
            outcomes[thread] = await copilot.handle(f"write {thread}.txt", thread_id=thread,
                                                    approver=gate)

        async with anyio.create_task_group() as tg:
            h.provider.queue(write("a.txt"))
            tg.start_soon(run, "a", gate_a)
            packet_a = await asked_once(gate_a)
            h.provider.queue(write("b.txt"))
            tg.start_soon(run, "b", gate_b)
            packet_b = await asked_once(gate_b)
            assert packet_a.run_id != packet_b.run_id
            assert (packet_a.args["path"], packet_b.args["path"]) == ("a.txt", "b.txt")
            assert set(copilot.runs) == {packet_a.run_id, packet_b.run_id}
            # b is answered and ends first: a's cancel scope is still a's
            gate_b.answer(packet_b.run_id, "grant")
            with anyio.fail_after(10):
                while "b" not in outcomes:  # noqa: ASYNC110
                    await anyio.sleep(0.01)
            copilot.cancel(thread_id="b")  # b is over: nothing of a's is touched
            assert packet_a.run_id in copilot.runs
            copilot.cancel()  # Ctrl-C: every run in progress, so a
        a, b = outcomes["a"], outcomes["b"]
        assert (a.run_id, b.run_id) == (packet_a.run_id, packet_b.run_id)
        assert a.status == "cancelled" and b.status == "executed"
        assert not (h.workspace / "a.txt").exists()
        assert (h.workspace / "b.txt").read_text() == "b.txt"
        assert gate_a.asked == [packet_a] and gate_b.asked == [packet_b]
        assert copilot.runs == {}

        # every event of a run is on its own thread, and each run has its own
        threads = {env.run_id: env.thread_id for env in h.events.envelopes if env.run_id}
        assert threads == {a.run_id: "a", b.run_id: "b"}
        by_run = {rid: [e.event for e in h.events.envelopes if e.run_id == rid]
                  for rid in (a.run_id, b.run_id)}
        for rid, events in by_run.items():
            assert sum(isinstance(e, RunStarted) for e in events) == 1
            asked = [e for e in events if isinstance(e, ApprovalRequested)]
            assert [e.interrupt.metadata["packet"]["run_id"] for e in asked] == [rid]
            plans = [e for e in events if isinstance(e, StateDelta)
                     and e.delta[0].path == "/plan"]
            assert len(plans) == 1
        assert [type(e) for e in by_run[a.run_id] if isinstance(e, ToolCallStart)] == []
        assert len([e for e in by_run[b.run_id] if isinstance(e, ToolCallStart)]) == 1

        # the log: each run's records carry its id, and only its own effects
        records = await copilot.log.records()
        outcome = {r["run_id"]: r["status"] for r in records if r["kind"] == "outcome"}
        assert outcome == {a.run_id: "cancelled", b.run_id: "executed"}
        for rid, path in ((a.run_id, "a.txt"), (b.run_id, "b.txt")):
            mine = [r for r in records if r.get("run_id") == rid]
            assert {r["args"]["path"] for r in mine if r.get("args")} == {path}
        assert [r["run_id"] for r in records if r["kind"] == "tool_call"] == [b.run_id]
        assert [r["run_id"] for r in records if r["kind"] == "approval"] == [b.run_id]


async def test_an_approval_token_of_one_run_does_not_let_another_run_a_step() -> None:
    """A plan approved as a whole issues tokens bound to its run: a second run of the
    same write, at the same time, is still asked."""
    async with Harness(tools(), AllowReads()) as h:
        copilot = Copilot(h.kernel)
        await copilot.set_mode("execute-with-confirmation", channel="user")
        gate = Gate()
        outcomes: list[Any] = []

        class Execute(Approver):
            async def approve_plan(self, packet: Any) -> Any:
                return "execute"

        two = Plan(steps=(ToolCall(tool="notes.write", args={"path": "x.txt", "text": "1"}),
                          ToolCall(tool="notes.write", args={"path": "y.txt", "text": "2"})))

        async def run(approver: Approver) -> None:
            outcomes.append(await copilot.handle("write two", approver=approver))

        async with anyio.create_task_group() as tg:
            h.provider.queue(two)
            tg.start_soon(run, Execute())  # granted as a plan: no step questions
            h.provider.queue(two)
            tg.start_soon(run, gate)
            packet = await asked_once(gate)  # the second run asks for its own first step
            gate.answer(packet.run_id, "deny")
        granted, asked = sorted(outcomes, key=lambda o: o.status != "executed")
        assert granted.status == "executed" and asked.status == "aborted"  # both denied
        assert [(p.run_id, p.index) for p in gate.asked] == [(asked.run_id, 0),
                                                             (asked.run_id, 1)]
        assert [r.status for r in asked.results] == ["denied", "denied"]
        ran = [r["run_id"] for r in await copilot.log.records() if r["kind"] == "tool_call"]
        assert ran == [granted.run_id, granted.run_id]


async def test_a_change_of_mode_reaches_every_thread_the_operator_serves() -> None:
    async with Harness(tools(), AllowReads()) as h:
        copilot = Copilot(h.kernel)
        for thread in ("voice", "dock"):
            h.provider.queue(Plan(steps=(ToolCall(tool="notes.read", args={"path": "n"}),)))
            await copilot.handle("read n", thread_id=thread)
        h.events.clear()
        await copilot.set_mode("listen-only", channel="user")
        deltas = [(env.thread_id, env.event.delta[0].value) for env in h.events.envelopes
                  if isinstance(env.event, StateDelta)]
        assert deltas == [("voice", "listen-only"), ("dock", "listen-only")]
