"""The ``memory`` context provider: working memory, and for a request the passages
relevant to it (`MemoryService.context`), in the bulletin's ``memory`` field, so they
are shown, consented to and logged like every other context source."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._plugin import MemoryPlugin

__all__ = ["MemoryContext"]


class MemoryContext:
    name = "memory"
    description = "working memory and the project passages relevant to the request"

    def __init__(self, plugin: MemoryPlugin) -> None:
        self.plugin = plugin

    async def gather(self, cwd: str) -> Mapping[str, Any]:
        """Working memory alone (no request to search for)."""
        service = self.plugin.service
        if service is None:
            return {}
        memory = await service.context(cwd)
        return {"memory": memory} if memory["text"] else {}

    async def gather_for(self, cwd: str, prompt: str,
                         thread_id: str | None = None) -> Mapping[str, Any]:
        """Working memory and what the project holds for ``prompt``."""
        service = self.plugin.service
        if service is None:
            return {}
        memory = await service.context(cwd, prompt, thread_id)
        return {"memory": memory} if memory["text"] else {}
