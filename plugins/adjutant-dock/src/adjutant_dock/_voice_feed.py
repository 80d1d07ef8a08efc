"""Voice in the dock, apart from the web: the ambient feed of speech and listening
events (they belong to no run), and what the page needs to draw the mic button.

- `VoiceFeed`: the ``speech.*`` and ``stt.*`` events in order (``seq`` from 1, a
  bounded replay window) and what they add up to now: the utterance being said, the
  recording being heard. ``GET /api/voice/events`` serves it (`_voice`).
- `voice_state`: ``/api/state``'s ``voice``: whether hearing and speaking are
  installed, ``editFirst``, ``maxSeconds``, and ``remote``: where a recording would go
  when the profile's ``listen.engine`` is a recognizer off this machine, with the
  ``digest`` of that destination a yes is bound to.
"""

from __future__ import annotations

import collections
import hashlib
import json
from typing import TYPE_CHECKING, Any

import anyio

from ._peers import consent_question, declares, recognizer
from ._wire import envelope

if TYPE_CHECKING:
    from adjutant_hookspecs import Kernel

__all__ = ["MAX_SECONDS", "STT_MISSING", "VoiceFeed", "is_voice", "remote_engine",
           "voice_state"]

#: The longest recording the dock hears.
MAX_SECONDS = 60
#: Event names the ambient stream carries (they belong to no run).
PREFIXES = ("speech.", "stt.")
STT_MISSING = ("speech in needs the adjutant-stt plugin: pip install adjutant-stt "
               "(then restart the dock)")


def is_voice(name: str) -> bool:
    return name.startswith(PREFIXES)


class VoiceFeed:
    """The ambient events in order (``seq`` from 1, a bounded replay window), and what
    they add up to now: the utterance being said, the recording being heard."""

    def __init__(self, window: int = 512) -> None:
        self.events: collections.deque[dict[str, Any]] = collections.deque(maxlen=window)
        self.next_seq = 1
        self.speaking: dict[str, Any] | None = None
        self.hearing: dict[str, Any] | None = None
        self.closed = False
        self._changed = anyio.Event()

    def publish(self, data: dict[str, Any], thread_id: str | None, ms: int) -> None:
        """One bus event (as its AG-UI ``CUSTOM``) into the feed."""
        name, value = data["name"], data.get("value") or {}
        same = self.speaking is not None and self.speaking["speechId"] == value.get("speechId")
        if name == "speech.started":
            self.speaking = {**value, "state": "playing", "playedMs": 0, "synthesizedMs": 0}
        elif name == "speech.progress" and same:
            assert self.speaking is not None
            self.speaking.update({k: value[k] for k in ("state", "playedMs", "synthesizedMs")
                                  if k in value})
        elif name == "speech.stopped" and same:
            self.speaking = None
        elif name == "stt.listening":
            self.hearing = dict(value)
        elif name in ("stt.heard", "stt.heard_nothing"):
            self.hearing = None
        self.events.append(envelope(self.next_seq, "voice", thread_id or "", "", ms, data,
                                    "voice"))
        self.next_seq += 1
        self._wake()

    def snapshot(self, ms: int) -> dict[str, Any]:
        data = {"type": "CUSTOM", "name": "adjutant.dock.voice_snapshot",
                "value": {"speaking": self.speaking, "hearing": self.hearing},
                "timestamp": ms}
        return envelope(self.next_seq - 1, "voice", "", "", ms, data, "voice_snapshot")

    def after(self, seq: int) -> list[dict[str, Any]] | None:
        """The events after ``seq``; None when some have left the window."""
        first = self.events[0]["seq"] if self.events else self.next_seq
        if seq + 1 < first or seq >= self.next_seq:
            return None
        return [e for e in self.events if e["seq"] > seq]

    def close(self) -> None:
        """The dock is stopping: the streams end (so the server need not wait)."""
        self.closed = True
        self._wake()

    async def changed(self) -> None:
        await self._changed.wait()

    def _wake(self) -> None:
        self._changed.set()
        self._changed = anyio.Event()


def remote_engine(kernel: Kernel) -> dict[str, Any] | None:
    """Where a recording would go when the profile's ``listen.engine`` is off this
    machine: ``{engine, host, model, question, digest}`` (``question``: adjutant-stt's
    consent line; ``digest``: SHA-256 of engine, host and model, what a yes is bound
    to). None: it stays on this machine."""
    found = recognizer(kernel)
    if found is None or not found[0].remote:
        return None
    engine, model = found
    where = [engine.name, engine.destination, model or ""]
    return {"engine": engine.name, "host": engine.destination, "model": model,
            "question": consent_question(engine, model),
            "digest": hashlib.sha256(json.dumps(where).encode()).hexdigest()}


def voice_state(kernel: Kernel) -> dict[str, Any]:
    """What the page needs to draw the mic button (and its tooltip), and to ask before
    a recording leaves the machine (``remote``)."""
    hear = declares(kernel, "stt.heard")
    edit_first = False
    if hear:
        from adjutant_stt import listen_settings

        edit_first = listen_settings(kernel).edit_first
    return {"hear": hear, "hearMissing": None if hear else STT_MISSING,
            "speak": declares(kernel, "speech.started"),
            "editFirst": edit_first,
            "maxSeconds": MAX_SECONDS, "remote": remote_engine(kernel) if hear else None}
