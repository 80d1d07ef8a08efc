"""The ``doc.summarize`` capability: PDFs to a ``summary.md`` with the active model.

Map-reduce within the context budget: the documents' text is cut into pieces that
fit the model's context window with room for the answer; each piece is summarised
(map, one checkpoint after each, keyed by the piece's digest, so a resumed task does
not redo them, even with another budget), then the
piece summaries are combined (reduce, again in pieces while they do not fit). A
document whose bytes changed since it was chosen is refused.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from adjutant_hookspecs import Kernel, TaskContext

__all__ = ["SummarizeCapability", "chunk_text"]

#: Characters per token, a safe under-estimate for English prose.
CHARS_PER_TOKEN = 3
ANSWER_TOKENS = 160
#: A summary is one paragraph: a blank line after some text ends it (a small model
#: otherwise goes on repeating the prompt's pattern until ``max_tokens``).
PARAGRAPH_END = "\n\n"
SYSTEM = ("You summarise documents faithfully and briefly. Write plain sentences; do not "
          "invent anything that is not in the text.")


def chunk_text(text: str, limit: int) -> list[str]:
    """``text`` in pieces of at most ``limit`` characters, cut at paragraph or line
    ends where possible."""
    pieces: list[str] = []
    while len(text) > limit:
        cut = max(text.rfind("\n\n", 0, limit), text.rfind("\n", 0, limit),
                  text.rfind(". ", 0, limit))
        cut = cut + 1 if cut > limit // 2 else limit
        pieces.append(text[:cut].strip())
        text = text[cut:]
    if text.strip():
        pieces.append(text.strip())
    return [p for p in pieces if p]


class SummarizeCapability:
    """Summarise PDFs: ``inputs = {"documents": [{"path": ..., "sha256": ...}, ...]}``
    (or ``{"paths": [...]}``, absolute)."""

    name = "doc.summarize"
    resource = "model"
    timeout_s = 3600.0
    retryable = True
    description = "summarise PDFs (text layer, OCR for scans) into summary.md"

    async def run(self, context: TaskContext) -> Mapping[str, Any]:
        import anyio
        import msgspec

        from adjutant_hookspecs import TaskFailed

        from ._pdf import pdf_pages

        documents = _documents(context.inputs)
        state: dict[str, Any] = await context.load_checkpoint() or {"maps": {}}
        budget = _piece_chars(context.kernel)
        pages = ocr_pages = blank = 0
        texts: list[tuple[str, str]] = []
        for doc in documents:
            path = Path(doc["path"])
            try:
                data = await anyio.Path(path).read_bytes()
            except OSError as exc:
                raise TaskFailed(f"cannot read {path}: {exc.strerror or exc}",
                                 retryable=False) from None
            if doc.get("sha256") is not None and \
                    hashlib.sha256(data).hexdigest() != doc["sha256"]:
                raise TaskFailed(f"{path.name} changed since it was chosen; not "
                                 "summarised", retryable=False)
            try:
                found = await anyio.to_thread.run_sync(pdf_pages, path)
            except ValueError as exc:
                raise TaskFailed(str(exc), retryable=False) from None
            pages += len(found)
            ocr_pages += sum(p.source == "ocr" for p in found)
            blank += sum(p.source == "none" for p in found)
            text = "\n\n".join(p.text for p in found if p.text)
            texts.append((path.name, text))
        await context.progress(0.1, f"read {len(documents)} documents, {pages} pages")
        pieces = [(name, piece) for name, text in texts for piece in chunk_text(text, budget)]
        if not pieces:
            raise TaskFailed("the documents have no text (scanned pages need OCR: "
                             "apt-get install tesseract-ocr)", retryable=False)
        maps: dict[str, str] = state["maps"]  # piece digest -> its summary
        keys = [hashlib.sha256(f"{name}\0{piece}".encode()).hexdigest()[:24]
                for name, piece in pieces]
        for index, ((name, piece), key) in enumerate(zip(pieces, keys, strict=True)):
            if key not in maps:
                maps[key] = await _complete(context.kernel, f"Summarise this part of the "
                                            f"document {name}:\n\n{piece}\n\nSummary:")
                await context.save_checkpoint({"maps": maps})
            await context.progress(0.1 + 0.8 * (index + 1) / len(pieces),
                                   f"summarised part {index + 1} of {len(pieces)}")
        partial = [maps[key] for key in keys]
        summary = partial[0] if len(partial) == 1 else await _reduce(context.kernel,
                                                                      partial, budget)
        names = ", ".join(name for name, _ in texts)
        body = f"# Summary of {names}\n\n{summary.strip()}\n"
        await anyio.Path(context.artifacts).mkdir(parents=True, exist_ok=True)
        target = context.artifacts / "summary.md"
        await anyio.Path(target).write_text(body)
        await context.progress(1.0, "summary written")
        outputs: dict[str, Any] = msgspec.to_builtins({
            "summary_path": str(target), "summary": body, "documents": len(documents),
            "pages": pages, "ocr_pages": ocr_pages, "pages_without_text": blank,
            "parts": len(pieces)})
        return outputs


def _documents(inputs: Mapping[str, Any]) -> list[dict[str, Any]]:
    """``documents`` (``[{"path", "sha256"}]``, as the tool queues them: a changed file
    is refused) or ``paths`` (absolute paths, as a schedule names them)."""
    from adjutant_hookspecs import TaskFailed

    documents = inputs.get("documents")
    if documents is None and isinstance(paths := inputs.get("paths"), list):
        documents = [{"path": p} for p in paths]
    if not isinstance(documents, list) or not documents:
        raise TaskFailed("no documents to summarise: give `documents` or `paths`")
    for doc in documents:
        if not isinstance(doc, dict) or not isinstance(doc.get("path"), str) or \
                not Path(doc["path"]).is_absolute():
            raise TaskFailed(f"each document needs an absolute path, got {doc!r}")
    return documents


def _piece_chars(kernel: Kernel) -> int:
    """Characters of document per request: ``plugins.tasks.chunk_tokens``, else a
    quarter of the context window (at most 2048 tokens), always leaving room in the
    window for the instructions and the answer."""
    from ._settings import tasks_settings

    window = kernel.profile.model.context_size or 2048
    tokens = tasks_settings(kernel).chunk_tokens or min(2048, window // 4)
    tokens = min(tokens, window - ANSWER_TOKENS - 200)
    return max(100, tokens) * CHARS_PER_TOKEN


async def _reduce(kernel: Kernel, partial: list[str], budget: int) -> str:
    while True:
        joined = "\n\n".join(partial)
        if len(joined) <= budget:
            return await _complete(kernel, "Combine these partial summaries of the same "
                                   f"documents into one short summary:\n\n{joined}\n\n"
                                   "Summary:")
        groups = chunk_text(joined, budget)
        partial = [await _complete(kernel, f"Combine these partial summaries:\n\n{group}"
                                   "\n\nSummary:") for group in groups]


async def _complete(kernel: Kernel, prompt: str) -> str:
    from adjutant_hookspecs import CompletionRequest, ProviderError, TaskFailed

    model = kernel.profile.model
    provider = kernel.providers.get(model.provider)
    if provider is None:
        raise TaskFailed(f"the profile's model provider {model.provider!r} is not "
                         "installed", retryable=False)
    request = CompletionRequest(prompt=prompt, system=SYSTEM, model=model.model,
                                temperature=0.2, max_tokens=ANSWER_TOKENS,
                                context_size=model.context_size)
    text = ""
    try:
        stream = provider.complete(request)
        try:
            async for chunk in stream:
                text += chunk.text
                if PARAGRAPH_END in text.lstrip():
                    break
        finally:  # closing the stream stops the generation (a generator has aclose)
            if (close := getattr(stream, "aclose", None)) is not None:
                await close()
    except ProviderError as exc:
        raise TaskFailed(f"the model failed: {exc}", retryable=exc.retryable) from exc
    text = text.strip().split(PARAGRAPH_END, 1)[0].strip()
    if not text:
        raise TaskFailed("the model returned an empty summary", retryable=True)
    return text
