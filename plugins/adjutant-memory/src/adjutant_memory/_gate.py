"""The relevance gate: whether a request gets project passages at all, and which.

Every passage in the prompt is paid for on each request by a small local model
(measured on this repository at merge: 1500 characters of irrelevant passages cost +114
prompt tokens and took a request from 7 s to 16-30 s). So passages go only

1. to a *question* (a command is planned from the tool list; with the shipped 0.5B model,
   passages drew commands and questions alike into wrong plans),
2. that is *about the project's content*, not about the live state of this machine or
   folder ("what files are in this folder?", "how much disk is free?": a tool answers
   those from the machine, and no file's text does), and
3. only the *strong* hits: those holding the best share of the question's words found
   (``min_coverage`` at least), or as similar by vectors as ``min_cosine``.

Pinned working memory is not gated: the user asked for it to go with every request.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._index import Hit

__all__ = ["LIVE_STATE", "about_the_project", "strong"]

#: Questions about the machine or the folder as it is now, which tools answer (a
#: listing, disk usage, processes, the clock), not the text of the project's files.
LIVE_STATE = re.compile(
    r"""\b(?:
        (?:in|under|inside|within)\s+(?:this|the|my|our|current|that)\s+
            (?:folder|directory|dir|workspace)s?
      | (?:this|current|working)\s+(?:folder|directory|dir)
      | disk(?:\s+space)? | free\s+(?:space|memory|ram) | space\s+(?:left|free|used)
      | ram | cpu | memory\s+usage | load\s+average | uptime | battery
      | ip\s+address | hostname | processes | running\s+processes
      | what\s+time | what\s+day | today'?s?\s+date | the\s+date\s+today | weather
      | how\s+many\s+files | (?:largest|biggest|newest|latest|oldest|recent)\s+files
      | files\s+(?:are\s+)?(?:here|there) | list\s+(?:the\s+)?files
    )\b""", re.IGNORECASE | re.VERBOSE)


def about_the_project(prompt: str) -> tuple[bool, str]:
    """Whether ``prompt`` may get project passages, and why (for the bulletin)."""
    from ._assemble import is_question

    if not is_question(prompt):
        return False, "not a question"
    if (found := LIVE_STATE.search(prompt)) is not None:
        return False, f"about this machine or folder now ({found.group(0).strip()!r})"
    return True, "a question about the project"


def strong(hits: Sequence[Hit], *, min_coverage: float, min_cosine: float) -> list[Hit]:
    """The hits worth their tokens: the best share of the question's words (at least
    ``min_coverage``), or a cosine of ``min_cosine`` or more; best first."""
    lexical = [h.coverage for h in hits if h.coverage >= min_coverage]
    top = max(lexical, default=2.0)  # 2.0: no hit is strong lexically
    return [h for h in hits if h.coverage >= top - 1e-9
            or (h.cosine is not None and h.cosine >= min_cosine)]
