"""Text out of a PDF: pypdf's text layer, and Tesseract OCR for a page without one.

Blocking (parsing, rendering, OCR): call it in a worker thread. OCR needs Debian's
``tesseract-ocr`` and the ``pytesseract`` and ``pillow`` packages; a page with no
text where OCR is not installed comes back marked, never silently empty.
"""

from __future__ import annotations

import io
import shutil
from pathlib import Path

import msgspec

__all__ = ["PageText", "ocr_available", "pdf_pages"]

#: Fewer characters than this on a page: treated as having no text layer.
MIN_TEXT_CHARS = 8


class PageText(msgspec.Struct, frozen=True, kw_only=True):
    number: int
    text: str
    #: ``text`` (the text layer), ``ocr``, or ``none`` (no text, OCR not available)
    source: str


def ocr_available() -> str | None:
    """None when OCR works here, else why not."""
    if shutil.which("tesseract") is None:
        return "tesseract is not installed (apt-get install tesseract-ocr)"
    try:
        import PIL  # noqa: F401
        import pytesseract  # type: ignore[import-untyped,import-not-found,unused-ignore]  # noqa: F401
    except ImportError:
        return "pytesseract and pillow are not installed (pip install 'adjutant-tasks[ocr]')"
    return None


def pdf_pages(path: Path, *, first: int = 0) -> list[PageText]:
    """The pages of ``path`` from page index ``first`` on."""
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    try:
        reader = PdfReader(path)
        pages = list(reader.pages)
    except (PdfReadError, ValueError, OSError) as exc:
        raise ValueError(f"{path.name} is not a readable PDF: {exc}") from None
    out: list[PageText] = []
    for index in range(first, len(pages)):
        page = pages[index]
        text = (page.extract_text() or "").strip()
        if len(text) >= MIN_TEXT_CHARS:
            out.append(PageText(number=index + 1, text=text, source="text"))
            continue
        out.append(_ocr(page, index + 1))
    return out


def _ocr(page: object, number: int) -> PageText:
    if ocr_available() is not None:
        return PageText(number=number, text="", source="none")
    import pytesseract  # type: ignore[import-untyped,import-not-found,unused-ignore]
    from PIL import Image

    texts: list[str] = []
    for image in getattr(page, "images", []):
        picture = Image.open(io.BytesIO(image.data))
        texts.append(pytesseract.image_to_string(picture).strip())
    text = "\n".join(t for t in texts if t)
    return PageText(number=number, text=text, source="ocr")
