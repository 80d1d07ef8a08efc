"""What a search step before would find, for "that file" in the clause after it
("find where TODO is written, then open that file"): the one file here whose text holds
the search's words. Read at planning time, as the context is: files under the workspace
only (no hidden ones, no links, none over 256 KiB), and only a plain pattern of words,
matched as text; a regex is never run here, so no pattern can take long."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

from ._here import inside, workspace_paths

__all__ = ["found_by"]

_PLAIN = re.compile(r"[\w .:()'\"=,-]{2,80}")
_LARGEST = 256 * 1024


#: Where a search was for a definition ("where is average defined?").
_DEFINED = re.compile(r"\b(?:defined|definition|declared|implemented)\b", re.IGNORECASE)


def found_by(args: Mapping[str, Any], cwd: str, asked: str = "") -> str | None:
    """The one file under ``cwd`` (or under the search's own folder) holding a search
    step's ``pattern``, or, where several do and ``asked`` (the search's clause) wants a
    definition, the one defining it (``def average``); None when the pattern is not
    plain words, or no file or several hold it."""
    pattern, folder = args.get("pattern"), args.get("path") or "."
    if not (cwd and isinstance(pattern, str) and isinstance(folder, str)
            and _PLAIN.fullmatch(pattern) and pattern.strip()):
        return None
    if os.path.isfile(os.path.join(cwd, folder)):
        return folder if inside(cwd, folder) else None  # one file searched: that one
    if not (os.path.isdir(os.path.join(cwd, folder)) and (folder == "." or inside(cwd, folder))):
        return None
    fold = args.get("ignore_case") is True
    wanted = pattern.lower() if fold else pattern
    hits: list[tuple[str, str]] = []
    for path in workspace_paths(cwd):
        if folder != "." and not path.startswith(folder.rstrip("/") + "/"):
            continue
        full = os.path.join(cwd, path)
        try:
            if os.path.islink(full) or not os.path.isfile(full) \
                    or os.path.getsize(full) > _LARGEST:
                continue
            with open(full, "rb") as handle:
                data = handle.read(_LARGEST)
        except OSError:
            continue
        if b"\0" in data:
            continue  # binary: a search of text skips it too
        text = data.decode("utf-8", "replace")
        if wanted in (text.lower() if fold else text):
            hits.append((path, text))
            if len(hits) > 20:
                return None  # words everywhere: no one file is meant
    if len(hits) > 1 and _DEFINED.search(asked) and re.fullmatch(r"\w+", pattern):
        defining = re.compile(rf"\b(?:def|class|function|func|fn|sub|struct|interface)\s+"
                              rf"{re.escape(pattern)}\b", re.IGNORECASE if fold else 0)
        hits = [(path, text) for path, text in hits if defining.search(text)]
    return hits[0][0] if len(hits) == 1 else None
