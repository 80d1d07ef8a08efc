"""A provider that replays queued replies and remembers what it was asked."""

from __future__ import annotations

import re
from collections import deque
from collections.abc import AsyncIterator
from typing import Any

from adjutant_hookspecs import CompletionChunk, CompletionRequest, Plan, Response, encode

__all__ = ["ScriptExhaustedError", "ScriptedProvider"]

Reply = str | Plan | Response | list[str] | BaseException
_PIECES = re.compile(r"\s*\S+|\s+")


class ScriptExhaustedError(AssertionError):
    """The code under test asked for more completions than the test queued."""


class ScriptedProvider:
    """Streams queued replies in order, one per request.

    A reply is a string (streamed in word-sized chunks), a `Plan` or `Response`
    (streamed as its JSON), a list of strings (streamed as exactly those chunks)
    or an exception (raised when the request arrives). ``requests`` holds every
    `CompletionRequest` received, so a test can check what the model was sent.

    :param delay: Seconds to sleep before each chunk: makes interruption testable.
    """

    def __init__(self, *replies: Reply, name: str = "scripted", delay: float = 0.0) -> None:
        self.name = name
        self.delay = delay
        self.requests: list[CompletionRequest] = []
        self.closed = False
        self._replies: deque[Reply] = deque()
        self.queue(*replies)

    def queue(self, *replies: Reply) -> None:
        """Add replies to the end of the script."""
        self._replies.extend(replies)

    @property
    def pending(self) -> int:
        """Replies queued and not yet used."""
        return len(self._replies)

    async def complete(self, request: CompletionRequest) -> AsyncIterator[CompletionChunk]:
        import anyio

        self.requests.append(request)
        if not self._replies:
            raise ScriptExhaustedError(
                f"ScriptedProvider got request #{len(self.requests)} but no reply is queued "
                f"(prompt starts {request.prompt[:60]!r}); queue one with provider.queue(...)"
            )
        reply = self._replies.popleft()
        if isinstance(reply, BaseException):
            raise reply
        for chunk in _chunks(reply):
            if self.delay:
                await anyio.sleep(self.delay)
            else:
                await anyio.lowlevel.checkpoint()
            yield CompletionChunk(text=chunk)
        yield CompletionChunk(finish_reason="stop")

    async def aclose(self) -> None:
        self.closed = True


def _chunks(reply: Any) -> list[str]:
    if isinstance(reply, list):
        return [str(piece) for piece in reply]
    text = encode(reply).decode() if isinstance(reply, Plan | Response) else str(reply)
    return _PIECES.findall(text) or [""]
