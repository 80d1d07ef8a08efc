"""``doc.summarize``: summarise the PDFs named, or those in the working directory, as
a durable task.

A read: it looks at files inside the cage and changes nothing the user can see (the
summary goes to the task's artifact folder, ``summary.md``; saving it anywhere else is
a write, asked for as usual). Every PDF is opened through the cage (no link followed,
no protected file, nothing outside it) and its SHA-256 taken; the task refuses a file
whose bytes changed since. The dry-run preview names each file, its size and digest,
and the model that will read it.
"""

from __future__ import annotations

import hashlib
import os
from typing import TYPE_CHECKING, Any

from adjutant_hookspecs import (
    ARG_ROLE,
    ExecutionResult,
    ToolCall,
    ToolContext,
    ToolDeclaration,
    ToolSafety,
)

if TYPE_CHECKING:
    from ._plugin import TasksPlugin
    from ._queue import Task

__all__ = ["MAX_PDFS", "MAX_PDF_BYTES", "DocSummarize"]

MAX_PDFS = 20
MAX_PDF_BYTES = 100 << 20


class _Refused(Exception):
    pass


class DocSummarize:
    """The ``doc.summarize`` tool (see the module's docstring)."""

    declaration = ToolDeclaration(
        name="doc.summarize",
        version="0.1.0",
        summary="Summarize the PDFs[ {paths}]",
        description=(
            "Summarize PDF documents with the active model, in the background as a durable "
            "task: the PDFs named, or every PDF in the working directory. Pages without a "
            "text layer (scans) are read with OCR. The summary is written to summary.md in "
            "the task's folder; `adjutant tasks watch` shows the progress. Requests like: "
            "'summarize these PDFs', 'summarize report.pdf'."),
        args_schema={
            "type": "object",
            "properties": {
                "paths": {"type": "array", "minItems": 1, "maxItems": MAX_PDFS,
                          "items": {"type": "string", "minLength": 1, "maxLength": 4096,
                                    "pattern": r"\.[Pp][Dd][Ff]$", ARG_ROLE: "path"},
                          "description": "The PDFs, relative to the working directory "
                                         "(default: every *.pdf in it)."},
            },
            "additionalProperties": False,
            "x-adjutant-requests": ["summarize the PDFs here", "summarize report.pdf"],
        },
        safety=ToolSafety(level="read"),
        examples=({}, {"paths": ["report.pdf"]}),
    )

    def __init__(self, plugin: TasksPlugin) -> None:
        self.plugin = plugin

    def _documents(self, call: ToolCall, ctx: ToolContext) -> list[dict[str, Any]]:
        from adjutant.toolkit import Refused, check_file, locate, walk

        args = call.args
        if unknown := sorted(k for k in args if k != "paths"):
            raise _Refused(f"unknown argument(s) {', '.join(map(repr, unknown))}")
        raw = args.get("paths")
        if raw is None:
            try:
                names = sorted(e.name for e in os.scandir(ctx.cwd)
                               if e.name.lower().endswith(".pdf") and e.is_file(
                                   follow_symlinks=False))
            except OSError as exc:
                raise _Refused(f"cannot list the working directory: {exc}") from None
            if not names:
                raise _Refused(f"no PDF in the working directory {ctx.cwd}")
            raw = names[:MAX_PDFS]
        if not isinstance(raw, list) or not raw or len(raw) > MAX_PDFS or not all(
                isinstance(p, str) and p for p in raw):
            raise _Refused(f"`paths` must list 1 to {MAX_PDFS} paths")
        documents: list[dict[str, Any]] = []
        for path in raw:
            try:
                located = locate(ctx.cwd, ctx.cages, path)
                with walk(located, want="file") as opened:
                    if opened.file_fd is None or opened.st is None:
                        raise _Refused(f"{path}: no such file")
                    check_file(opened.st, opened.root_dev, located.shown, write=False)
                    data = opened.read(MAX_PDF_BYTES)
            except Refused as exc:
                raise _Refused(str(exc)) from None
            if not data.startswith(b"%PDF-"):
                raise _Refused(f"{path} is not a PDF (it does not start with %PDF-)")
            full = os.path.join(located.root, *located.parts)
            documents.append({"path": full, "name": path, "bytes": len(data),
                              "sha256": hashlib.sha256(data).hexdigest()})
        return documents

    def _preview(self, documents: list[dict[str, Any]]) -> str:
        kernel = self.plugin.started()
        model = kernel.profile.model
        lines = [f"summarize {len(documents)} PDF{'s' if len(documents) != 1 else ''} with "
                 f"the model {model.model} ({model.provider}), in the background as a task "
                 "(capability doc.summarize)"]
        lines += [f"- {d['name']} ({d['bytes']} bytes, sha256 {d['sha256'][:16]}…)"
                  for d in documents]
        lines.append("writes: summary.md in the task's folder under the data home's runs/ "
                     "(nothing in the working directory)")
        return "\n".join(lines) + "\n"

    async def dry_run(self, call: ToolCall, ctx: ToolContext) -> ExecutionResult:
        try:
            documents = self._documents(call, ctx)
        except _Refused as exc:
            return _refused(call, exc)
        return ExecutionResult(tool=call.tool, args=dict(call.args), status="dry_run",
                               dry_run_diff=self._preview(documents),
                               summary=f"Summarize {len(documents)} PDF(s)")

    async def execute(self, call: ToolCall, ctx: ToolContext) -> ExecutionResult:
        try:
            documents = self._documents(call, ctx)
        except _Refused as exc:
            return _refused(call, exc)
        inputs = {"documents": [{"path": d["path"], "sha256": d["sha256"]}
                                for d in documents]}
        task, _ = await self.plugin.submit("doc.summarize", inputs, parent_run=ctx.run_id)
        names = ", ".join(d["name"] for d in documents)
        finished = await self._wait(task.id)
        if finished is not None and finished.status == "done" and finished.outputs:
            summary = str(finished.outputs.get("summary", ""))
            where = finished.outputs.get("summary_path", "")
            return ExecutionResult(tool=call.tool, args=dict(call.args), status="ok",
                                   stdout=f"{summary}\n(task {task.id}; saved as {where})\n",
                                   artifacts=(str(where),) if where else ())
        if finished is not None and finished.status != "done":
            return ExecutionResult(tool=call.tool, args=dict(call.args), status="error",
                                   stderr=f"doc.summarize: task {task.id} {finished.status}: "
                                          f"{finished.error or finished.message}\n")
        said = (f"queued task {task.id}: summarizing {names}; `adjutant tasks watch "
                f"{task.id}` follows it, summary.md appears in {task.artifacts}")
        return ExecutionResult(tool=call.tool, args=dict(call.args), status="ok",
                               stdout=said + "\n")

    async def _wait(self, task_id: str) -> Task | None:
        """The task once finished, or None when ``summarize_wait_s`` passed first."""
        import anyio

        from ._settings import tasks_settings

        wait = tasks_settings(self.plugin.started()).summarize_wait_s
        with anyio.move_on_after(wait):
            while True:
                task = await self.plugin.queue.get(task_id)
                if task is None or task.finished:
                    return task
                await anyio.sleep(0.1)
        return None


def _refused(call: ToolCall, exc: Exception) -> ExecutionResult:
    return ExecutionResult(tool=call.tool, args=dict(call.args), status="error",
                           stderr=f"doc.summarize: refused: {exc}\n")
