"""What reaches a terminal: text from models, files, MCP clients and tools made safe to show.

A terminal obeys what it is sent: ``ESC [1A ESC [2K`` moves up and erases a line (a
packet above the ``[g]rant`` question rewritten), ``ESC ]52;c;...BEL`` writes the
clipboard, a lone ``\\r`` lets the rest of a line overwrite its start, ``\\x9b`` is a
one-byte CSI, and the bidi overrides (U+202A-202E, U+2066-2069) reorder what is read.
`printable` turns every such character into its visible escape (``\\x1b``, ``\\r``,
``\\u202e``), one character at a time, so a sequence split across streamed chunks is
caught as surely as a whole one; newlines and tabs stay where they are content.
Invisible characters (zero-width spaces, tags) are shown too: ``notes\\u200b.txt``
must not pass for ``notes.txt`` in a packet.

`SafeStream` applies it to everything written through it: the terminal frontends
write only through one (``adjutant run``, ``chat``, ``mcp serve``'s questions), so no
print can bypass it. Adjutant's own styling (the mode's colour, the progress line)
goes through `SafeStream.style` and `SafeStream.control`, never through text.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from typing import Any

__all__ = ["SafeStream", "printable", "safe_streams"]


def _visible(char: str) -> str:
    code = ord(char)
    named = {"\r": "\\r", "\n": "\\n", "\t": "\\t"}
    if char in named:
        return named[char]
    if code <= 0xFF:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


#: Controls a terminal acts on: C0 (but newline and tab), DEL, C1 (``\x9b`` is CSI);
#: the bidi embeddings, overrides and isolates, the implicit marks, and the Unicode
#: line and paragraph separators.
_UNSAFE = ([*range(0x00, 0x09), *range(0x0B, 0x20), 0x7F, *range(0x80, 0xA0),
            0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A),
            0x2028, 0x2029])
#: Invisible characters: they change no layout, so ``notes\u200b.txt`` looks like
#: ``notes.txt`` and tag characters (U+E0000-E007F) carry text nobody sees. Zero-width
#: spaces, word joiners and the invisible operators, the BOM, the Mongolian vowel
#: separator, the soft hyphen, the interlinear annotations and the tags are shown
#: everywhere; the zero-width (non-)joiners, which scripts and emoji need inside
#: content, only in one-line fields.
_INVISIBLE = [0x00AD, 0x180E, 0x200B, *range(0x2060, 0x2065), 0xFEFF, *range(0xFFF9, 0xFFFC),
              *range(0xE0000, 0xE0080)]
_MULTILINE = str.maketrans({code: _visible(chr(code)) for code in [*_UNSAFE, *_INVISIBLE]})
_ONE_LINE = str.maketrans({code: _visible(chr(code))
                           for code in [*_UNSAFE, *_INVISIBLE, 0x200C, 0x200D, 0x09, 0x0A]})


def printable(text: Any, *, multiline: bool = True) -> str:
    """``text`` with every character a terminal would act on shown as its escape.

    :param multiline: keep newlines and tabs (content: a file, a reply, a preview);
        ``False`` for a field that must stay on its one line (a name, a path, a
        reason, an argument), where a newline could forge a line of its own.
    A ``\\r\\n`` line end stays a line end (``\\r`` alone is shown as ``\\r``)."""
    shown: str = text if isinstance(text, str) else str(text)
    if multiline:
        return shown.replace("\r\n", "\n").translate(_MULTILINE)
    return shown.translate(_ONE_LINE)


class SafeStream:
    """A text stream whose every write passes `printable`; the rest is the stream's.

    :param raw: the stream to write to (a terminal, ``sys.stderr``, a capture)."""

    def __init__(self, raw: Any) -> None:
        self.raw: Any = raw.raw if isinstance(raw, SafeStream) else raw

    def write(self, text: str) -> int:
        self.raw.write(printable(text))
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    @property
    def colour(self) -> bool:
        """Whether Adjutant's own styling is shown: a terminal, and no ``NO_COLOR``."""
        if os.environ.get("NO_COLOR"):
            return False
        try:
            return bool(self.raw.isatty())
        except (AttributeError, ValueError, OSError):
            return False

    def style(self, text: str, code: str) -> None:
        """``text`` (made printable) in the SGR style ``code`` where colour is shown."""
        if not self.colour:
            self.write(text)
            return
        self.raw.write(f"\x1b[{code}m")
        self.write(text)
        self.raw.write("\x1b[0m")

    def control(self, sequence: str) -> None:
        """One of Adjutant's own terminal controls (``\\r\\x1b[K``); never given text
        from anywhere else. Only on a terminal."""
        if self.colour:
            self.raw.write(sequence)

    def __getattr__(self, name: str) -> Any:  # flush, isatty, fileno, encoding, ...
        return getattr(self.raw, name)


@contextlib.contextmanager
def safe_streams() -> Iterator[None]:
    """``sys.stdout`` and ``sys.stderr`` as `SafeStream` for the duration: everything a
    command prints is neutralised (what it writes as JSON is escaped already)."""
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = SafeStream(sys.stdout), SafeStream(sys.stderr)
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved
