"""``adjutant record`` and ``adjutant copilot-agent ...``.

How the commands meet across processes: everything lives in the data directory. A
recording is a session folder (`_sessions`); the agent runs in the process that
started it (``copilot-agent start`` in the foreground, or ``record --agent`` beside
the recorder) and claims the session with ``agent.json``; ``stop`` and ``dismiss``
from another process leave a request in the session's ``requests/`` that the agent
reads within a fraction of a second; ``state``, ``sessions``, ``show`` and
``export`` read the state the agent saves after every cycle (the key-value store).
Everything shown on a terminal passes `printable`: what was said is untrusted text.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from adjutant_hookspecs import Kernel

    from ._sessions import Session
    from ._state import CopilotState

__all__ = ["agent", "configure_agent", "configure_record", "record"]


def _say(text: str, *, err: bool = False) -> None:
    from adjutant.safety.terminal import printable

    print(printable(text), file=sys.stderr if err else sys.stdout, flush=True)


async def _poll(done: Any, seconds: float) -> bool:
    """Look every 0.2 s until ``done()`` (another process's doing), at most ``seconds``:
    whether it was."""
    import anyio

    for _ in range(int(seconds / 0.2) + 1):
        if done():
            return True
        await anyio.sleep(0.2)
    return False


def _fail(exc: Exception) -> int:
    _say(f"error: {exc}", err=True)
    return 1


# -- adjutant record ------------------------------------------------------------------------


def configure_record(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--from", dest="source", metavar="FILE",
                        help="record a sound file, or '-' for a pipe (WAV or raw 16 kHz "
                             "mono 16-bit PCM), instead of the microphone")
    parser.add_argument("--system", action="store_true",
                        help="record the system's output (PulseAudio/PipeWire monitor); "
                             "with --mic, mixed with the microphone")
    parser.add_argument("--mic", action="store_true",
                        help="the microphone (the default when no other source is named)")
    parser.add_argument("--speed", type=float, default=1.0,
                        help="pace of --from: 1 real time (default), 0 as fast as it reads")
    parser.add_argument("--time-factor", type=float, default=1.0, help=argparse.SUPPRESS)
    parser.add_argument("--agent", action="store_true",
                        help="run the copilot agent beside the recording (also when the "
                             "profile's plugins.copilot-agent.enabled is true)")
    parser.add_argument("--stop", action="store_true",
                        help="stop the recording in progress (in whichever process)")
    parser.add_argument("--wait", type=float, default=30.0, metavar="SECONDS",
                        help="with --stop: how long to wait for the recorder to stop "
                             "(default: %(default)g)")
    parser.add_argument("--list", action="store_true", help="list the recordings")


async def record(kernel: Kernel, args: argparse.Namespace) -> int:
    import anyio

    from adjutant_hookspecs import CopilotUnsupported

    from ._agent import AgentError, CopilotAgent
    from ._clock import Clock, FastClock
    from ._recorder import Recorder
    from ._sessions import active_recording, list_sessions, session_dir
    from ._settings import agent_settings
    from ._sources import RecorderError, from_file, from_stream, microphone, mix, system_output

    home = kernel.home
    if args.list:
        for s in list_sessions(home):
            _say(f"{s.id}  {s.status:11}  {s.seconds:8.1f}s  {s.source}")
        return 0
    if args.stop:
        session = active_recording(home)
        if session is None:
            return _fail(RuntimeError("no recording in progress"))
        (session_dir(home, session.id) / "stop").touch()
        if not await _poll(lambda: not any(s.id == session.id and s.status == "recording"
                                           for s in list_sessions(home)), args.wait):
            # the recorder has not answered (busy, suspended): say so, not "stopped"
            return _fail(RuntimeError(
                f"recording {session.id} has not stopped after {args.wait:g} s: its "
                f"recorder (process {session.pid}) has not read the request; it stops "
                f"when it next does, or end it with: kill {session.pid}"))
        _say(f"stopped {session.id}")
        return 0
    try:
        settings = agent_settings(kernel)
    except ValueError as exc:
        return _fail(exc)
    clock = FastClock(args.time_factor) if args.time_factor != 1.0 else Clock()
    try:
        if args.source == "-":
            blocks, name = from_stream(sys.stdin.buffer, speed=args.speed,
                                       sleep=clock.sleep), "pipe"
        elif args.source:
            from pathlib import Path

            blocks, name = from_file(Path(args.source), speed=args.speed,
                                     sleep=clock.sleep), f"file {args.source}"
        elif args.system and args.mic:
            from ._sources import monitor_source

            monitor_source()  # refuse before anything is recorded
            blocks, name = mix(microphone(), system_output()), "microphone + system"
        elif args.system:
            from ._sources import monitor_source

            monitor_source()
            blocks, name = system_output(), "system output"
        else:
            blocks, name = microphone(), "microphone"
        recorder = Recorder(home, name)
        first = await blocks.__anext__()  # a source that cannot open fails here, not later
    except RecorderError as exc:
        return _fail(exc)
    except StopAsyncIteration:
        return _fail(RecorderError("the source holds no audio"))

    async def rest() -> Any:
        yield first
        async for block in blocks:
            yield block

    session = recorder.open()
    _say(f"recording {session.id} ({name}) to {recorder.audio}", err=True)
    agent = None
    if args.agent or settings.enabled:
        try:  # claimed before the first block is written: it sees the whole recording
            agent = await CopilotAgent.prepare(kernel, session_id=session.id, clock=clock)
        except (AgentError, CopilotUnsupported, LookupError) as exc:
            _say(f"copilot agent: {exc}", err=True)

    async def recording() -> RecorderError | None:
        """The recording to its end. A source that dies mid-way (the sound server gone)
        ends it as a stop does: the file is whole, the agent runs its last cycle."""
        try:
            await recorder.record(rest())
        except RecorderError as exc:
            return exc
        return None

    if agent is not None:
        async with anyio.create_task_group() as tg:
            subscription = _subscribe(kernel)
            tg.start_soon(agent.run)
            tg.start_soon(_follow, subscription, agent)
            failed = await recording()
    else:
        failed = await recording()
    if failed is not None:
        _say(f"error: {failed}", err=True)
        _say(f"kept {session.seconds:.1f} s recorded up to then: {recorder.audio}", err=True)
        return 1
    _say(f"recorded {session.seconds:.1f} s: {recorder.audio}", err=True)
    return 0


def _subscribe(kernel: Kernel) -> Any:
    from ._events import CopilotError, CopilotStatus

    return kernel.bus.subscribe(types=(CopilotStatus, CopilotError))


async def _follow(subscription: Any, agent: Any) -> None:
    """Print the agent's status changes and errors until it finishes."""
    import anyio

    from ._events import CopilotError, CopilotStatus

    async with anyio.create_task_group() as tg:

        async def show() -> None:
            async for envelope in subscription:
                event = envelope.event
                if isinstance(event, CopilotStatus):
                    _say(f"copilot agent: {event.status}"
                         + (f" ({event.message})" if event.message else ""), err=True)
                elif isinstance(event, CopilotError):
                    _say(f"copilot agent: cycle {event.cycle} failed: {event.error}", err=True)

        tg.start_soon(show)
        await agent.finished.wait()
        tg.cancel_scope.cancel()


# -- adjutant copilot-agent -----------------------------------------------------------------


def configure_agent(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", required=True)
    start = sub.add_parser("start", help="run the agent on the recording in progress "
                           "(in the foreground, until the recording or `stop` ends it)")
    start.add_argument("--session", help="a recording by id (default: the one in progress)")
    stop = sub.add_parser("stop", help="stop the running agent and print its final state")
    stop.add_argument("--session")
    state = sub.add_parser("state", help="the current state (escaped; --json for data)")
    state.add_argument("--session")
    state.add_argument("--watch", action="store_true", help="follow it as it changes")
    state.add_argument("--json", action="store_true")
    dismiss = sub.add_parser("dismiss", help="dismiss suggested question N (1-based)")
    dismiss.add_argument("index", type=int)
    dismiss.add_argument("--session")
    act = sub.add_parser("act", help="turn action item N into a request to the operator "
                         "(planned, previewed and approved as any request)")
    act.add_argument("index", type=int)
    act.add_argument("--session")
    act.add_argument("--yes", action="store_true", help="do not ask before sending it")
    act.add_argument("--non-interactive", action="store_true")
    sub.add_parser("sessions", help="the recordings and their agents' states")
    show = sub.add_parser("show", help="a session's final state with its evidence")
    show.add_argument("session", nargs="?")
    export = sub.add_parser("export", help="a session's state as Markdown or JSON")
    export.add_argument("session", nargs="?")
    export.add_argument("--format", choices=("md", "json"), default="md")
    export.add_argument("-o", "--output", metavar="FILE")


def _session(kernel: Kernel, wanted: str | None) -> Session:
    from ._control import find_session

    return find_session(kernel, wanted)


async def _state(kernel: Kernel, session: Session) -> CopilotState:
    from ._control import load_state

    return await load_state(kernel, session.id)


async def agent(kernel: Kernel, args: argparse.Namespace) -> int:
    try:
        return await _agent(kernel, args)
    except (LookupError, ValueError, IndexError) as exc:
        return _fail(exc)


async def _agent(kernel: Kernel, args: argparse.Namespace) -> int:
    import anyio

    from ._agent import AgentError, CopilotAgent, request
    from ._sessions import active_agent, list_sessions
    from ._state import to_builtins
    from ._store import StateStore
    from ._view import markdown

    home, action = kernel.home, args.action
    if action == "start":
        try:
            subscription = _subscribe(kernel)
            async with CopilotAgent.running(kernel, session_id=args.session) as running:
                _say(f"copilot agent on {running.session.id} (stop: adjutant copilot-agent "
                     "stop, or Ctrl-C)", err=True)
                await _follow(subscription, running)
        except AgentError as exc:
            return _fail(exc)
        except Exception as exc:  # CopilotUnsupported, no store
            return _fail(exc)
        _say(markdown(running.state, title=f"Co-Pilot: {running.session.id}"))
        return 0
    if action == "sessions":
        store = StateStore(kernel)
        for s in list_sessions(home):
            state = await store.load(s.id)
            cycles = state.cycle_metadata.cycle_number if state else 0
            note = " agent running" if active_agent(home, s.id) else ""
            _say(f"{s.id}  {s.status:11}  {s.seconds:8.1f}s  cycles {cycles}{note}")
        return 0
    session = _session(kernel, getattr(args, "session", None))
    if action == "stop":
        if active_agent(home, session.id) is None:
            return _fail(AgentError(f"no copilot agent runs on {session.id}"))
        request(home, session.id, {"stop": True})
        from ._settings import agent_settings

        await _poll(lambda: active_agent(home, session.id) is None,
                    agent_settings(kernel).analysis_timeout + 15)
        _say(markdown(await _state(kernel, session), title=f"Co-Pilot: {session.id}"))
        return 0
    if action == "dismiss":
        from ._control import dismiss_question

        asked = await dismiss_question(kernel, session.id, args.index - 1)
        _say(f"dismissed: {asked.question}")
        return 0
    if action == "act":
        return await _act(kernel, session, args)
    state = await _state(kernel, session)
    if action == "state" and args.watch:
        shown = ""
        while True:
            text = markdown(state, title=f"Co-Pilot: {session.id}")
            if text != shown:
                _say(("\n" if shown else "") + text)
                shown = text
            live = next((s for s in list_sessions(home) if s.id == session.id), session)
            if live.status != "recording" and active_agent(home, session.id) is None:
                return 0
            await anyio.sleep(1.0)
            state = await _state(kernel, session)
    if (action == "state" and args.json) or (action == "export" and args.format == "json"):
        text = json.dumps({"session": session.id, "status": session.status,
                           "state": to_builtins(state)}, indent=2, ensure_ascii=True)
    else:
        text = markdown(state, title=f"Co-Pilot: {session.id}")
    if action == "export" and args.output:
        await anyio.Path(args.output).write_text(text + "\n", encoding="utf-8")
        _say(f"wrote {args.output}", err=True)
        return 0
    _say(text)
    return 0


async def _act(kernel: Kernel, session: Session, args: argparse.Namespace) -> int:
    """Action item N as an ordinary request: ``adjutant run`` plans it, shows the
    previews and asks for approval under the current mode. Nothing runs because it
    was said: the user picks the item, sees it, and approves every step."""
    from adjutant import Copilot

    from ._control import act_record, action_item

    item = await action_item(kernel, session.id, args.index - 1)
    record = act_record(session.id, args.index - 1, item)
    text = record.text
    interactive = not args.non_interactive and sys.stdin.isatty()
    _say(f"action item {args.index}: {text}")
    if interactive and not args.yes:
        import anyio

        answer = (await anyio.to_thread.run_sync(
            input, "send it to the operator as a request? [y/N] ")).strip().lower()
        if answer not in ("y", "yes"):
            _say("not sent")
            return 0
    copilot = Copilot(kernel)
    await copilot.log.record(record)
    run = kernel.commands["run"]
    parser = argparse.ArgumentParser(prog="adjutant run")
    if run.configure is not None:
        run.configure(parser)
    flags = ["--non-interactive"] * (not interactive)
    result = run.run(kernel, parser.parse_args([*flags, "--", text]))
    return int(await result if not isinstance(result, int) else result)
