"""Push-to-talk in ``adjutant chat``: ``/talk`` (or Ctrl-T) asks a voice frontend (one
with ``hear``, e.g. adjutant-stt's) for one spoken request. The frontend records,
transcribes and shows the transcript; what it returns goes to the operator exactly as
a typed line does. ``""``: nothing to plan (heard nothing, the operator is off or
listen-only)."""

from __future__ import annotations

import sys
from typing import Any

__all__ = ["TALK", "bind_talk_key", "spoken_request", "voice_frontend"]

TALK = "/talk"


def voice_frontend(kernel: Any) -> Any:
    """The first registered frontend that can hear one request, or None."""
    return next((f for f in kernel.frontends.values() if callable(getattr(f, "hear", None))),
                None)


async def spoken_request(kernel: Any, copilot: Any) -> str:
    voice = voice_frontend(kernel)
    if voice is None:
        print("/talk needs a speech-to-text plugin: pip install adjutant-stt", file=sys.stderr)
        return ""
    return str(await voice.hear(kernel, copilot)).strip()


def bind_talk_key(kernel: Any) -> None:
    """Ctrl-T types ``/talk`` and Enter, where readline exists and a voice frontend is
    installed (the terminal cannot see a key held down: speak, then Enter or a pause)."""
    if voice_frontend(kernel) is None:
        return
    try:
        import readline
    except ImportError:
        return
    readline.parse_and_bind(r'"\C-t": "\C-a\C-k/talk\n"')
