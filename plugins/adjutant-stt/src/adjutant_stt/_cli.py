"""``adjutant transcribe FILE`` and ``adjutant listen``."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ._errors import HeardNothing, SttError

__all__ = ["configure_listen", "configure_transcribe", "listen", "transcribe_command"]


def configure_transcribe(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="a recording (WAV, FLAC, MP3, OGG, ...)")
    parser.add_argument("--json", action="store_true",
                        help="print text, language, durations and segments as JSON")
    parser.add_argument("--language", default="en",
                        help="the spoken language (ISO code), or 'auto' to detect it")


def transcribe_command(kernel: Any, args: argparse.Namespace) -> int:
    """Print what is said in a recording. Exit 0; 1 when nothing could be heard or the
    file is no audio (the reason on stderr)."""
    from adjutant.terminal import printable

    from ._transcribe import transcribe

    try:
        heard = transcribe(args.file,
                           language=None if args.language == "auto" else args.language)
    except SttError as exc:
        print(f"adjutant transcribe: {printable(str(exc))}"
              + (f"\n  fix: {exc.hint}" if exc.hint else ""), file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(heard.to_json()))
    else:
        print(printable(heard.text))
    return 0


def configure_listen(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--audio", metavar="FILE",
                        help="a recording fed in place of the microphone")
    parser.add_argument("--non-interactive", action="store_true",
                        help="never ask for approval: anything that needs it is denied")
    parser.add_argument("--json", action="store_true",
                        help="print the outcome as JSON on stdout (as `adjutant run --json`)")
    parser.add_argument("--edit", action=argparse.BooleanOptionalAction, default=None,
                        help="edit the transcript before it is sent (default: the "
                             "profile's listen.edit_first)")


async def listen(kernel: Any, args: argparse.Namespace) -> int:
    """One spoken request, then exactly what ``adjutant run REQUEST`` does with it (the
    same command, so the same pipeline, approvals, output and exit codes). Exit 1
    when nothing was heard or there is no microphone; 0 in listen-only (logged)."""
    from adjutant import Copilot, TerminalApprover

    from ._listen import hear

    if args.audio is not None:  # a bad file is a usage error, before anything else
        from ._transcribe import decode_file

        try:
            decode_file(args.audio)
        except HeardNothing:
            pass
        except SttError as exc:
            print(f"adjutant listen: {exc}", file=sys.stderr)
            return 1
    interactive = not args.non_interactive and sys.stdin.isatty()
    copilot = Copilot(kernel, approver=TerminalApprover(interactive))
    spoken = await hear(kernel, copilot, audio=args.audio,
                        edit=False if not interactive else args.edit)
    if spoken.status != "request":
        if args.json:
            print(json.dumps({"status": spoken.status, "transcript": spoken.text}))
        return {"context": 0, "off": 4}.get(spoken.status, 1)
    request = spoken.text
    run = kernel.commands["run"]
    parser = argparse.ArgumentParser(prog="adjutant run")
    if run.configure is not None:
        run.configure(parser)
    flags = ["--non-interactive"] * (not interactive) + ["--json"] * bool(args.json)
    result = run.run(kernel, parser.parse_args([*flags, "--", request]))
    return int(await result if not isinstance(result, int) else result)
