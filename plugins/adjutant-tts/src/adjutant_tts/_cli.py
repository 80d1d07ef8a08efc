"""``adjutant speak "text" [-o out.wav]``: say something, or write it to a file."""

from __future__ import annotations

import argparse
import sys
from typing import Any

__all__ = ["configure_speak", "speak"]


def configure_speak(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("text", nargs="?", help="what to say ('-': read standard input)")
    parser.add_argument("-o", "--output", metavar="FILE",
                        help="write a WAV file instead of playing (any mode may)")
    parser.add_argument("--engine", help="a speech engine by name (default: the profile's "
                        "speech.engine, 'auto': the embedded voice)")
    parser.add_argument("--voice", help="the engine's voice")
    parser.add_argument("--speed", type=float, help="1.0 is the voice's own pace")
    parser.add_argument("--engines", action="store_true", help="list the speech engines")
    parser.add_argument("--voices", action="store_true",
                        help="list the voices of the engine (no download is started)")


async def speak(kernel: Any, args: argparse.Namespace) -> int:
    from adjutant_hookspecs import SpeechError

    from ._output import no_device_reason
    from ._service import speaker_for
    from ._settings import speech_settings
    from ._speaker import SILENT_MODES, pick_engine

    if args.engines:
        for name, engine in kernel.speech_engines.items():
            ready = getattr(engine, "installed", lambda: True)()
            print(f"{name:12} {'ready' if ready else 'not installed':14} "
                  f"{getattr(engine, 'description', '')}")
        return 0
    try:
        engine = pick_engine(kernel.speech_engines,
                             args.engine or speech_settings(kernel).engine)
        if args.voices:
            for voice in await engine.voices():
                print(f"{voice.id:24} {voice.name}")
            return 0
    except SpeechError as exc:
        print(f"adjutant speak: error: {exc}", file=sys.stderr)
        return 1
    text = sys.stdin.read() if args.text == "-" else args.text
    if not text or not text.strip():
        print("adjutant speak: error: nothing to say (give the text, or '-' for standard "
              "input)", file=sys.stderr)
        return 2
    if args.speed is not None and not 0.25 <= args.speed <= 4.0:
        print("adjutant speak: error: --speed must be within 0.25..4.0", file=sys.stderr)
        return 2
    speaker = speaker_for(kernel)
    mode = await speaker.mode()
    if args.output is None and mode in SILENT_MODES:
        print(f"adjutant speak: the operator is {mode}: nothing speaks (-o FILE writes a file; "
              "`adjutant mode propose-only` switches it on)", file=sys.stderr)
        return 1
    utterance = await speaker.say(text, path=args.output, engine=engine.name,
                                  voice=args.voice, speed=args.speed, overlap="queue")
    assert utterance is not None
    if args.output is None and sys.stdin.isatty() and not no_device_reason(kernel.env):
        print("speaking; Space or Esc stops", file=sys.stderr, flush=True)
        await _until_done_or_key(utterance, speaker)
    await utterance.wait()
    if utterance.reason == "error":
        print(f"adjutant speak: error: {utterance.error}", file=sys.stderr)
        return 1
    if utterance.output == "file":
        seconds = utterance.synthesized_ms / 1000
        if args.output is None:
            why = no_device_reason(kernel.env) or "no audio output device"
            print(f"adjutant speak: {why}: wrote {seconds:.1f} s of audio to "
                  f"{utterance.path} instead of playing it", file=sys.stderr)
        else:
            print(f"wrote {seconds:.1f} s of audio to {utterance.path}", file=sys.stderr)
    if utterance.reason != "finished":
        print(f"adjutant speak: {utterance.reason} after {utterance.played_ms / 1000:.1f} s",
              file=sys.stderr)
        return 130
    return 0


#: Keys that stop speaking in the terminal.
STOP_KEYS = (b" ", b"\x1b")


async def _until_done_or_key(utterance: Any, speaker: Any) -> None:
    """Wait for the utterance; Space or Esc on the terminal stops it (the terminal is
    put in cbreak mode meanwhile and restored after, whatever happens)."""
    import threading

    import anyio

    done = threading.Event()

    def read_keys() -> bool:
        import os
        import select
        import termios
        import tty

        fd = sys.stdin.fileno()
        saved = termios.tcgetattr(fd)
        try:
            tty.setcbreak(fd)
            while not done.is_set():
                ready, _, _ = select.select([fd], [], [], 0.05)
                if ready and os.read(fd, 1) in STOP_KEYS:
                    return True
            return False
        finally:
            termios.tcsetattr(fd, termios.TCSADRAIN, saved)

    async with anyio.create_task_group() as tg:
        async def watch() -> None:
            if await anyio.to_thread.run_sync(read_keys):
                speaker.stop()
        tg.start_soon(watch)
        await utterance.wait()
        done.set()
