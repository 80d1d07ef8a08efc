"""Path globs with a real ``**``: the matcher behind every deny pattern.

``fnmatch`` lets ``*`` cross ``/`` by accident and ``PurePath.full_match`` arrives
only in Python 3.13, so globs are translated here, one path component at a time:

- ``*`` matches any run of characters inside one component, ``?`` one character,
  ``[abc]`` / ``[!abc]`` a class; none of them ever matches ``/``.
- ``**`` as a whole component matches zero or more components, so ``/a/**/b``
  matches ``/a/b`` and ``/a/x/y/b``, and a trailing ``/**`` matches the directory
  itself as well as everything under it (deleting or replacing ``~/.ssh`` is as bad
  as writing into it). ``**`` inside a component (``a**b``) is a plain ``*``.
- Matching is case-insensitive, a deliberate over-match: on a case-insensitive file
  system (macOS, FAT, SMB mounts) ``~/.SSH/id_rsa`` opens ``~/.ssh/id_rsa``.
- A pattern is matched against a whole normalised absolute path; there is no
  brace expansion and no escaping (write two patterns instead).
"""

from __future__ import annotations

import functools
import re

__all__ = ["FLAGS", "Glob"]

FLAGS = re.IGNORECASE | re.DOTALL  # file names may hold newlines


class Glob:
    """One compiled absolute glob; ``match(path)`` tests a normalised absolute path."""

    __slots__ = ("_regex", "pattern", "regex")

    def __init__(self, pattern: str) -> None:
        if not pattern.startswith("/"):
            raise ValueError(f"glob must be absolute, got {pattern!r}")
        self.pattern = pattern
        #: The regular expression (for `FLAGS`, full match) the glob stands for.
        self.regex, self._regex = _compiled(pattern)

    def match(self, path: str) -> bool:
        return self._regex.fullmatch(path) is not None

    def __repr__(self) -> str:
        return f"Glob({self.pattern!r})"


@functools.lru_cache(maxsize=4096)
def _compiled(pattern: str) -> tuple[str, re.Pattern[str]]:
    """The glob's regular expression, compiled once per process: the rules are built
    again for each request, and beyond 512 patterns `re`'s own cache forgets them (the
    redaction rules alone are 234), so each request compiled its globs again."""
    regex = _translate(pattern)
    return regex, re.compile(regex, FLAGS)


def _translate(pattern: str) -> str:
    parts = [p for p in pattern.split("/") if p not in ("", ".")]
    if not parts:
        return "/"
    out: list[str] = []
    for part in parts:
        if part == "**":
            # Zero or more whole components, each with its leading slash; at the end
            # this also admits the parent itself ("/a/**" matches "/a").
            out.append("(?:/[^/]+)*")
        else:
            out.append("/" + _component(part))
    regex = "".join(out)
    # "/**" alone would be the empty string: it must still match "/".
    return regex if parts != ["**"] else "/|(?:/[^/]+)+"


def _component(part: str) -> str:
    out: list[str] = []
    i, n = 0, len(part)
    while i < n:
        c = part[i]
        if c == "*":
            while i + 1 < n and part[i + 1] == "*":
                i += 1
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[" and (end := _class_end(part, i)) is not None:
            body = part[i + 1 : end]
            negate = body[:1] in ("!", "^")
            if negate:
                body = body[1:]
            escaped = body.replace("\\", "\\\\").replace("[", "\\[")
            # A class never matches "/", negated or not.
            out.append(f"(?!/)[{'^' if negate else ''}{escaped}]")
            i = end
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


def _class_end(part: str, start: int) -> int | None:
    """Index of the ``]`` closing the class opened at ``start`` (fnmatch's rules)."""
    j = start + 1
    if j < len(part) and part[j] in ("!", "^"):
        j += 1
    if j < len(part) and part[j] == "]":  # a leading "]" is a literal member
        j += 1
    end = part.find("]", j)
    return None if end == -1 else end
