"""Files a request names, offered for its context: asked, never assumed.

In ``adjutant chat`` the user may answer "yes, for this session": the file then joins
the context of every later request that names it, without the question. The answer
holds for the file it was given for: the same path resolving elsewhere (a link moved
to point at another file) is asked about again.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

import anyio

from ..safety._cages import CageChangedError
from ._status import one_line

if TYPE_CHECKING:
    from ..operator import Copilot

__all__ = ["SessionFiles", "offer_files"]


class SessionFiles:
    """The files the user let into every request of this session."""

    def __init__(self) -> None:
        self._allowed: set[str] = set()

    @staticmethod
    def _key(cwd: str, name: str) -> str:
        return os.path.realpath(os.path.join(cwd, name))

    def allows(self, cwd: str, name: str) -> bool:
        return self._key(cwd, name) in self._allowed

    def allow(self, cwd: str, names: list[str]) -> None:
        self._allowed.update(self._key(cwd, n) for n in names)


async def offer_files(copilot: Copilot, request: str, interactive: bool,
                      session: SessionFiles | None = None) -> list[str]:
    """The files to add to this request's context: those the user agrees to now, and
    (with a ``session``) those agreed to for the session, which it says on stderr."""
    try:
        bulletin = await copilot.bulletin()
    except CageChangedError:  # nothing is looked at; the run itself refuses and says why
        return []
    files = copilot.mentioned_files(request, bulletin)
    if not files or not interactive:
        return []
    kept = [f for f in files if session is not None and session.allows(copilot.cwd, f)]
    if kept:
        print(f"including {one_line(', '.join(kept), 300)} (allowed for this session)",
              file=sys.stderr)
    asked = [f for f in files if f not in kept]
    if not asked:
        return kept
    what = "this file" if len(asked) == 1 else f"these {len(asked)} files"
    question = f"Include {what} in the context ({one_line(', '.join(asked), 300)})?"
    if session is None:
        prompt = f"{question} [y/N] "
    else:  # the choices on a line of their own: a line editor keeps a short prompt whole
        print(question)
        prompt = "[y]es, [s] yes for this session, [N]o: "

    def ask() -> str:
        try:
            # input() writes its prompt past sys.stdout on a terminal: printable here
            return input(prompt).strip().lower()
        except EOFError:
            return ""
    answer = (await anyio.to_thread.run_sync(ask, abandon_on_cancel=True))[:1]
    if answer == "s" and session is not None:
        session.allow(copilot.cwd, asked)
        return kept + asked
    return kept + asked if answer == "y" else kept
