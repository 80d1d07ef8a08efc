"""The operator's subcommands: ``run``, ``mode``, ``status``, ``tools``, ``presets``.

Exit codes (documented in README, relied on by scripts):
0 done (answered, proposed, executed); 1 error; 2 bad usage; 3 the model or its
provider failed; 4 something was denied, paused or aborted; 130 interrupted.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from typing import Any, Literal

from .._consent import Approver, StepDecision

__all__ = ["EXIT", "TerminalApprover", "configure_run", "run"]

EXIT = {"answered": 0, "proposed": 0, "executed": 0, "ignored": 0, "failed": 3,
        "denied": 4, "paused": 4, "aborted": 4, "cancelled": 130}
MODES = ("off", "listen-only", "propose-only", "execute-with-confirmation", "execute-auto")
#: The mode's colour: off grey, propose blue, confirm amber, auto green.
COLOURS = {"off": "90", "listen-only": "90", "propose-only": "34",
           "execute-with-confirmation": "33", "execute-auto": "32"}


def _colour(text: str, code: str, stream: Any = sys.stdout) -> str:
    if os.environ.get("NO_COLOR") or not getattr(stream, "isatty", lambda: False)():
        return text
    return f"\x1b[{code}m{text}\x1b[0m"


def mode_chip(mode: str) -> str:
    return _colour(f"[{mode}]", COLOURS.get(mode, "0"))


class TerminalApprover(Approver):
    """Asks on the terminal; with ``interactive=False`` refuses everything it is asked
    (scripts never get more than the mode and the write-gate allow without asking).

    ``tty``: a terminal opened for reading and writing (``/dev/tty``) to ask on instead
    of stdin and stderr, for when those carry something else (``adjutant mcp serve``)."""

    def __init__(self, interactive: bool, tty: Any = None,
                 unanswered: str = "non-interactive: nobody was asked") -> None:
        self.interactive = interactive
        self.tty = tty
        self.out = tty or sys.stderr
        self.unanswered = unanswered  # why a step is refused when nobody can answer

    async def _ask(self, question: str) -> str:
        import anyio

        if not self.interactive:
            print(f"{question} -> denied (non-interactive)", file=self.out)
            return ""

        def read() -> str:
            if self.tty is not None:
                self.tty.write(question)
                self.tty.flush()
                return str(self.tty.readline()).strip().lower()
            try:
                return input(question).strip().lower()
            except EOFError:
                return ""
        return await anyio.to_thread.run_sync(read, abandon_on_cancel=True)

    async def approve_plan(self, packet: Any) -> Literal["execute", "step", "deny"]:
        print(f"\nThe plan has {len(packet.steps)} steps.", file=self.out)
        answer = await self._ask("[x] execute the plan, [s] step by step, [d] deny: ")
        return {"x": "execute", "s": "step"}.get(answer[:1], "deny")  # type: ignore[return-value]

    async def approve_step(self, packet: Any) -> StepDecision:
        _show_step(packet, self.out)
        if not self.interactive:
            await self._ask("[g] grant, [d] deny, [e] edit arguments: ")
            return StepDecision("deny", unanswered=self.unanswered)
        while True:
            answer = await self._ask("[g] grant, [d] deny, [e] edit arguments: ")
            if answer[:1] == "g":
                return StepDecision("grant")
            if answer[:1] != "e":
                return StepDecision("deny")
            edited = await self._ask("new arguments (JSON): ")
            try:
                args = json.loads(edited)
            except ValueError as exc:
                print(f"not JSON ({exc}); asked again", file=self.out)
                continue
            if isinstance(args, dict):
                return StepDecision("edit", args)
            print("arguments must be a JSON object; asked again", file=self.out)


async def _offer_files(copilot: Any, request: str, interactive: bool) -> list[str]:
    """Files the request names that the context does not hold yet: asked, never assumed."""
    import anyio

    files = copilot.mentioned_files(request, await copilot.bulletin())
    if not files or not interactive:
        return []

    what = "this file" if len(files) == 1 else f"these {len(files)} files"

    def ask() -> str:
        try:
            return input(f"Include {what} in the context ({', '.join(files)})? [y/N] "
                         ).strip().lower()
        except EOFError:
            return ""
    answer = await anyio.to_thread.run_sync(ask, abandon_on_cancel=True)
    return files if answer[:1] == "y" else []


def _show_step(packet: Any, out: Any = None) -> None:
    out = out or sys.stderr
    print(f"\nstep {packet.index + 1}: {packet.tool} ({packet.level})", file=out)
    print(f"  args: {json.dumps(packet.args, ensure_ascii=False)}", file=out)
    if packet.intent:
        print(f"  why: {packet.intent}", file=out)
    for reason in packet.reasons:
        print(f"  note: {reason}", file=out)
    if packet.preview:
        print("  preview:", file=out)
        for line in packet.preview.splitlines()[:60]:
            print(f"    {line}", file=out)
    out.flush()


def configure_run(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("request", help="what you want done, in your own words")
    parser.add_argument("--non-interactive", action="store_true",
                        help="never ask: anything that needs approval is denied")
    parser.add_argument("--json", action="store_true",
                        help="print the outcome as JSON on stdout")


async def run(kernel: Any, args: argparse.Namespace) -> int:
    """One request: context, the model's answer streamed, the plan with previews, and
    per-step consent as the mode requires."""
    import anyio

    from adjutant_hookspecs import to_builtins

    from .._operator import Copilot

    interactive = not args.non_interactive and sys.stdin.isatty()
    copilot = Copilot(kernel, approver=TerminalApprover(interactive))
    mode = await copilot.mode()
    print(f"{mode_chip(mode)} {kernel.profile.name} preset, "
          f"{kernel.profile.model.provider}:{kernel.profile.model.model}", file=sys.stderr)
    include = await _offer_files(copilot, args.request, interactive)
    progress = Progress()
    async with anyio.create_task_group() as tg:
        tg.start_soon(show_events, kernel.bus.subscribe(), progress)
        tg.start_soon(progress.run)
        outcome = await copilot.handle(args.request, include=include)
        progress.stop()
        await anyio.sleep(0.05)  # let the last events print
        tg.cancel_scope.cancel()
    print(file=sys.stderr)
    if args.json:
        print(json.dumps({"run_id": outcome.run_id, "status": outcome.status,
                          "text": outcome.text, "error": outcome.error,
                          "plan": to_builtins(outcome.plan) if outcome.plan else None,
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
        self.live = sys.stderr.isatty() and not os.environ.get("NO_COLOR")

    def start(self, label: str) -> None:
        import time

        self.label, self.since = label, time.monotonic()

    def stop(self) -> None:
        if self.shown:
            print("\r\x1b[K", end="", file=sys.stderr, flush=True)
        self.label, self.shown = None, False

    async def run(self) -> None:
        import time

        import anyio

        frame = 0
        while True:
            await anyio.sleep(0.2)
            if self.live and self.label and time.monotonic() - self.since > 0.6:
                frame = (frame + 1) % len(self.FRAMES)
                print(f"\r\x1b[K{self.FRAMES[frame]} {self.label} "
                      f"({time.monotonic() - self.since:.0f} s)", end="", file=sys.stderr,
                      flush=True)
                self.shown = True


async def show_events(subscription: Any, progress: Progress | None = None) -> None:
    """What the user watches while the operator works: the context used, the model's
    tokens as they stream, the plan with each step's preview (all on stderr)."""
    from adjutant_hookspecs import (
        ActivitySnapshot,
        TextMessageContent,
        TextMessageEnd,
        TextMessageStart,
        ToolCallResult,
        ToolCallStart,
    )

    progress = progress or Progress()
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
            print(_colour(event.delta, "2", sys.stderr), end="", file=sys.stderr, flush=True)
        elif isinstance(event, ActivitySnapshot) and event.activity_type == "context":
            fields = ", ".join(k for k, v in event.content.items() if v)
            print(f"context: {fields} (cwd {event.content.get('cwd')})", file=sys.stderr)
            print("model: ", end="", file=sys.stderr, flush=True)
        elif isinstance(event, ActivitySnapshot) and event.activity_type == "plan":
            print(file=sys.stderr)
            for step in event.content.get("steps", []):
                print(f"plan step {step['index'] + 1}: {step['tool']} "
                      f"{json.dumps(step['args'], ensure_ascii=False)}", file=sys.stderr)
                for line in (step.get("preview") or "").splitlines()[:20]:
                    print(f"    {line}", file=sys.stderr)
        elif isinstance(event, ActivitySnapshot) and event.activity_type == "warning":
            print(f"\nwarning: {event.content.get('text')}", file=sys.stderr)


