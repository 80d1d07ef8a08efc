"""``adjutant transcribe FILE`` and ``adjutant listen``."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Awaitable
from typing import TYPE_CHECKING

from ._errors import HeardNothing, SttError
from ._settings import listen_settings

if TYPE_CHECKING:
    from adjutant_hookspecs import Kernel, SpeechRecognizer

__all__ = ["configure_listen", "configure_transcribe", "listen", "transcribe_command"]


def configure_transcribe(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="a recording (WAV, FLAC, MP3, OGG, ...)")
    parser.add_argument("--json", action="store_true",
                        help="print text, language, durations and segments as JSON")
    parser.add_argument("--language", default="en",
                        help="the spoken language (ISO code), or 'auto' to detect it")
    _engine_options(parser)


def _engine_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--engine", metavar="NAME",
                        help="the speech recognizer (default: the profile's plugins.stt.engine, "
                             "`whisper`, on this machine); a remote one asks before the "
                             "audio leaves the machine")
    parser.add_argument("--allow-remote", action="store_true",
                        help="consent in advance to sending the recording to the chosen "
                             "remote engine (for scripts: without a terminal, a remote "
                             "engine is refused unless this is given)")


def _fail(command: str, exc: SttError) -> int:
    from adjutant.safety.terminal import printable

    print(f"adjutant {command}: {printable(str(exc))}"
          + (f"\n  fix: {printable(exc.hint)}" if exc.hint else ""), file=sys.stderr)
    return 1


def transcribe_command(kernel: Kernel, args: argparse.Namespace) -> int | Awaitable[int]:
    """Print what is said in a recording. Exit 0; 1 when nothing could be heard, the
    file is no audio, or a remote engine was refused or failed (the reason on stderr);
    4 when a remote engine was chosen and the operator is off."""
    from adjutant.safety.terminal import printable

    from ._engines import WHISPER, pick
    from ._transcribe import transcribe

    try:
        recognizer = pick(kernel, args.engine)
    except SttError as exc:
        return _fail("transcribe", exc)
    if recognizer.name != WHISPER:
        return _transcribe_remote(kernel, args, recognizer)
    try:
        heard = transcribe(args.file,
                           language=None if args.language == "auto" else args.language)
    except SttError as exc:
        return _fail("transcribe", exc)
    if args.json:
        print(json.dumps(heard.to_json()))
    else:
        print(printable(heard.text))
    return 0


async def _transcribe_remote(kernel: Kernel, args: argparse.Namespace,
                             recognizer: SpeechRecognizer) -> int:
    """The file decoded and checked for speech here, then sent (after consent)."""
    import anyio

    from adjutant import Copilot
    from adjutant.safety.terminal import printable

    from ._consent import NotSent, consent
    from ._engines import has_speech, remote_transcript
    from ._transcribe import decode_file

    copilot = Copilot(kernel)
    model = listen_settings(kernel).remote_model or getattr(recognizer, "model", None)
    try:
        samples = await anyio.to_thread.run_sync(decode_file, args.file)
        if len(samples) < 1600 or not await anyio.to_thread.run_sync(has_speech, samples):
            raise HeardNothing(f"no speech in {len(samples) / 16_000:.1f} s of audio "
                               "(checked on this machine; nothing was sent)")
        await consent(kernel, copilot, recognizer, model, True if args.allow_remote else None)
        heard = await remote_transcript(
            copilot, recognizer, samples, model=model,
            language=None if args.language == "auto" else args.language)
    except NotSent as exc:
        _fail("transcribe", exc)
        return 4 if exc.off else 1
    except SttError as exc:
        return _fail("transcribe", exc)
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
                             "profile's plugins.stt.edit_first)")
    _engine_options(parser)


async def listen(kernel: Kernel, args: argparse.Namespace) -> int:
    """One spoken request, then exactly what ``adjutant run REQUEST`` does with it (the
    same command, so the same pipeline, approvals, output and exit codes). Exit 1
    when nothing was heard or there is no microphone; 0 in listen-only (logged)."""
    from adjutant import Copilot, TerminalApprover

    from ._engines import pick
    from ._listen import hear

    if args.audio is not None:  # a bad file is a usage error, before anything else
        from ._transcribe import decode_file

        try:
            decode_file(args.audio)
        except HeardNothing:
            pass
        except SttError as exc:
            return _fail("listen", exc)
    try:
        pick(kernel, args.engine)  # an unknown engine too
    except SttError as exc:
        return _fail("listen", exc)
    interactive = not args.non_interactive and sys.stdin.isatty()
    copilot = Copilot(kernel, approver=TerminalApprover(interactive))
    spoken = await hear(kernel, copilot, audio=args.audio,
                        edit=False if not interactive else args.edit, engine=args.engine,
                        consent=True if args.allow_remote else None if interactive else False)
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
