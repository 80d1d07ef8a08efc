"""``focus`` (the active window's title, X11) and ``clipboard`` (opt-in)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from typing import Any

from ._common import Source
from ._redact import redact_text

__all__ = ["MAX_CLIPBOARD", "ClipboardProvider", "FocusProvider", "parse_active_window",
           "parse_window_name"]

#: The clipboard is cut to this many characters.
MAX_CLIPBOARD = 2000
_WINDOW_ID = re.compile(r"window id # (0x[0-9a-fA-F]+)")
_PROPERTY = re.compile(r'^(_NET_WM_NAME|WM_NAME)\([A-Z0-9_]+\) = "(.*)"\s*$')


def _run(argv: Sequence[str], timeout: float) -> str | None:
    """stdout of ``argv`` when it exits 0 within ``timeout`` seconds, else None."""
    try:
        proc = subprocess.run(list(argv), capture_output=True, timeout=timeout, check=False,
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return None
    if proc.returncode != 0:
        return None
    return proc.stdout.decode("utf-8", errors="replace")


async def _run_async(argv: Sequence[str], seconds: float) -> str | None:
    """`_run` in a worker thread, so a slow X server never blocks the event loop."""
    import anyio.to_thread

    return await anyio.to_thread.run_sync(_run, argv, seconds)


def parse_active_window(text: str) -> str | None:
    """The window id in ``xprop -root _NET_ACTIVE_WINDOW`` output (None for no window)."""
    match = _WINDOW_ID.search(text)
    if match is None or int(match.group(1), 16) == 0:
        return None
    return match.group(1)


def parse_window_name(text: str) -> str | None:
    """The title in ``xprop -id ID _NET_WM_NAME WM_NAME`` output, _NET_WM_NAME first."""
    names: dict[str, str] = {}
    for line in text.splitlines():
        if match := _PROPERTY.match(line):
            names[match.group(1)] = re.sub(r"\\(.)", r"\1", match.group(2))
    return names.get("_NET_WM_NAME") or names.get("WM_NAME") or None


class FocusProvider(Source):
    """``{"focus": "<title of the active window>"}`` from X11 (``xprop``), else nothing."""

    name = "focus"

    def __init__(self, timeout: float = 1.0) -> None:
        self.timeout = timeout

    def available(self) -> str | None:
        """None when the focus can be read here, else why not."""
        if not os.environ.get("DISPLAY"):
            return "no X11 display"
        if shutil.which("xprop") is None:
            return "xprop not installed"
        return None

    async def collect(self, cwd: str) -> Mapping[str, Any]:
        if self.available() is not None:
            return {}
        xprop = shutil.which("xprop") or "xprop"
        root = await _run_async([xprop, "-root", "_NET_ACTIVE_WINDOW"], self.timeout)
        window = parse_active_window(root or "")
        if window is None:
            return {}
        named = await _run_async([xprop, "-id", window, "_NET_WM_NAME", "WM_NAME"],
                                 self.timeout)
        title = parse_window_name(named or "")
        return {"focus": title[:500]} if title else {}


class ClipboardProvider(Source):
    """``{"clipboard": text}`` (at most 2000 characters, redacted) from ``wl-paste``,
    ``xclip`` or ``xsel``. Off unless the profile switches it on: a clipboard often holds
    what the user would not hand to a model."""

    name = "clipboard"
    default_enabled = False

    def __init__(self, timeout: float = 1.0) -> None:
        self.timeout = timeout

    def commands(self) -> list[list[str]]:
        """The readers worth trying here, in order."""
        found: list[list[str]] = []
        if os.environ.get("WAYLAND_DISPLAY") and (wl := shutil.which("wl-paste")):
            found.append([wl, "--no-newline", "--type", "text"])
        if os.environ.get("DISPLAY"):
            if xclip := shutil.which("xclip"):
                found.append([xclip, "-o", "-selection", "clipboard"])
            if xsel := shutil.which("xsel"):
                found.append([xsel, "-b", "-o"])
        return found

    def available(self) -> str | None:
        """None when some clipboard reader can run here, else why not."""
        if not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
            return "no X11 or Wayland display"
        if not self.commands():
            return "none of xclip, xsel, wl-paste is installed"
        return None

    async def collect(self, cwd: str) -> Mapping[str, Any]:
        for argv in self.commands():
            text = await _run_async(argv, self.timeout)
            if text is not None and text.strip():
                # redacted before the cut, so a cut never leaves part of a secret
                return {"clipboard": redact_text(text)[:MAX_CLIPBOARD]}
        return {}
