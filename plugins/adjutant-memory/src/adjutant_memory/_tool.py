"""The ``memory.remember`` tool: a write like any other (previewed, approved, logged).

There is no search tool on purpose: retrieval reaches a request through the context
(the ``memory`` context provider). Offered as a tool, a search drew questions the model
should answer in words into plans (measured with the shipped 0.5B model: answers in
words fell from 6 of 8 to 3 of 8; 4 of 8 without the tool)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from adjutant_hookspecs import ExecutionResult, ToolCall, ToolContext, ToolDeclaration, ToolSafety

if TYPE_CHECKING:
    from ._plugin import MemoryPlugin

__all__ = ["NoteTool", "RememberTool"]


def _result(call: ToolCall, status: Any, *, diff: str | None = None, stdout: str = "",
            stderr: str = "", started: float = 0.0, summary: str = "") -> ExecutionResult:
    return ExecutionResult(tool=call.tool, args=dict(call.args), status=status,
                           dry_run_diff=diff, stdout=stdout, stderr=stderr, summary=summary,
                           duration_ms=int((time.monotonic() - started) * 1000))


class RememberTool:
    """Store a preference or a project fact in working memory, after approval."""

    declaration = ToolDeclaration(
        name="memory.remember", version="0.1.0",
        description="Remember a preference of the user's or a fact about the project, "
                    "kept in working memory and given with every later request.",
        args_schema={
            "type": "object", "additionalProperties": False, "required": ["text"],
            "properties": {
                "text": {"type": "string", "minLength": 1, "maxLength": 2000,
                         "description": "what to remember, in one sentence"},
                "kind": {"type": "string", "enum": ["preference", "fact", "note"],
                         "default": "preference"}},
            "x-adjutant-requests": ["remember that I prefer pytest -q",
                                    "remember that the project uses tabs"]},
        safety=ToolSafety(writes=True, level="write"),
        examples=({"text": "I prefer pytest -q", "kind": "preference"},),
        summary="Remember: {text}")

    def __init__(self, plugin: MemoryPlugin) -> None:
        self.plugin = plugin

    def _check(self, call: ToolCall) -> tuple[str, Any]:
        from ._working import check_text

        text = check_text(call.args.get("text", ""))
        kind = call.args.get("kind", "preference")
        if kind not in ("preference", "fact", "note"):
            raise ValueError(f"kind must be preference, fact or note, not {kind!r}")
        return text, kind

    async def dry_run(self, call: ToolCall, ctx: ToolContext) -> ExecutionResult:
        from ._working import normalized

        started = time.monotonic()
        try:
            text, kind = self._check(call)
            service = self.plugin.require()
            same = [e for e in service.working.entries()
                    if normalized(e.text) == normalized(text)]
        except (ValueError, LookupError) as exc:
            return _result(call, "error", stderr=str(exc), started=started)
        if same:
            return _result(call, "dry_run", started=started,
                           diff=f"already remembered as {same[0].id}: {same[0].text}\n"
                                "(nothing changes: an identical entry is kept once)",
                           summary="Already remembered")
        where = f"run {ctx.run_id}" if ctx.run_id else "no run"
        return _result(call, "dry_run", started=started,
                       diff=f"+ working memory ({kind}): {text}\n"
                            f"  source: the operator, {where}",
                       summary=f"Remember a {kind}")

    async def execute(self, call: ToolCall, ctx: ToolContext) -> ExecutionResult:
        started = time.monotonic()
        try:
            text, kind = self._check(call)
            entry, added = await self.plugin.require().remember(
                text, kind=kind, by="operator", run_id=ctx.run_id)
        except (ValueError, LookupError) as exc:
            return _result(call, "error", stderr=str(exc), started=started)
        said = f"remembered as {entry.id}" if added else \
            f"already remembered as {entry.id}: kept once, nothing removed"
        return _result(call, "ok", stdout=said, started=started)


class NoteTool:
    """Update the project's notes (replace them, or add a line), after approval. The
    preview is the diff; the write happens only if the notes are still what the
    preview showed."""

    declaration = ToolDeclaration(
        name="memory.note", version="0.1.0",
        description="Update the notes kept about this project (how it is built, its "
                    "conventions): replace them, or add to them. Given with every later "
                    "request in this project.",
        args_schema={
            "type": "object", "additionalProperties": False, "required": ["text"],
            "properties": {
                "text": {"type": "string", "minLength": 1, "maxLength": 4000,
                         "description": "the new notes, or the line to add"},
                "append": {"type": "boolean", "default": True,
                           "description": "add the text to the notes (false: replace them)"}},
            "x-adjutant-requests": ["note for this project that the build runs with make",
                                    "update the project notes: tests need docker"]},
        safety=ToolSafety(writes=True, level="write"),
        examples=({"text": "The build runs with make.", "append": True},),
        summary="Project notes: {text}")

    def __init__(self, plugin: MemoryPlugin) -> None:
        self.plugin = plugin
        #: (run, project, args) -> the digest of the notes the preview was made from
        self._previewed: dict[tuple[str | None, str, str, bool], str] = {}

    def _plan(self, call: ToolCall, ctx: ToolContext) -> tuple[Any, str, str, bool, str]:
        from ._notes import ProjectNotes

        text = call.args.get("text")
        append = call.args.get("append", True)
        if not isinstance(text, str) or not text.strip():
            raise ValueError("text must be a non-empty string")
        if not isinstance(append, bool):
            raise ValueError("append must be true or false")
        service = self.plugin.require()
        notes = ProjectNotes(service.kernel.home, ctx.cwd)
        current = notes.read()
        return notes, current, notes.proposed(current, text, append), append, text

    async def dry_run(self, call: ToolCall, ctx: ToolContext) -> ExecutionResult:
        started = time.monotonic()
        try:
            notes, current, new, append, text = self._plan(call, ctx)
        except (ValueError, LookupError) as exc:
            return _result(call, "error", stderr=str(exc), started=started)
        self._previewed[(ctx.run_id, notes.root, text, append)] = notes.digest(current)
        if new == current:
            return _result(call, "dry_run", started=started, summary="Notes unchanged",
                           diff="(the project notes already say this: nothing changes)")
        return _result(call, "dry_run", started=started, summary="Update the project notes",
                       diff=f"{notes.diff(current, new)}\n  project: {notes.root}")

    async def execute(self, call: ToolCall, ctx: ToolContext) -> ExecutionResult:
        from ._notes import NotesChangedError

        started = time.monotonic()
        try:
            notes, current, new, append, text = self._plan(call, ctx)
            base = self._previewed.pop((ctx.run_id, notes.root, text, append), None)
            if base is None:
                raise ValueError("no preview of this change was shown: nothing written")
            if new == current:
                return _result(call, "ok", stdout="the notes already say this",
                               started=started)
            notes.write(new, base=base, by="operator", run_id=ctx.run_id)
        except (ValueError, LookupError, NotesChangedError, OSError) as exc:
            return _result(call, "error", stderr=str(exc), started=started)
        await self.plugin.require().record(_noted(notes.root, current, new, ctx.run_id))
        return _result(call, "ok", stdout=f"project notes updated ({len(new)} characters)",
                       started=started)


def _noted(root: str, before: str, after: str, run_id: str | None) -> Any:
    from ._records import MemoryNotedRecord

    return MemoryNotedRecord(project=root, before=before, after=after, run_id=run_id)
