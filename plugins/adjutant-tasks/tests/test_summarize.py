"""``doc.summarize``: text from generated PDFs (a text layer, and a scan read with
Tesseract), map-reduce within the context budget with a checkpoint per piece, and the
tool through the operator's pipeline: the PDFs chosen inside the cage, the preview, the
task queued, the summary returned and written to summary.md."""

from __future__ import annotations

import hashlib
import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from pdfs import scanned_pdf, text_pdf

from adjutant import ModelPreset, Profile
from adjutant.scripted import ScriptedApprover, ScriptedProvider
from adjutant.testing import Harness
from adjutant_hookspecs import (
    CompletionChunk,
    CompletionRequest,
    ProviderError,
    TaskContext,
    TaskFailed,
)
from adjutant_tasks import TasksPlugin
from adjutant_tasks._pdf import ocr_available, pdf_pages
from adjutant_tasks._summarize import SummarizeCapability, chunk_text

pytestmark = pytest.mark.anyio

PAGES = [
    "The river survey of 2024 measured water quality at twelve stations along the "
    "Elbe. Nitrate levels fell by eight percent compared with the previous decade, " * 3,
    "Fish populations recovered in the lower reaches, where salmon returned after "
    "forty years. The report recommends extending the monitoring programme. " * 3,
    "Funding for the next survey comes from the regional water authority and two "
    "universities, which share the laboratory costs equally. " * 3,
]
SCAN = ["INVOICE NUMBER 4711", "Total amount due: 250 EUR", "Payable within 30 days"]

needs_ocr = pytest.mark.skipif(ocr_available() is not None,
                               reason=f"OCR is not available here: {ocr_available()}")


def test_text_layer_pages_come_out_as_text(tmp_path: Path) -> None:
    pages = pdf_pages(text_pdf(tmp_path / "survey.pdf", PAGES))
    assert [p.number for p in pages] == [1, 2, 3]
    assert {p.source for p in pages} == {"text"}
    assert "Nitrate levels fell by eight percent" in pages[0].text
    assert "salmon returned" in pages[1].text


@needs_ocr
def test_a_scanned_page_is_read_with_ocr(tmp_path: Path) -> None:
    (page,) = pdf_pages(scanned_pdf(tmp_path / "scan.pdf", SCAN))
    assert page.source == "ocr"
    text = page.text.upper()
    assert "INVOICE NUMBER 4711" in text and "250 EUR" in text


def test_a_file_that_is_not_a_pdf_is_a_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.pdf"
    bad.write_bytes(b"%PDF-1.4\nthis is not really a PDF\n")
    with pytest.raises(ValueError, match=r"bad\.pdf is not a readable PDF"):
        pdf_pages(bad)


def test_chunks_fit_the_budget_and_keep_every_word() -> None:
    text = "\n\n".join(PAGES)
    pieces = chunk_text(text, 300)
    assert len(pieces) > 3 and all(len(p) <= 300 for p in pieces)
    assert " ".join(" ".join(pieces).split()) == " ".join(text.split())


class Context:
    """What the runner hands a capability, kept in memory (the runner's own tests
    cover its durable checkpoints)."""

    def __init__(self, kernel: Any, inputs: dict[str, Any], artifacts: Path) -> None:
        self.task_id, self.inputs, self.attempt = "t-test", inputs, 1
        self.artifacts, self.kernel = artifacts, kernel
        self.checkpoint: Any = None
        self.reported: list[tuple[float, str]] = []

    async def progress(self, fraction: float, message: str = "") -> None:
        self.reported.append((fraction, message))

    async def save_checkpoint(self, state: Any) -> None:
        self.checkpoint = state

    async def load_checkpoint(self) -> Any:
        return self.checkpoint

    async def call_tool(self, step: str, tool: str, args: Any, *, cwd: str | None = None) -> Any:
        raise AssertionError("doc.summarize calls no tool from its task")

    async def confirm(self, step: str, what: str, question: str) -> bool:
        raise AssertionError("doc.summarize asks the user nothing from its task")

    async def run_child(self, step: str, capability: str, inputs: Any) -> Any:
        raise AssertionError("doc.summarize runs no nested task")


