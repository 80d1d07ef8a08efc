"""Voice in ``adjutant chat``, through frontends found by the Protocol they meet
(`adjutant_hookspecs.VoiceFrontend`, `~adjutant_hookspecs.SpeechFrontend`), so core
imports no speech plugin:

* push-to-talk: ``/talk`` (or Ctrl-T) asks a voice frontend (adjutant-stt's) for one
  spoken request. It records, transcribes and shows the
  transcript; what it returns goes to the operator exactly as a typed line does (``""``:
  nothing to plan: heard nothing, the operator is off or listen-only);
* speech out: a speech frontend (adjutant-tts's) lets
  Space or Esc at the prompt, Ctrl-C there, or ``/hush`` stop what is being said, and
  ``/copy`` put what was said on the clipboard.
"""

from __future__ import annotations

import contextlib
import os
import select
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from adjutant_hookspecs import SpeechFrontend, VoiceFrontend

if TYPE_CHECKING:
    from adjutant_hookspecs import Kernel

    from ..operator import Copilot

__all__ = ["COPY", "HUSH", "TALK", "Key", "bind_talk_key", "caught_up", "copy_said",
           "first_key", "hush",
           "speaking", "speech_frontend", "spoken_request", "voice_frontend"]

TALK = "/talk"
HUSH = "/hush"
COPY = "/copy"
#: After a lone Esc, how long to wait for the rest of a sequence (an arrow key's).
ESCAPE_WAIT_S = 0.05


def voice_frontend(kernel: Kernel) -> VoiceFrontend | None:
    """The first registered frontend that can hear one request, or None."""
    return next((f for f in kernel.frontends.values() if isinstance(f, VoiceFrontend)), None)


def speech_frontend(kernel: Kernel) -> SpeechFrontend | None:
    """The first registered frontend that controls speech out, or None."""
    return next((f for f in kernel.frontends.values() if isinstance(f, SpeechFrontend)),
                None)


async def spoken_request(kernel: Kernel, copilot: Copilot) -> str:
    voice = voice_frontend(kernel)
    if voice is None:
        print("/talk needs a speech-to-text plugin: pip install adjutant-stt", file=sys.stderr)
        return ""
    return str(await voice.hear(kernel, copilot)).strip()


def bind_talk_key(kernel: Kernel) -> None:
    """Ctrl-T types ``/talk`` and Enter, where readline exists and a voice frontend is
    installed (the terminal cannot see a key held down: speak, then Enter or a pause)."""
    if voice_frontend(kernel) is None:
        return
    try:
        import readline
    except ImportError:
        return
    readline.parse_and_bind(r'"\C-t": "\C-a\C-k/talk\n"')


async def caught_up(kernel: Kernel) -> None:
    """Wait until the speech frontend has queued what it will say of the answers so
    far (auto-speech follows the bus a moment behind the answer)."""
    speech = speech_frontend(kernel)
    if speech is not None:
        await speech.caught_up(kernel)


def speaking(kernel: Kernel) -> bool:
    speech = speech_frontend(kernel)
    return speech is not None and bool(speech.speaking(kernel))


def hush(kernel: Kernel) -> bool:
    """Stop what is being said; True when something was."""
    speech = speech_frontend(kernel)
    return speech is not None and bool(speech.hush(kernel))


def copy_said(kernel: Kernel, fallback: str) -> None:
    """``/copy``: what was said aloud (else ``fallback``, the last answer) to the
    clipboard; says where it went or why it could not."""
    from ..clipboard import ClipboardError, copy_text

    speech = speech_frontend(kernel)
    text = (speech.said(kernel) if speech is not None else "") or fallback
    if not text:
        print("nothing to copy yet", file=sys.stderr)
        return
    try:
        where = copy_text(text)
    except ClipboardError as exc:
        print(f"not copied: {exc}", file=sys.stderr)
        return
    print(f"copied {len(text)} characters to {where}", file=sys.stderr)


@dataclass(frozen=True)
class Key:
    """What `first_key` saw: ``hush`` (Space or a lone Esc), ``eof`` (Ctrl-D), else
    ``text`` to begin the line with (``""``: speech ended, Enter, or a key readline
    must see itself, such as an arrow, which is then pressed again)."""

    text: str = ""
    hush: bool = False
    eof: bool = False


def first_key(prompt: str, still: Callable[[], bool]) -> Key:
    """While speech plays at chat's prompt: show the prompt and read the first key
    in cbreak mode, as `adjutant speak` does. readline cannot do this itself: Python
    drives it in callback mode, where a lone Esc waits for the next key forever.
    Blocking; returns when a key is pressed or ``still()`` turns false."""
    import termios
    import tty

    fd = sys.stdin.fileno()
    saved = termios.tcgetattr(fd)
    out = getattr(sys.stdout, "raw", sys.stdout)
    try:
        # before the prompt shows, and TCSANOW: the default (TCSAFLUSH) would throw
        # away a key pressed as soon as the prompt appeared
        tty.setcbreak(fd, termios.TCSANOW)
        out.write(prompt)
        out.flush()
        while still():
            ready, _, _ = select.select([fd], [], [], 0.1)
            if ready:
                return _key(fd)
        return Key()
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)
        out.write("\r\x1b[K")  # input() prints the prompt again, with the key typed
        out.flush()


def _key(fd: int) -> Key:
    first = os.read(fd, 1)
    if first == b" ":
        return Key(hush=True)
    if first == b"\x1b":
        ready, _, _ = select.select([fd], [], [], ESCAPE_WAIT_S)
        if not ready:
            return Key(hush=True)
        with contextlib.suppress(OSError):  # the rest of an arrow key's sequence
            os.read(fd, 16)
        return Key()
    if first == b"\x04":
        return Key(eof=True)
    if first[0] < 0x20 or first == b"\x7f":
        return Key()
    more = 1 if first[0] >= 0xC0 else 0  # the rest of a UTF-8 character
    more += first[0] >= 0xE0
    more += first[0] >= 0xF0
    data = first + (os.read(fd, more) if more else b"")
    return Key(text=data.decode("utf-8", "replace"))
