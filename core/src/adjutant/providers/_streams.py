"""Stream framing: Server-Sent Events and NDJSON, with the servers' documented quirks.

SSE: comment lines (``: ping``, ``: OPENROUTER PROCESSING``, ``: keepalive``) are
skipped; events end at a blank line in ``\\n`` or ``\\r\\n`` form; ``data: [DONE]``
ends the stream, and is honoured even without its blank line (llama.cpp) because the
buffer is flushed at EOF; old llama.cpp servers sent errors as ``error: {json}``
lines, which are surfaced as ``{"error": ...}`` data.
"""

from __future__ import annotations

import re
from collections.abc import AsyncGenerator, AsyncIterable

__all__ = ["DONE", "ndjson_lines", "sse_data"]

DONE = "[DONE]"
_NEWLINES = re.compile(r"\r\n|\r")


def _event_data(block: str) -> str | None:
    data: list[str] = []
    for line in block.split("\n"):
        if not line or line.startswith(":"):
            continue
        field, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if field == "data":
            data.append(value)
        elif field == "error":  # pre-2025 llama.cpp: `error: {json}` instead of data
            data.append(f'{{"error": {value}}}')
    return "\n".join(data) if data else None


async def sse_data(chunks: AsyncIterable[bytes]) -> AsyncGenerator[str, None]:
    """The ``data`` payload of each event, up to (not including) ``[DONE]``."""
    buffer = ""
    pending_cr = False
    async for chunk in chunks:
        text = chunk.decode("utf-8", errors="replace")
        if pending_cr:
            text = "\r" + text
        pending_cr = text.endswith("\r")  # a \r\n split across reads
        if pending_cr:
            text = text[:-1]
        buffer += _NEWLINES.sub("\n", text)
        while "\n\n" in buffer:
            block, buffer = buffer.split("\n\n", 1)
            data = _event_data(block)
            if data is None:
                continue
            if data.strip() == DONE:
                async for _ in chunks:  # drain: the server closes right after [DONE]
                    pass
                return
            yield data
    data = _event_data(buffer.strip("\n"))
    if data is not None and data.strip() != DONE:
        yield data


async def ndjson_lines(chunks: AsyncIterable[bytes]) -> AsyncGenerator[str, None]:
    """Each non-empty line of a newline-delimited JSON stream (the last one too)."""
    buffer = b""
    async for chunk in chunks:
        buffer += chunk
        while b"\n" in buffer:
            line, buffer = buffer.split(b"\n", 1)
            if line.strip():
                yield line.decode("utf-8", errors="replace")
    if buffer.strip():
        yield buffer.decode("utf-8", errors="replace")