class Failing(ScriptedProvider):
    """Answers ``good`` requests, then fails as a dropped connection does."""

    def __init__(self, good: int) -> None:
        super().__init__()
        self.good = good
        self.prompts: list[str] = []

    async def complete(self, request: CompletionRequest) -> AsyncIterator[CompletionChunk]:
        self.prompts.append(request.prompt)
        if len(self.prompts) > self.good:
            raise ProviderError("the connection dropped", retryable=True)
        yield CompletionChunk(text=f"summary {len(self.prompts)}", finish_reason="stop")


def _profile(provider: str) -> Profile:
    return Profile(model=ModelPreset(provider=provider, context_size=2048),
                   plugins={"tasks": {"chunk_tokens": 128}})


async def test_map_reduce_resumes_from_its_checkpoint(tmp_path: Path) -> None:
    pdf = text_pdf(tmp_path / "survey.pdf", PAGES)
    inputs = {"documents": [{"path": str(pdf),
                             "sha256": hashlib.sha256(pdf.read_bytes()).hexdigest()}]}
    failing = Failing(good=2)
    async with Harness(TasksPlugin(), provider=failing, profile=_profile(failing.name)) as h:
        context = Context(h.kernel, inputs, tmp_path / "artifacts")
        assert isinstance(context, TaskContext)
        with pytest.raises(TaskFailed, match="the connection dropped") as failed:
            await SummarizeCapability().run(context)
        assert failed.value.retryable
        assert sorted(context.checkpoint["maps"].values()) == ["summary 1", "summary 2"]
        pieces = len(chunk_text("\n\n".join(pdf_page.text for pdf_page in pdf_pages(pdf)),
                                128 * 3))
        assert pieces > 3
        # the second attempt asks only for the pieces not yet summarised, then reduces
        failing.good, failing.prompts = 10_000, []
        outputs = await SummarizeCapability().run(context)
    assert len(failing.prompts) == pieces - 2 + 1
    assert failing.prompts[-1].startswith("Combine these partial summaries")
    assert "summary 1" in failing.prompts[-1]  # the checkpointed pieces are reduced too
    summary = Path(outputs["summary_path"])
    assert summary == tmp_path / "artifacts" / "summary.md"
    assert summary.read_text() == outputs["summary"]
    assert summary.read_text().startswith("# Summary of survey.pdf\n\n")
    assert outputs["pages"] == 3 and outputs["parts"] == pieces
    assert context.reported[-1] == (1.0, "summary written")


async def test_a_document_changed_since_it_was_chosen_is_refused(tmp_path: Path) -> None:
    pdf = text_pdf(tmp_path / "survey.pdf", PAGES)
    inputs = {"documents": [{"path": str(pdf), "sha256": "0" * 64}]}
    async with Harness(TasksPlugin()) as h:
        with pytest.raises(TaskFailed, match=r"survey\.pdf changed since it was chosen") as e:
            await SummarizeCapability().run(Context(h.kernel, inputs, tmp_path / "a"))
    assert not e.value.retryable


