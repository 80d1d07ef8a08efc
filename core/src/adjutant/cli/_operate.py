"""The operator's subcommands that plan and run steps: ``run``, ``chat``, ``replay``
(the state's are in `adjutant.cli._state`).

Exit codes (documented in docs/usage.md, relied on by scripts):
0 done (answered, proposed, executed); 1 error; 2 bad usage; 3 the model or its
provider failed; 4 something was denied, paused or aborted; 130 interrupted.
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import json
import os
import signal
import sys
import time
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any

import anyio

from adjutant_hookspecs import (
    ActivitySnapshot,
    TextMessageContent,
    TextMessageEnd,
    TextMessageStart,
    ToolCallResult,
    ToolCallStart,
    to_builtins,
)

from ..kernel._paths import data_home
from ..operator import Copilot
from ..safety.terminal import SafeStream, printable
from . import _voice
from ._approver import TerminalApprover
from ._context_offer import SessionFiles, offer_files
from ._state import terminal_safe
from ._status import one_line as _one_line
from ._status import print_status, status_info
from ._status import say_mode as _say_mode

if TYPE_CHECKING:
    from ..kernel._kernel import Kernel

__all__ = ["EXIT", "TerminalApprover", "configure_run", "configure_stronger", "run", "stronger"]

EXIT = {"answered": 0, "proposed": 0, "executed": 0, "ignored": 0, "failed": 3,
        "denied": 4, "paused": 4, "aborted": 4, "cancelled": 130}


def configure_run(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("request", help="what you want done, in your own words")
    parser.add_argument("--non-interactive", action="store_true",
                        help="never ask: anything that needs approval is denied")
    parser.add_argument("--json", action="store_true",
                        help="print the outcome as JSON on stdout")


@terminal_safe
async def run(kernel: Kernel, args: argparse.Namespace) -> int:
    """One request: context, the model's answer streamed, the plan with previews, and
    per-step consent as the mode requires."""



    interactive = not args.non_interactive and sys.stdin.isatty()
    copilot = Copilot(kernel, approver=TerminalApprover(interactive))
    mode = await copilot.mode()
    _say_mode(mode, f" {kernel.profile.name} preset, "
              f"{kernel.profile.model.provider}:{kernel.profile.model.model}", sys.stderr)
    include = await offer_files(copilot, args.request, interactive)
    outcome = await _shown(kernel, copilot.handle(args.request, include=include))
    return _report(outcome, mode, args.json)


def configure_stronger(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run_id", nargs="?", help="the run whose request to ask again "
                        "(default: the last one; `adjutant log` lists them)")
    parser.add_argument("--non-interactive", action="store_true",
                        help="never ask: a metered preset's cost is not approved")
    parser.add_argument("--json", action="store_true",
                        help="print the outcome as JSON on stdout")


@terminal_safe
async def stronger(kernel: Kernel, args: argparse.Namespace) -> int:
    """"Try a stronger model": a request again on the next preset up, its cost estimate
    asked about first where it costs or leaves the machine."""
    interactive = not args.non_interactive and sys.stdin.isatty()
    copilot = Copilot(kernel, approver=TerminalApprover(interactive))
    mode = await copilot.mode()
    try:
        await copilot.stronger_target(args.run_id)  # before any event is shown
    except LookupError as exc:
        print(f"adjutant stronger: {exc.args[0]}", file=sys.stderr)
        return 2
    outcome = await _shown(kernel, copilot.stronger(args.run_id))
    return _report(outcome, mode, args.json)


async def _shown(kernel: Kernel, started: Awaitable[Any]) -> Any:
    """The outcome of a run, its events shown on stderr as they come."""
    progress = Progress()
    async with anyio.create_task_group() as tg:
        tg.start_soon(show_events, kernel.bus.subscribe(), progress)
        tg.start_soon(progress.run)
        outcome = await started
        progress.stop()
        await anyio.sleep(0.05)  # let the last events print
        tg.cancel_scope.cancel()
    print(file=sys.stderr)
    return outcome


def _report(outcome: Any, mode: str, as_json: bool) -> int:
    """The outcome on stdout (text, or JSON with ``--json``) and its exit code."""
    if as_json:
        print(json.dumps({"run_id": outcome.run_id, "status": outcome.status,
                          "text": outcome.text, "error": outcome.error,
                          "plan": to_builtins(outcome.plan) if outcome.plan else None,
                          "proposal": outcome.proposal,
                          "results": [to_builtins(r) for r in outcome.results]}))
    else:
        if outcome.text:
            print(outcome.text)
        for result in outcome.results:
            print(f"{result.tool}: {result.status}")
            if result.stdout:
                print(result.stdout.rstrip())
            if result.stderr:
                print(result.stderr.rstrip(), file=sys.stderr)
        if outcome.status == "proposed":
            print(f"proposed only ({mode}); `adjutant mode execute-with-confirmation` lets "
                  "you approve and run steps", file=sys.stderr)
    if outcome.error:
        print(f"{outcome.status}: {outcome.error}", file=sys.stderr)
    denied = any(r.status == "denied" for r in outcome.results)
    return 4 if denied and outcome.status == "executed" else EXIT.get(outcome.status, 1)


class Progress:
    """A one-line activity indicator on stderr while something slow runs (the model
    loading or thinking, a long command); only on a terminal, never in logs or pipes."""

    FRAMES = "|/-\\"

    def __init__(self) -> None:
        self.label: str | None = None
        self.since = 0.0
        self.shown = False
        self.live = SafeStream(sys.stderr).colour

    def start(self, label: str) -> None:
        self.label, self.since = label, time.monotonic()

    def stop(self) -> None:
        if self.shown:
            err = SafeStream(sys.stderr)
            err.control("\r\x1b[K")
            err.flush()
        self.label, self.shown = None, False

    async def run(self) -> None:
        frame = 0
        while True:
            await anyio.sleep(0.2)
            if self.live and self.label and time.monotonic() - self.since > 0.6:
                frame = (frame + 1) % len(self.FRAMES)
                err = SafeStream(sys.stderr)
                err.control("\r\x1b[K")
                err.write(f"{self.FRAMES[frame]} {_one_line(self.label, 80)} "
                          f"({time.monotonic() - self.since:.0f} s)")
                err.flush()
                self.shown = True


#: How a proposed step's verdict one mode up (execute-with-confirmation) is told.
WOULD = {"allow": "would run without asking", "ask": "would ask you first",
         "deny": "would be refused"}


async def show_events(subscription: Any, progress: Progress | None = None) -> None:
    """What the user watches while the operator works: the context used, the model's
    tokens as they stream, the plan with each step's preview (all on stderr)."""

    progress = progress or Progress()
    err = SafeStream(sys.stderr)  # the model's, the files' and the tools' text: printable
    prefix = ""  # written with the model's first token: the spinner's line would erase it
    async for envelope in subscription:
        event = envelope.event
        if isinstance(event, TextMessageStart):
            progress.start("waiting for the model")
        elif isinstance(event, ToolCallStart):
            progress.start(f"running {event.tool_call_name}")
        elif isinstance(event, ToolCallResult | TextMessageEnd):
            progress.stop()
        if isinstance(event, TextMessageContent):
            progress.stop()
            if prefix:
                err.write(prefix)
                prefix = ""
            err.style(event.delta, "2")  # chunk by chunk: each control shown as itself
            err.flush()
        elif isinstance(event, ActivitySnapshot) and event.activity_type == "context":
            fields = ", ".join(_one_line(k) for k, v in event.content.items() if v)
            err.write(f"context: {fields} (cwd {_one_line(event.content.get('cwd'))})\n")
            err.flush()
            prefix = "model: "
        elif isinstance(event, ActivitySnapshot) and event.activity_type == "second-look":
            err.write(f"\nsecond look: {_one_line(event.content.get('text'))}\n")
            prefix = "model: "
        elif isinstance(event, ActivitySnapshot) and event.activity_type == "malformed-plan":
            # the text streamed above was not used: say so before the next attempt's
            err.write(f"\nnot a valid plan, so not used ({_one_line(event.content.get('error'))});"
                      " asking again with a simpler prompt\n")
            prefix = "model: "
        elif isinstance(event, ActivitySnapshot) and event.activity_type == "plan":
            err.write("\n")
            for step in event.content.get("steps", []):
                err.write(f"plan step {step['index'] + 1}: {_one_line(step['tool'])} "
                          f"{_one_line(json.dumps(step['args'], ensure_ascii=False))}\n")
                if step.get("intent"):
                    err.write(f"    why: {_one_line(step['intent'], 500)}\n")
                for line in printable(step.get("preview") or "").splitlines()[:20]:
                    err.write(f"    {line}\n")
                if not step.get("preview"):  # no preview: why ("10800 is greater than the
                    for reason in step.get("reasons", [])[:3]:  # maximum of 600" had been
                        err.write(f"    not runnable: {_one_line(reason, 300)}\n")  # silent)
                if would := step.get("would"):  # propose-only: what would happen
                    err.write(f"    {WOULD.get(would['decision'], would['decision'])}: "
                              f"{_one_line(would['reason'], 300)}\n")
            err.flush()
        elif isinstance(event, ActivitySnapshot) and event.activity_type == "warning":
            err.write(f"\nwarning: {event.content.get('text')}\n")
            err.flush()
        elif isinstance(event, ActivitySnapshot) and event.activity_type == "route":
            went = "went to" if event.content.get("escalated") else "stays on"
            err.write(f"this one {went} {_one_line(event.content.get('label'), 120)}: "
                      f"{_one_line(event.content.get('reason'), 300)}\n")
            err.flush()


