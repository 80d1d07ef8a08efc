"""`TerminalApprover`: consent asked on the terminal, one question at a time."""

from __future__ import annotations

import concurrent.futures
import contextlib
import json
import sys
import termios
import threading
from typing import Any

import anyio

from ..operator._consent import Approver, PlanDecision, Requester, StepDecision, packet_id
from ..safety.terminal import SafeStream
from ._status import one_line as _one_line
from ._step_view import editable, prefill_possible, read_prefilled, show_step

__all__ = ["TerminalApprover"]


def _target(packet: Any) -> str:
    """What a step acts on, in a few words, for the question line."""
    args = packet.args if isinstance(packet.args, dict) else {}
    for key in ("path", "paths", "target", "argv", "command", "cmd", "url", "pid"):
        if key in args:
            value = args[key]
            if isinstance(value, list):
                value = " ".join(str(v) for v in value)
            return _one_line(value, 60)
    return ""


class TerminalApprover(Approver):
    """Asks on the terminal; with ``interactive=False`` refuses everything it is asked
    (scripts never get more than the mode and the write-gate allow without asking).

    ``tty``: a terminal opened for reading and writing (``/dev/tty``) to ask on instead
    of stdin and stderr, for when those carry something else (``adjutant mcp serve``).

    Questions are asked one at a time (several clients, or one client's concurrent
    calls, wait their turn): the packet is shown and its answer read under one lock,
    input typed before the question is discarded, and the question names the packet
    (tool, target, `packet_id`), so an answer is only ever given for the packet shown
    with it. A `requester` (an MCP client) gets its questions rationed and can be
    denied everything at once (``D``): see `adjutant.Requester`."""

    def __init__(self, interactive: bool, tty: Any = None,
                 unanswered: str = "non-interactive: nobody was asked") -> None:
        self.interactive = interactive
        self.tty = tty
        self.out = SafeStream(tty or sys.stderr)
        self.unanswered = unanswered  # why a step is refused when nobody can answer
        self._lock: Any = None
        self._reading: concurrent.futures.Future[str] | None = None
        self._throttled: set[int] = set()  # requesters told about their flood

    def _turn(self) -> Any:
        if self._lock is None:
            self._lock = anyio.Lock()
        return self._lock

    def _discard_typeahead(self) -> None:
        """Whatever was typed before the question is shown answers nothing."""
        source = self.tty if self.tty is not None else sys.stdin
        with contextlib.suppress(Exception):
            if source.isatty():
                termios.tcflush(source.fileno(), termios.TCIFLUSH)

    def _read_line(self) -> str:
        if self.tty is not None:
            return str(self.tty.readline())
        try:
            return input()
        except EOFError:
            return ""

    async def _ask(self, question: str, prefill: str | None = None) -> str:
        """The answer to ``question``; ``prefill``: text already typed for the user to
        edit, where the terminal allows (`prefill_possible`)."""
        if not self.interactive:
            self.out.write(f"{question} -> denied (non-interactive)\n")
            self.out.flush()
            return ""
        # A line read for a question that was withdrawn (its caller cancelled) answered
        # that question, not this one: dropped. A read still waiting is reused.
        if self._reading is not None and self._reading.done():
            self._reading = None
        self._discard_typeahead()
        if prefill is None or self._reading is not None:
            read_line = self._read_line
            self.out.write(question)
            self.out.flush()
        else:  # readline shows the question (a constant) and the text to edit
            def read_line() -> str:
                return read_prefilled(question, prefill)
        if self._reading is None:
            reading: concurrent.futures.Future[str] = concurrent.futures.Future()

            def read() -> None:
                try:
                    reading.set_result(read_line())
                except BaseException as exc:  # handed to the asker
                    reading.set_exception(exc)
            threading.Thread(target=read, name="adjutant-approval", daemon=True).start()
            self._reading = reading
        reading = self._reading
        try:
            line = await anyio.to_thread.run_sync(reading.result, abandon_on_cancel=True)
        except anyio.get_cancelled_exc_class():
            self.out.write("\n(question withdrawn: the caller went away)\n")
            self.out.flush()
            raise
        self._reading = None
        return line.strip()

    async def approve_plan(self, packet: Any) -> PlanDecision:
        async with self._turn():
            self.out.write(f"\nThe plan has {len(packet.steps)} steps.\n")
            answer = (await self._ask("[x] execute the plan, [s] step by step, [d] deny: "
                                      )).lower()
        if not self.interactive:
            return PlanDecision("deny", unanswered=self.unanswered)
        return PlanDecision({"x": "execute", "s": "step"}.get(  # type: ignore[arg-type]
            answer[:1], "deny"))

    async def approve_escalation(self, question: Any) -> bool:
        """Asked before a request leaves the machine for a remote preset (y/N)."""
        if Requester.current() is not None:  # another program asked: never sent out
            return False
        async with self._turn():
            self.out.write(f"\nThis request is heavy ({_one_line(question.reason, 200)}).\n")
            answer = await self._ask(
                f"Send it to {_one_line(question.preset, 40)} "
                f"({_one_line(question.model, 80)}, off this machine; up to "
                f"{question.tokens:,} tokens, ~${question.cost:.4f})? [y/N] ")
        return self.interactive and answer.lower() in ("y", "yes")

    async def approve_step(self, packet: Any) -> StepDecision:
        who = Requester.current()
        if who is not None and who.denied:
            return StepDecision("deny")  # the user denied everything from it
        if who is not None and self.interactive and not who.take_question():
            if id(who) not in self._throttled:
                self._throttled.add(id(who))
                self.out.write(f"\n(refusing questions from {_one_line(who.name, 80)}: more "
                               f"than {who.questions} in {who.window_s:g} s)\n")
                self.out.flush()
            return StepDecision("deny", unanswered=(
                f"{_one_line(who.name, 80)} asked more than {who.questions} questions in "
                f"{who.window_s:g} s: refused without asking; try again later"))
        async with self._turn():
            if who is not None and who.denied:  # denied while this one waited its turn
                return StepDecision("deny")
            return await self._step_question(packet, who)

    async def _step_question(self, packet: Any, who: Any) -> StepDecision:
        ident = packet_id(packet)
        show_step(packet, self.out, who=who, ident=ident)
        choices = "[g] grant, [d] deny, [e] edit arguments: "
        if who is not None:
            choices = f"[D] deny everything from this client, {choices}"
        question = f"{_one_line(packet.tool, 40)} {_target(packet)} #{ident}: {choices}"
        if not self.interactive:
            await self._ask(question)
            return StepDecision("deny", unanswered=self.unanswered)
        while True:
            answer = await self._ask(question)
            if who is not None and (answer[:1] == "D" or answer.lower() == "deny all"):
                await who.deny_all(packet.run_id)
                self.out.write(f"(everything from {_one_line(who.name, 80)} is denied "
                               "for this session)\n")
                self.out.flush()
                return StepDecision("deny")
            answer = answer.lower()
            if answer[:1] == "g":
                return StepDecision("grant")
            if answer[:1] != "e":
                return StepDecision("deny")
            current = editable(packet.args)
            if prefill_possible(self.tty):
                edited = await self._ask("new arguments (JSON): ", prefill=current)
            else:
                edited = await self._ask("new arguments (JSON; empty keeps them): ")
            try:
                args = json.loads(edited) if edited.strip() else packet.args
            except ValueError as exc:
                self.out.write(f"not JSON ({exc}); asked again\n")
                continue
            if args == packet.args:
                self.out.write("arguments unchanged; asked again\n")
            elif isinstance(args, dict):
                return StepDecision("edit", args)
            else:
                self.out.write("arguments must be a JSON object; asked again\n")
