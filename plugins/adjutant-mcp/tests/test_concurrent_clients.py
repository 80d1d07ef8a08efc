"""Two MCP clients at the same time on one ``adjutant mcp serve`` (one `Copilot`):
each call's question, outcome, cancellation and log records stay its own."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.types import Implementation

import adjutant_files
import adjutant_guard
from adjutant import Approver, Copilot, Requester, StepDecision, StepPacket
from adjutant.testing import Harness
from adjutant_mcp._serve import build_server

pytestmark = pytest.mark.anyio


class Terminal(Approver):
    """The server's terminal: each question waits until the test answers it, and
    remembers which client asked."""

    def __init__(self) -> None:
        self.asked: list[tuple[str | None, StepPacket]] = []
        self.new = anyio.Event()
        self._answers: dict[str, tuple[anyio.Event, list[str]]] = {}

    async def approve_step(self, packet: StepPacket) -> StepDecision:
        who = Requester.current()
        self.asked.append((who.name if who else None, packet))
        released, answer = self._answers.setdefault(packet.run_id, (anyio.Event(), []))
        self.new.set()
        await released.wait()
        return StepDecision(answer[0])  # type: ignore[arg-type]

    def answer(self, run_id: str, action: str) -> None:
        released, answer = self._answers.setdefault(run_id, (anyio.Event(), []))
        answer.append(action)
        released.set()

    async def question(self) -> StepPacket:
        with anyio.fail_after(10):
            await self.new.wait()
        self.new = anyio.Event()
        return self.asked[-1][1]


def client(server: Any, name: str) -> Client:
    return Client(server, client_info=Implementation(name=name, version="1"))


def text(result: Any) -> str:
    (content,) = result.content
    value: str = content.text
    return value


async def test_two_clients_calling_at_once_each_get_their_own_question_and_result() -> None:
    async with Harness(adjutant_guard, adjutant_files) as h:
        (h.workspace / "a.txt").write_text("alpha\n")
        terminal = Terminal()
        copilot = Copilot(h.kernel, approver=terminal)
        await copilot.set_mode("execute-with-confirmation", channel="user")
        server = build_server(h.kernel, copilot)  # as over HTTP: many clients
        results: dict[str, Any] = {}
        async with client(server, "dock") as dock, client(server, "voice") as voice:

            async def call(who: Client, key: str, tool: str, args: dict[str, Any]) -> None:
                results[key] = await who.call_tool(tool, args)

            async with anyio.create_task_group() as tg:
                tg.start_soon(call, dock, "dock-write", "fs.write",
                              {"path": "dock.txt", "content": "from the dock\n"})
                dock_asked = await terminal.question()  # the dock's write waits
                # meanwhile the voice client reads, and runs at once
                await call(voice, "voice-read", "fs.read", {"path": "a.txt"})
                assert "alpha" in text(results["voice-read"])
                tg.start_soon(call, voice, "voice-write", "fs.write",
                              {"path": "voice.txt", "content": "from the voice\n"})
                voice_asked = await terminal.question()
                assert dock_asked.run_id != voice_asked.run_id
                assert set(copilot.runs) == {dock_asked.run_id, voice_asked.run_id}
                terminal.answer(voice_asked.run_id, "deny")  # the later one first
                with anyio.fail_after(10):
                    while "voice-write" not in results:  # noqa: ASYNC110
                        await anyio.sleep(0.01)
                assert dock_asked.run_id in copilot.runs  # untouched by the other's end
                terminal.answer(dock_asked.run_id, "grant")

        assert [(name, p.args["path"]) for name, p in terminal.asked] == [
            ('the MCP client "dock 1"', "dock.txt"), ('the MCP client "voice 1"', "voice.txt")]
        assert not results["dock-write"].is_error
        assert results["voice-write"].is_error and "denied by the user" in text(
            results["voice-write"])
        assert (h.workspace / "dock.txt").read_text() == "from the dock\n"
        assert not (h.workspace / "voice.txt").exists()

        records = await copilot.log.records()
        callers = {r["run_id"]: r["caller"] for r in records if r["kind"] == "direct_call"}
        assert callers[dock_asked.run_id] == "mcp:dock 1"
        assert callers[voice_asked.run_id] == "mcp:voice 1"
        outcomes = {r["run_id"]: r["status"] for r in records if r["kind"] == "outcome"}
        assert outcomes[dock_asked.run_id] == "executed"
        assert outcomes[voice_asked.run_id] == "denied"
        approvals = {r["run_id"]: r["action"] for r in records if r["kind"] == "approval"}
        assert approvals == {dock_asked.run_id: "grant", voice_asked.run_id: "deny"}
        ran = [r["run_id"] for r in records if r["kind"] == "tool_call"]
        assert voice_asked.run_id not in ran and dock_asked.run_id in ran

        # each run's events are its own: one question each, for its own packet
        for asked in (dock_asked, voice_asked):
            names = [type(e.event).__name__ for e in h.events.envelopes
                     if e.run_id == asked.run_id]
            assert names.count("RunStarted") == names.count("ApprovalRequested") == 1


async def test_cancelling_one_clients_run_leaves_the_other_running() -> None:
    async with Harness(adjutant_guard, adjutant_files) as h:
        terminal = Terminal()
        copilot = Copilot(h.kernel, approver=terminal)
        await copilot.set_mode("execute-with-confirmation", channel="user")
        server = build_server(h.kernel, copilot)
        results: dict[str, Any] = {}
        async with client(server, "dock") as dock, client(server, "voice") as voice:

            async def call(who: Client, key: str, path: str) -> None:
                results[key] = await who.call_tool("fs.write", {"path": path, "content": key})

            async with anyio.create_task_group() as tg:
                tg.start_soon(call, dock, "dock", "dock.txt")
                dock_asked = await terminal.question()
                tg.start_soon(call, voice, "voice", "voice.txt")
                voice_asked = await terminal.question()
                copilot.cancel(dock_asked.run_id)  # the user stops the dock's call only
                with anyio.fail_after(10):
                    while "dock" not in results:  # noqa: ASYNC110
                        await anyio.sleep(0.01)
                assert list(copilot.runs) == [voice_asked.run_id]
                terminal.answer(voice_asked.run_id, "grant")
        assert results["dock"].is_error and "cancelled by the user" in text(results["dock"])
        assert not results["voice"].is_error
        assert not (h.workspace / "dock.txt").exists()
        assert (h.workspace / "voice.txt").read_text() == "voice"
        records = await copilot.log.records()
        outcomes = {r["run_id"]: r["status"] for r in records if r["kind"] == "outcome"}
        assert outcomes == {dock_asked.run_id: "cancelled", voice_asked.run_id: "executed"}
