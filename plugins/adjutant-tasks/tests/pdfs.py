"""Real PDFs made for the tests: one with a text layer (written by hand: a page per
text, Helvetica), one scanned (a picture of text, no text layer: PIL's PDF writer)."""

from __future__ import annotations

from pathlib import Path

FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"


def _escape(line: str) -> str:
    return line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def text_pdf(path: Path, pages: list[str]) -> Path:
    """A PDF whose pages carry ``pages`` as real text (72 characters a line)."""
    objects: list[bytes] = []
    count = len(pages)
    kids = " ".join(f"{3 + 2 * i} 0 R" for i in range(count))
    objects.append(b"<< /Type /Catalog /Pages 2 0 R >>")
    objects.append(f"<< /Type /Pages /Kids [{kids}] /Count {count} >>".encode())
    font_obj = 3 + 2 * count
    for i, text in enumerate(pages):
        words, lines, line = text.split(), [], ""
        for word in words:
            if len(line) + len(word) + 1 > 72:
                lines.append(line)
                line = word
            else:
                line = f"{line} {word}".strip()
        lines.append(line)
        body = "BT /F1 11 Tf 14 TL 50 780 Td " + " ".join(
            f"({_escape(ln)}) '" for ln in lines) + " ET"
        stream = body.encode("latin-1")
        objects.append(f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources "
                       f"<< /Font << /F1 {font_obj} 0 R >> >> /Contents {4 + 2 * i} 0 R >>"
                       .encode())
        objects.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream +
                       b"\nendstream")
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, obj in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + obj + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % off for off in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1, xref)
    path.write_bytes(bytes(out))
    return path


def scanned_pdf(path: Path, lines: list[str]) -> Path:
    """A one-page PDF holding only a picture of ``lines`` (what a scanner makes)."""
    from PIL import Image, ImageDraw, ImageFont

    image = Image.new("RGB", (1240, 1754), "white")
    draw = ImageDraw.Draw(image)
    font = ImageFont.truetype(FONT, 44)
    for n, line in enumerate(lines):
        draw.text((100, 150 + n * 80), line, fill="black", font=font)
    image.save(path, "PDF", resolution=150.0)
    return path