def configure_mode(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("mode", nargs="?", choices=MODES, help="switch to this mode")
    parser.add_argument("--json", action="store_true")


async def mode(kernel: Any, args: argparse.Namespace) -> int:
    from .._operator import Copilot

    copilot = Copilot(kernel)
    if args.mode is not None and not await copilot.set_mode(args.mode, channel="user"):
        print(f"could not switch to {args.mode} (see `adjutant doctor`)", file=sys.stderr)
        return 1
    current = await copilot.mode()
    print(json.dumps({"mode": current}) if args.json else mode_chip(current))
    return 0


def configure_grant(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("grant", nargs="?", help="write, network:<tool> (or network:<prefix>.* "
                        "for a family, e.g. network:mcp.time.*), cage:/abs/dir")
    parser.add_argument("--minutes", type=float, default=60.0,
                        help="how long it lasts (default 60)")
    parser.add_argument("--revoke", action="store_true", help="take the grant back")
    parser.add_argument("--json", action="store_true")


async def grant(kernel: Any, args: argparse.Namespace) -> int:
    """Time-boxed grants from the user: list, give, revoke (persisted, logged)."""
    from .._operator import Copilot

    copilot = Copilot(kernel)
    await copilot.mode()
    if args.grant is not None:
        if args.revoke:
            await copilot.revoke(args.grant)
        else:
            try:
                await copilot.grant(args.grant, seconds=args.minutes * 60, channel="user")
            except ValueError as exc:
                print(str(exc), file=sys.stderr)
                return 2
    live = copilot.grants
    if args.json:
        print(json.dumps({"grants": live}))
    else:
        print("\n".join(live) if live else "no grants in force")
    return 0


def configure_json(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true")


async def status(kernel: Any, args: argparse.Namespace) -> int:
    import resource

    from .._operator import Copilot

    copilot = Copilot(kernel)
    await copilot.mode()  # loads what was persisted
    state = copilot.state()
    profile = kernel.profile
    chips = ["project-cage" if "{workspace}" in profile.path_cages else "custom-cages",
             "no-sudo" if "guard" in kernel.policies or any(
                 "guard" in name for name in kernel.policies) else "no-guard-policy"]
    if state["mode"] in ("off", "listen-only", "propose-only"):
        chips.append("read-only")
    info = {**state, "provider": profile.model.provider, "model": profile.model.model,
            "policies": chips, "tools": len(kernel.tools),
            "memory_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
            "last_tasks": await _last_tasks(copilot) if copilot.log.available else []}
    if args.json:
        print(json.dumps(info, default=str))
        return 0
    print(f"{mode_chip(info['mode'])} preset {info['preset']} "
          f"({info['provider']}:{info['model']})")
    print(f"cwd {info['cwd']}; {info['tools']} tools; policies: {', '.join(chips)}; "
          f"memory {info['memory_mb']} MB")
    for task in info["last_tasks"]:
        print(f"  {task['outcome']:<10} {task['seconds']:>6.1f} s  {task['request'][:60]}")
    return 0


async def _last_tasks(copilot: Any, count: int = 5) -> list[dict[str, Any]]:
    """The last requests from the action log: what was asked, how it ended, how long
    it took (first to last record of the run)."""
    runs: dict[str, dict[str, Any]] = {}
    for record in await copilot.log.records():
        run = record.get("run_id")
        if not run:
            continue
        if record["kind"] == "prompt":
            runs[run] = {"run_id": run, "request": record.get("text", ""),
                         "start": record["time"], "end": record["time"], "outcome": "?"}
        elif run in runs:
            runs[run]["end"] = record["time"]
            if record["kind"] == "outcome":  # how the run ended, as the operator said
                runs[run]["outcome"] = record.get("status", "?")
    tasks = list(runs.values())[-count:]
    return [{"run_id": t["run_id"], "request": t["request"], "outcome": t["outcome"],
             "seconds": round(t["end"] - t["start"], 2)} for t in tasks]


def configure_tools(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", nargs="?", choices=["list", "show"], default="list")
    parser.add_argument("name", nargs="?", help="the tool to show")
    parser.add_argument("--json", action="store_true")


async def tools(kernel: Any, args: argparse.Namespace) -> int:
    """With the kernel started: tools mounted at run time (an MCP server's) are listed."""
    from adjutant_hookspecs import to_builtins

    if args.action == "show":
        if args.name not in kernel.tools:
            print(f"no tool named {args.name!r}; `adjutant tools` lists them", file=sys.stderr)
            return 1
        declaration = to_builtins(kernel.tools[args.name].declaration)
        print(json.dumps(declaration, indent=None if args.json else 2))
        return 0
    rows = [{"name": n, "level": t.declaration.safety.level, "plugin": kernel.tools.owner(n),
             "description": t.declaration.description} for n, t in kernel.tools.items()]
    if args.json:
        print(json.dumps(rows))
        return 0
    width = max((len(row["name"]) for row in rows), default=0)
    for row in rows:
        print(f"{row['name']:<{width}}  {row['level']:<12} {row['description'][:70]}")
    return 0


def configure_presets(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", nargs="?", choices=["list", "use"], default="list")
    parser.add_argument("name", nargs="?", help="the preset to use")
    parser.add_argument("--json", action="store_true")


async def presets(kernel: Any, args: argparse.Namespace) -> int:
    from .._operator import Copilot
    from .._settings import load_profile

    names = _preset_names(os.path.join(kernel.home, "profiles"))
    if args.action == "use":
        if not args.name:
            print("name the preset to use", file=sys.stderr)
            return 2
        profile = load_profile(kernel.home, args.name)
        await Copilot(kernel).use_preset(profile)
        print(f"using preset {profile.name} ({profile.model.provider}:{profile.model.model})")
        return 0
    if args.json:
        print(json.dumps({"presets": names, "active": kernel.profile.name}))
        return 0
    for name in names:
        print(("* " if name == kernel.profile.name else "  ") + name)
    return 0


def _preset_names(folder: str) -> list[str]:
    found = os.listdir(folder) if os.path.isdir(folder) else []
    return sorted({"default"} | {f.removesuffix(".json") for f in found if f.endswith(".json")})


#: Quick actions of the chat palette: a slash command and the request it sends.
QUICK_ACTIONS = {
    "/summarize": "Summarize the current folder: what is here and what it is for.",
    "/explain": "Explain the last error in my recent shell commands and how to fix it.",
    "/commit-msg": "Draft a commit message for the changes in this repository.",
}
CHAT_HELP = """commands: /summarize, /explain, /commit-msg (quick actions); /plan (show the
last plan); /mode [MODE]; /status; /help; /quit. Ctrl-C stops the model or the running
step and keeps the session; Ctrl-D or /quit leaves."""


def configure_chat(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--non-interactive", action="store_true",
                        help="never ask for approval: anything that needs it is denied")


async def chat(kernel: Any, args: argparse.Namespace) -> int:
    """A session: requests one after another, with history, quick actions and
    interrupts (Ctrl-C stops generation or the step, not the session)."""
    import signal

    import anyio

    from .._operator import Copilot

    _history()
    copilot = Copilot(kernel, approver=TerminalApprover(not args.non_interactive))
    last: dict[str, Any] = {}
    busy = anyio.Event()
    busy.set()  # set: idle

    async def interrupts() -> None:
        with anyio.open_signal_receiver(signal.SIGINT) as signals:
            async for _ in signals:
                if not busy.is_set():
                    copilot.cancel()
                    print("\n(interrupted; the session goes on)", file=sys.stderr)
                else:
                    print("\n(Ctrl-D or /quit to leave)", file=sys.stderr)

    async def ask(prompt: str) -> str | None:
        def read() -> str | None:
            try:
                return input(prompt)
            except EOFError:
                return None
        return await anyio.to_thread.run_sync(read, abandon_on_cancel=True)

    print(f"{mode_chip(await copilot.mode())} Adjutant chat; /help for commands",
          file=sys.stderr)
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
                if wanted[0] and not await copilot.set_mode(wanted[0], channel="user"):
                    print(f"unknown or refused mode {wanted[0]!r}; modes: {', '.join(MODES)}")
                print(mode_chip(await copilot.mode()))
                continue
            if line == "/status":
                print(json.dumps(copilot.state(), default=str))
                continue
            request = QUICK_ACTIONS.get(line, line)
            if request.startswith("/"):
                print(f"unknown command {line!r}; /help lists them")
                continue
            include = await _offer_files(copilot, request, not args.non_interactive)
            busy = anyio.Event()
            try:
                outcome = await copilot.handle(request, include=include)
            finally:
                busy.set()
                progress.stop()
            from adjutant_hookspecs import to_builtins

            last["plan"] = to_builtins(outcome.plan) if outcome.plan else last.get("plan")
            _print_outcome(outcome)
        tg.cancel_scope.cancel()
    return 0


def _print_outcome(outcome: Any) -> None:
    if outcome.text:
        print(outcome.text)
    if outcome.plan is not None and outcome.status == "proposed":
        for index, step in enumerate(outcome.plan.steps, 1):
            print(f"  {index}. {step.tool} {json.dumps(step.args, ensure_ascii=False)}")
    for result in outcome.results:
        print(f"{result.tool}: {result.status}")
        if result.stdout:
            print(result.stdout.rstrip())
    if outcome.error:
        print(f"{outcome.status}: {outcome.error}", file=sys.stderr)


def _history() -> None:
    """Line editing and a persistent history where readline exists."""
    try:
        import atexit
        import readline
    except ImportError:
        return
    from .._paths import data_home

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


async def replay(kernel: Any, args: argparse.Namespace) -> int:
    """Run a logged step again as a new run, through the whole pipeline."""
    from .._operator import Copilot

    copilot = Copilot(kernel, approver=TerminalApprover(sys.stdin.isatty()))
    try:
        outcome = await copilot.replay(args.run_id, args.step, dry_run=args.dry_run)
    except LookupError as exc:
        print(str(exc), file=sys.stderr)
        return 1
    if args.json:
        from adjutant_hookspecs import to_builtins

        print(json.dumps({"run_id": outcome.run_id, "status": outcome.status,
                          "text": outcome.text, "error": outcome.error,
                          "results": [to_builtins(r) for r in outcome.results]}))
    else:
        _print_outcome(outcome)
    return EXIT.get(outcome.status, 1)


def configure_bundle(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--run", dest="run_id", help="only this run (default: all)")
    parser.add_argument("-o", "--output", default="adjutant-bundle.tar.gz",
                        help="where to write the bundle (default: %(default)s)")


async def bundle(kernel: Any, args: argparse.Namespace) -> int:
    """A bug bundle: log slice, settings, versions, artifacts; secrets redacted."""
    from .._operator import Copilot

    path = await Copilot(kernel).export_bundle(args.output, run_id=args.run_id)
    print(path)
    return 0


async def context(kernel: Any, args: argparse.Namespace) -> int:
    """The context bulletin a request would use now, as the operator will show it."""
    from adjutant_hookspecs import to_builtins

    from .._operator import Copilot

    bulletin = to_builtins(await Copilot(kernel).bulletin())
    if args.json:
        print(json.dumps(bulletin))
        return 0
    enabled = kernel.profile.context_providers
    for name, provider in kernel.context_providers.items():
        on = enabled.get(name, getattr(provider, "default_enabled", True))
        print(f"source {name}: {'on' if on else 'off (switch on in the profile)'}")
    for key, value in bulletin.items():
        if value:
            print(f"{key}: {json.dumps(value, ensure_ascii=False)[:300]}")
    return 0
