"""Text to the user's clipboard, as terminal frontends need it ("send transcript to
clipboard"): the desktop's clipboard program where there is one (``wl-copy`` under
Wayland, ``xclip`` or ``xsel`` under X11, ``pbcopy`` on macOS), else the terminal's own
clipboard through OSC 52, which works over SSH and in most terminals (kitty, foot,
WezTerm, Alacritty, iTerm2, tmux with ``set-clipboard on``; xterm when allowed)."""

from __future__ import annotations

import base64
import os
import shutil
import subprocess
import sys
from typing import Any

__all__ = ["OSC52_LIMIT", "ClipboardError", "copy_text"]

#: Terminals cap an OSC 52 sequence (xterm: about 100 kB); longer text is refused
#: rather than cut.
OSC52_LIMIT = 74_000


class ClipboardError(Exception):
    """Nothing was copied; the message says why and what would work."""


def _programs(env: Any) -> list[list[str]]:
    found = []
    if env.get("WAYLAND_DISPLAY"):
        found.append(["wl-copy"])
    if env.get("DISPLAY"):
        found += [["xclip", "-selection", "clipboard"], ["xsel", "--clipboard", "--input"]]
    if sys.platform == "darwin":
        found.append(["pbcopy"])
    return [[where, *argv[1:]] for argv in found
            if (where := shutil.which(argv[0], path=env.get("PATH")))]


def copy_text(text: str, *, terminal: Any = None, env: Any = None) -> str:
    """Put ``text`` on the clipboard; returns where it went, for the user.

    :param terminal: the stream to send OSC 52 to when no program can (default
        ``sys.stdout``; a `SafeStream`'s raw stream is used, as the sequence is ours)."""
    env = os.environ if env is None else env
    for argv in _programs(env):
        try:
            subprocess.run(argv, input=text.encode(), check=True, timeout=5,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        except (OSError, subprocess.SubprocessError):
            continue  # a clipboard program without its display: try the next way
        return f"the clipboard ({os.path.basename(argv[0])})"
    stream = getattr(terminal or sys.stdout, "raw", terminal or sys.stdout)
    try:
        on_terminal = stream.isatty()
    except (AttributeError, ValueError, OSError):
        on_terminal = False
    if not on_terminal:
        raise ClipboardError("no clipboard here: no wl-copy, xclip, xsel or pbcopy with a "
                             "display, and no terminal to send it to")
    encoded = base64.b64encode(text.encode()).decode("ascii")
    if len(encoded) > OSC52_LIMIT:
        raise ClipboardError(f"too long for the terminal's clipboard ({len(text)} "
                             "characters); install wl-copy or xclip")
    stream.write(f"\x1b]52;c;{encoded}\x07")
    stream.flush()
    return "the terminal's clipboard (OSC 52)"