#: Quick actions of the chat palette: a slash command and the request it sends.
QUICK_ACTIONS = {
    "/summarize": "Summarize the current folder: what is here and what it is for.",
    "/explain": "Explain the last error in my recent shell commands and how to fix it.",
    "/commit-msg": "Draft a commit message for the changes in this repository.",
}
CHAT_HELP = """commands: /summarize, /explain, /commit-msg (quick actions); /plan (show the
last plan); /mode [MODE]; /status; /talk or Ctrl-T (say a request; adjutant-stt); /hush
(stop speaking; also Space or Esc at the prompt while it speaks); /copy (what was said,
else the last answer, to the clipboard); /help; /quit. Ctrl-C stops the model, the
running step or the speech and keeps the session; Ctrl-D or /quit leaves."""


def configure_chat(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--non-interactive", action="store_true",
                        help="never ask for approval: anything that needs it is denied")


@terminal_safe
async def chat(kernel: Kernel, args: argparse.Namespace) -> int:
    """A session: requests one after another, with history, quick actions and
    interrupts (Ctrl-C stops generation or the step, not the session)."""



    _history()
    _voice.bind_talk_key(kernel)
    copilot = Copilot(kernel, approver=TerminalApprover(not args.non_interactive))
    last: dict[str, Any] = {}
    files = SessionFiles()  # the files the user let into every request of the session
    busy = anyio.Event()
    busy.set()  # set: idle
    terminal = sys.stdin.isatty() and sys.stdout.isatty()

    async def interrupts() -> None:
        with anyio.open_signal_receiver(signal.SIGINT) as signals:
            async for _ in signals:
                if not busy.is_set():
                    copilot.cancel()
                    print("\n(interrupted; the session goes on)", file=sys.stderr)
                elif _voice.hush(kernel):
                    print("\n(stopped speaking)", file=sys.stderr)
                else:
                    print("\n(Ctrl-D or /quit to leave)", file=sys.stderr)

    async def ask(prompt: str) -> str | None:
        begun = ""
        if terminal:
            await _voice.caught_up(kernel)
        while terminal and _voice.speaking(kernel):  # Space or Esc stops the speech
            key = await anyio.to_thread.run_sync(
                _voice.first_key, prompt, lambda: _voice.speaking(kernel),
                abandon_on_cancel=True)
            if key.eof:
                return None
            if key.hush:
                if _voice.hush(kernel):
                    print("(stopped speaking)", file=sys.stderr)
                continue
            begun = key.text
            break

        def read() -> str | None:
            try:
                return _input(prompt, begun)
            except EOFError:
                return None
        return await anyio.to_thread.run_sync(read, abandon_on_cancel=True)

    _say_mode(await copilot.mode(), " Adjutant chat; /help for commands", sys.stderr)
    async with anyio.create_task_group() as tg:
        progress = Progress()
        tg.start_soon(interrupts)
        tg.start_soon(show_events, kernel.bus.subscribe(), progress)
        tg.start_soon(progress.run)
        while True:
            line = await ask(f"{await copilot.mode()}> ")
            if line is None or line.strip() in ("/quit", "/exit"):
                break
            line = line.strip()
            if not line:
                continue
            if line == "/help":
                print(CHAT_HELP)
                continue
            if line == "/plan":
                plan = last.get("plan")
                print(json.dumps(plan, indent=2) if plan else "no plan yet")
                continue
            if line.startswith("/mode"):
                wanted = line.split()[1:] or [""]
                try:
                    if wanted[0] and not await copilot.set_mode(wanted[0], channel="user"):
                        print(f"mode {_one_line(wanted[0], 40)!r} was refused")
                except ValueError as exc:
                    print(_one_line(str(exc)))
                _say_mode(await copilot.mode())
                continue
            if line == "/status":

                print_status(await status_info(kernel, copilot))
                continue
            if line == _voice.HUSH:
                print("(stopped speaking)" if _voice.hush(kernel) else "nothing is being said",
                      file=sys.stderr)
                continue
            if line == _voice.COPY:
                _voice.copy_said(kernel, last.get("text") or "")
                continue
            if line == _voice.TALK:  # push-to-talk: a voice frontend hears the request
                line = await _voice.spoken_request(kernel, copilot)
                if not line:
                    continue
            request = QUICK_ACTIONS.get(line, line)
            if request.startswith("/"):
                print(f"unknown command {_one_line(line, 40)!r}; /help lists them")
                continue
            include = await offer_files(copilot, request, not args.non_interactive, files)
            busy = anyio.Event()
            try:
                outcome = await copilot.handle(request, include=include)
            finally:
                busy.set()
                progress.stop()
            last["plan"] = to_builtins(outcome.plan) if outcome.plan else last.get("plan")
            last["text"] = outcome.text or last.get("text")
            _print_outcome(outcome)
        tg.cancel_scope.cancel()
    return 0


