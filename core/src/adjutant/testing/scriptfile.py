"""A scripted provider for driving the real ``adjutant`` command in a subprocess
(a pseudo-terminal test, a demo): its replies come from a JSON file.

``ADJUTANT_SCRIPT`` names a JSON list; each request takes the next entry: a string
(the reply), or ``{"text": ..., "delay": seconds between words}``. The position is
kept in ``<file>.pos`` so consecutive commands continue the script. Register it with
a distribution whose entry point (group ``adjutant``) names this module, and a
profile whose ``model.provider`` is ``script-file``.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator, Callable
from typing import Any

import anyio

from adjutant_hookspecs import CompletionChunk, CompletionRequest, ProviderError, hookimpl

__all__ = ["ScriptFileProvider", "register_providers"]


class ScriptFileProvider:
    name = "script-file"

    async def complete(self, request: CompletionRequest) -> AsyncIterator[CompletionChunk]:
        entry: Any = _next_reply(os.environ.get("ADJUTANT_SCRIPT", ""))
        text, delay = (entry, 0.0) if isinstance(entry, str) else (entry["text"],
                                                                    entry.get("delay", 0.0))
        words = text.split(" ")
        for index, word in enumerate(words):
            if delay:
                await anyio.sleep(delay)
            yield CompletionChunk(text=word + (" " if index < len(words) - 1 else ""))
        yield CompletionChunk(finish_reason="stop")

    async def aclose(self) -> None:
        pass


def _next_reply(path: str) -> Any:
    """The next entry of the script (tiny files: read synchronously)."""
    try:
        with open(path) as handle:
            script = json.load(handle)
        position = 0
        if os.path.exists(f"{path}.pos"):
            with open(f"{path}.pos") as handle:
                position = int(handle.read())
    except (OSError, ValueError) as exc:
        raise ProviderError(f"cannot read the script {path!r}: {exc}",
                            hint="set ADJUTANT_SCRIPT to a JSON list of replies") from exc
    if position >= len(script):
        raise ProviderError("the script has no reply left", hint="add replies")
    with open(f"{path}.pos", "w") as handle:
        handle.write(str(position + 1))
    return script[position]


@hookimpl
def register_providers(register: Callable[[Any], None]) -> None:
    register(ScriptFileProvider())
