"""Where the operator works and what it knows there: the workspace and its cages (pinned
by device and inode), the tool context of a run, and the context bulletin."""

from __future__ import annotations

from typing import TYPE_CHECKING

from adjutant_hookspecs.records import CagePinnedRecord, ContextErrorRecord

if TYPE_CHECKING:
    from adjutant_hookspecs import Kernel

    from ..safety.protection import PromptFiles

import contextlib
import os
import re
from collections.abc import Sequence
from typing import Any

import msgspec

from adjutant_hookspecs import ContextBulletin, ToolContext, convert

from ..kernel._paths import cache_home
from ..safety._cages import check_roots
from ._actionlog import ActionLog
from ._state import key_value_store

__all__ = ["Workspace"]


#: How much of a request is searched for file names (a longer request is refused by
#: the planner anyway, `planner.MAX_REQUEST`).
MAX_SCAN = 8000

class Workspace:
    """The active project of one operator (``cwd``) and the cages around it."""

    def __init__(self, kernel: Kernel, log: ActionLog, cwd: str) -> None:
        self.kernel = kernel
        self.log = log
        self.cwd = cwd

    @property
    def scratch(self) -> str:
        """The per-user scratch directory (a default cage), outside the protected data
        home: ``$XDG_CACHE_HOME/adjutant/scratch``."""
        return str(cache_home(self.kernel.env) / "scratch")

    def tool_context(self, run_id: str, grants: Sequence[str]) -> ToolContext:
        """The context a run's tools get: the working directory and the cages (the
        profile's, expanded, and those the ``cage:`` grants add)."""
        # The scratch cage exists before any tool is told it may write there (the
        # sandbox binds only existing directories).
        with contextlib.suppress(OSError):
            os.makedirs(self.scratch, mode=0o700, exist_ok=True)
        cages = [cage.replace("{workspace}", self.cwd).replace("{scratch}", self.scratch)
                 for cage in self.kernel.profile.path_cages]
        cages += [g.split(":", 1)[1] for g in grants if g.startswith("cage:")]
        return ToolContext(cwd=self.cwd, cages=tuple(cages), run_id=run_id,
                           home=self.kernel.env.get("HOME") or os.path.expanduser("~"),
                           data_home=str(self.kernel.home))

    async def check_cages(self, grants: Sequence[str]) -> None:
        """Refuse (`CageChangedError`) when the workspace or another cage root no longer
        resolves to the device and inode pinned the first time; pin new ones."""
        kv = key_value_store(self.kernel)
        if kv is None:  # nowhere to keep pins (no store installed)
            return
        roots, renew = self._cage_roots(grants)
        for pin in await check_roots(kv, roots, renew=renew):
            await self.log.record(CagePinnedRecord(path=pin.path, target=pin.target,
                                                   device=pin.device, inode=pin.inode))

    def _cage_roots(self, grants: Sequence[str]) -> tuple[list[tuple[str, str]], set[str]]:
        """The roots to check, and the scratch directory if it was just made (its own)."""
        made = not os.path.lexists(self.scratch)
        roots = [("workspace", self.cwd),
                 *(("cage", c) for c in self.tool_context("", grants).cages)]
        return roots, {self.scratch} if made else set()

    async def bulletin(self, prompt: str | None = None,
                       thread_id: str | None = None) -> ContextBulletin:
        """What the context providers the profile enables see now; with ``prompt``, a
        provider that has ``gather_for`` (retrieval) answers for that request."""
        fields: dict[str, Any] = {}
        enabled = self.kernel.profile.context_providers
        for name, provider in self.kernel.context_providers.items():
            # a provider may be off unless asked for (``default_enabled = False``)
            if not enabled.get(name, getattr(provider, "default_enabled", True)):
                continue
            try:
                gather_for = getattr(provider, "gather_for", None)
                found = await (gather_for(self.cwd, prompt, thread_id)
                               if prompt is not None and callable(gather_for)
                               else provider.gather(self.cwd))
                convert({**msgspec.to_builtins(found), "cwd": self.cwd}, ContextBulletin)
            except Exception as exc:  # a broken source costs its fields, not the request
                await self.log.record(ContextErrorRecord(provider=name,
                                                         error=repr(exc)[:500]))
                continue
            fields.update(found)
        if fields.get("selected_files"):
            fields["selected_files"] = self.admitted(fields["selected_files"])
        return convert({**msgspec.to_builtins(fields), "cwd": self.cwd}, ContextBulletin)

    def prompt_files(self) -> PromptFiles:
        """Core's check for files joining a prompt: inside the profile's cages (the
        workspace and scratch, no grants) once resolved, the deny rules, one link."""
        from ..safety.protection import PromptFiles

        context = self.tool_context("", ())
        return PromptFiles(context.cages, home=context.home, data_home=context.data_home)

    def admitted(self, paths: Sequence[str]) -> list[str]:
        """The files of ``paths`` that may join a prompt (`prompt_files`), each named by
        where it really is, every link resolved: absolute if given so, else relative to
        the working directory when it lies there. The others are dropped, whatever name
        reached them."""
        files = self.prompt_files()
        cwd = os.path.realpath(self.cwd)
        out: list[str] = []
        for given in paths:
            if not isinstance(given, str) or not given or "\x00" in given:
                continue
            path = os.path.join(self.cwd, given)
            if files.refusal(path) is not None:
                continue
            real = os.path.realpath(path)
            shown = real if os.path.isabs(given) or not real.startswith(cwd + os.sep) \
                else os.path.relpath(real, cwd)
            if shown not in out:
                out.append(shown)
        return out

    def mentioned_files(self, prompt: str, bulletin: ContextBulletin | None = None,
                        limit: int = 5) -> list[str]:
        """Files the request names that exist under the working directory and are not
        in the context yet."""
        known = set(bulletin.selected_files) if bulletin else set()
        files = self.prompt_files()
        cwd = os.path.realpath(self.cwd)
        found: list[str] = []
        # Tokens first, then a test of each token's end: ``[\w./-]+\.\w+`` over the
        # whole text backtracks from every start (100,000 characters took 34 s).
        for token in re.findall(r"[\w./-]+", prompt[:MAX_SCAN]):
            word = token.rstrip("./-")
            if not re.search(r"\w\.\w+$", word):
                continue
            path = os.path.join(self.cwd, word)
            # under the working directory once resolved, and a file that may join a
            # prompt (`PromptFiles`): a name linked out of it is not offered
            inside = os.path.realpath(path).startswith(cwd + os.sep)
            if inside and word not in known and word not in found \
                    and os.path.realpath(path) not in known and files.refusal(path) is None:
                found.append(word)
        return found[:limit]