def _print_outcome(outcome: Any) -> None:
    if outcome.text:
        print(outcome.text)
    if outcome.plan is not None and outcome.status == "proposed":
        for index, step in enumerate(outcome.plan.steps, 1):
            print(f"  {index}. {_one_line(step.tool)} "
                  f"{_one_line(json.dumps(step.args, ensure_ascii=False))}")
    for result in outcome.results:
        print(f"{result.tool}: {result.status}")
        if result.stdout:
            print(result.stdout.rstrip())
    if outcome.error:
        print(f"{outcome.status}: {outcome.error}", file=sys.stderr)


def _input(prompt: str, begun: str) -> str:
    """``input`` with the line already begun with ``begun`` (the key that was typed
    while speech played), editable as if typed here."""
    if not begun:
        return input(prompt)
    try:
        import readline  # line editing for input() from here on: only when asked
    except ImportError:
        return begun + input(prompt + begun)
    readline.set_startup_hook(lambda: readline.insert_text(begun))
    try:
        return input(prompt)
    finally:
        readline.set_startup_hook()


def _history() -> None:
    """Line editing and a persistent history where readline exists."""
    try:
        import readline  # line editing for input() once imported: only in a chat
    except ImportError:
        return
    path = os.path.join(str(data_home()), "chat_history")
    with contextlib.suppress(OSError):
        readline.read_history_file(path)
    readline.set_history_length(1000)
    atexit.register(_save_history, readline, path)


def _save_history(readline: Any, path: str) -> None:
    with contextlib.suppress(OSError):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        readline.write_history_file(path)


def configure_replay(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run_id", help="the run (see `adjutant log tail`)")
    parser.add_argument("--step", type=int, default=0, help="which step (default 0)")
    parser.add_argument("--dry-run", action="store_true",
                        help="only preview what the step would do now")
    parser.add_argument("--json", action="store_true")


@terminal_safe
async def replay(kernel: Kernel, args: argparse.Namespace) -> int:
    """Run a logged step again as a new run, through the whole pipeline."""

    copilot = Copilot(kernel, approver=TerminalApprover(sys.stdin.isatty()))
    try:
        outcome = await copilot.replay(args.run_id, args.step, dry_run=args.dry_run)
    except LookupError as exc:
        print(str(exc), file=sys.stderr)
        return 1
    if args.json:

        print(json.dumps({"run_id": outcome.run_id, "status": outcome.status,
                          "text": outcome.text, "error": outcome.error,
                          "results": [to_builtins(r) for r in outcome.results]}))
    else:
        _print_outcome(outcome)
    return EXIT.get(outcome.status, 1)