async def test_the_tool_previews_exactly_and_refuses_outside_the_cage(tmp_path: Path) -> None:
    plugin = TasksPlugin()
    async with Harness(plugin) as h:
        none = await h.dry_run("doc.summarize")
        assert none.status == "error" and "no PDF in the working directory" in none.stderr
        text_pdf(h.workspace / "b.pdf", PAGES[:1])
        text_pdf(h.workspace / "a.pdf", PAGES[1:])
        (h.workspace / "notes.txt").write_text("not a pdf")
        preview = await h.dry_run("doc.summarize")
        assert preview.status == "dry_run" and preview.dry_run_diff is not None
        lines = preview.dry_run_diff.splitlines()
        assert lines[0].startswith("summarize 2 PDFs with the model ")
        digest = hashlib.sha256((h.workspace / "a.pdf").read_bytes()).hexdigest()
        assert lines[1] == f"- a.pdf ({(h.workspace / 'a.pdf').stat().st_size} bytes, " \
                           f"sha256 {digest[:16]}…)"
        assert lines[2].startswith("- b.pdf (")
        outside = tmp_path / "outside.pdf"
        text_pdf(outside, PAGES[:1])
        for path in (str(outside), "../outside.pdf"):
            refused = await h.dry_run("doc.summarize", paths=[path])
            assert refused.status == "error" and "refused" in refused.stderr, path
        not_pdf = await h.dry_run("doc.summarize", paths=["notes.txt"])
        assert "notes.txt is not a PDF" in not_pdf.stderr
        assert [task async for task in plugin.queue.all()] == []  # a preview queues nothing


@pytest.mark.skipif(shutil.which("tesseract") is None, reason="tesseract-ocr not installed")
async def test_summarize_the_pdfs_here_through_the_pipeline(tmp_path: Path) -> None:
    """Golden flow: a text PDF and a scanned one in the working directory; the call goes
    through the operator (no policy is installed here, so the step is asked, showing
    the exact preview), queues the task, and returns the summary, written to
    summary.md in the task's folder."""
    provider = ScriptedProvider()
    provider.queue(*[f"part {n}" for n in range(1, 40)])
    async with Harness(TasksPlugin(), provider=provider, profile=_profile(provider.name),
                       mode="execute-with-confirmation",
                       approver=ScriptedApprover(steps=["grant"])) as h:
        text_pdf(h.workspace / "survey.pdf", PAGES)
        scanned_pdf(h.workspace / "invoice.pdf", SCAN)
        run = await h.call("doc.summarize")
        assert run.outcome.status == "executed", run.outcome
        (asked,) = run.asked
        assert asked.preview.startswith("summarize 2 PDFs with the model ")
        assert "- invoice.pdf (" in asked.preview and "- survey.pdf (" in asked.preview
        (result,) = run.outcome.results
        assert result.status == "ok" and result.artifacts
        summary = Path(result.artifacts[0])
        assert summary.name == "summary.md" and summary.parent.parent.name == "copilot"
        assert summary.read_text().startswith("# Summary of invoice.pdf, survey.pdf\n\n")
        assert summary.read_text().strip() in result.stdout
        # the scanned page reached the model as text read by OCR
        prompts = " ".join(r.prompt for r in provider.requests).upper()
        assert "INVOICE NUMBER 4711" in prompts and "NITRATE LEVELS FELL" in prompts


@pytest.mark.skipif(shutil.which("tesseract") is None, reason="tesseract-ocr not installed")
async def test_the_embedded_model_summarises_a_text_pdf_and_a_scan(tmp_path: Path) -> None:
    """The real embedded model (adjutant-llamacpp; skipped where it is not installed):
    only what must hold on any machine is asserted, a summary paragraph in
    summary.md for both documents, one page read by OCR."""
    llamacpp = pytest.importorskip("adjutant_llamacpp")
    provider = llamacpp.LlamaCpp(context_size=2048)
    profile = Profile(model=ModelPreset(provider=provider.name, model="gemma3-270m",
                                        temperature=0.0, context_size=2048))
    try:
        async with Harness(TasksPlugin(), provider=provider, profile=profile,
                           mode="execute-with-confirmation",
                           approver=ScriptedApprover(steps=["grant"])) as h:
            text_pdf(h.workspace / "survey.pdf", PAGES)
            scanned_pdf(h.workspace / "invoice.pdf", SCAN)
            run = await h.call("doc.summarize")
            (result,) = run.outcome.results
            assert result.status == "ok", result
            summary = Path(result.artifacts[0]).read_text()
            head, _, body = summary.partition("\n\n")
            assert head == "# Summary of invoice.pdf, survey.pdf"
            assert body.strip() and "\n\n" not in body.strip()  # one paragraph
    finally:
        await provider.aclose()
