"""Withholding the changes of protected files from a diff, after git made it.

A pathspec exclusion could keep git from showing a protected file, but pathspecs are
what an attacker plays with (the tools pass ``--literal-pathspecs``, so no magic is
available anyway). The filter works on git's output instead: the diff is cut into
its per-file sections at each ``diff --git``/``diff --cc`` header (a hunk line always
starts with `` ``, ``+``, ``-`` or ``\\``, so file content can never fake a header),
each header's paths are read back exactly (quoted names unquoted; unquoted ones
only when both sides are the same name, which ``--no-renames`` guarantees), and a
section whose path the deny rules refuse (`adjutant.safety.protection.Shield`: names,
patterns, a work-tree file that is a hard link to a protected one) is replaced by a
line saying it was withheld. A header that cannot be read is withheld too.
"""

from __future__ import annotations

import codecs
import os
from typing import Any

__all__ = ["DIFF_FORMAT", "unquoted", "withhold"]

#: Options that fix the header format the filter reads, whatever the repository's
#: configuration says (``diff.noprefix``, ``diff.mnemonicPrefix``, ``diff.relative``).
DIFF_FORMAT = ("--no-renames", "--no-relative", "--src-prefix=a/", "--dst-prefix=b/")
_HEADERS = ("diff --git ", "diff --cc ", "diff --combined ")


def withhold(diff: str, top: str, shield: Any) -> str:
    """``diff`` with the sections of refused files replaced by a note (no content)."""
    out: list[str] = []
    section: list[str] = []
    for line in diff.splitlines(keepends=True):
        if line.startswith(_HEADERS) and section:
            out.append(_judge(section, top, shield))
            section = []
        section.append(line)
    if section:
        out.append(_judge(section, top, shield))
    return "".join(out)


def _judge(section: list[str], top: str, shield: Any) -> str:
    header = section[0]
    if not header.startswith(_HEADERS):
        # Text before the first header: git prints none; whatever it is, not shown.
        return "[withheld by Adjutant: output before the first file header]\n"
    paths = header_paths(header.rstrip("\n"))
    if paths is None or any("\ufffd" in path for path in paths):  # not valid UTF-8: the
        # name shown is not the file's, so its inode cannot be checked
        return (f"{_shown(header)}[withheld by Adjutant: the file name in this header "
                "cannot be read back, so it cannot be checked]\n")
    for path in paths:
        if why := shield.read_refusal(os.path.join(top, path)):
            return (f"{_shown(header)}[withheld by Adjutant: {why}; its changes are not "
                    "shown]\n")
    return "".join(section)


def _shown(header: str) -> str:
    return header if header.endswith("\n") else header + "\n"


def header_paths(header: str) -> list[str] | None:
    """The paths a ``diff --git``/``--cc`` header names, relative to the work tree."""
    for prefix in ("diff --cc ", "diff --combined "):
        if header.startswith(prefix):
            rest = header.removeprefix(prefix)
            if rest.startswith('"'):
                name, tail = _quoted(rest)
                return [name] if name is not None and not tail else None
            return [rest] if rest else None
    rest = header.removeprefix("diff --git ")
    if rest.startswith('"'):
        a, tail = _quoted(rest)
        if a is None or not tail.startswith(" "):
            return None
        tail = tail[1:]
        if tail.startswith('"'):
            b, end = _quoted(tail)
            if b is None or end:
                return None
        else:
            b = tail
        return _stripped(a, b)
    # Unquoted: "a/N b/N" with the same N on both sides (no renames), so N has a
    # known length whatever spaces it holds.
    if (len(rest) - 5) % 2:
        return None
    half = (len(rest) - 5) // 2
    name = rest[2:2 + half]
    if half <= 0 or rest != f"a/{name} b/{name}":
        return None
    return [name]


def _stripped(a: str, b: str) -> list[str] | None:
    if not (a.startswith("a/") and b.startswith("b/")):
        return None
    return list(dict.fromkeys((a[2:], b[2:])))


def unquoted(name: str) -> str | None:
    """A path as git prints it (C-quoted when it holds special characters)."""
    if not name.startswith('"'):
        return name
    found, tail = _quoted(name)
    return found if not tail else None


def _quoted(text: str) -> tuple[str | None, str]:
    """A C-quoted string at the start of ``text`` (as git writes names): (the name,
    what follows), or (None, "") when it is not one."""
    i = 1
    while i < len(text):
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == '"':
            break
        i += 1
    else:
        return None, ""
    try:
        raw = codecs.escape_decode(text[1:i].encode("utf-8", "surrogateescape"))[0]
    except ValueError:
        return None, ""
    return os.fsdecode(bytes(raw)), text[i + 1:]
