"""Events on the bus, so a dock can show a listening indicator and the transcript."""

from __future__ import annotations

from adjutant_hookspecs import CustomEvent

__all__ = ["EVENTS", "Heard", "HeardNothingEvent", "Listening", "RemoteConsent"]


class Listening(CustomEvent, frozen=True, tag="stt.listening"):
    """The microphone (or a recording in its place) is open."""

    source: str


class Heard(CustomEvent, frozen=True, tag="stt.heard"):
    """A transcript; ``planned`` is False when it went in as context only (listen-only)."""

    text: str
    mode: str
    planned: bool
    duration_s: float
    elapsed_s: float
    #: The recognizer that heard it (``whisper``: on this machine).
    engine: str = "whisper"


class HeardNothingEvent(CustomEvent, frozen=True, tag="stt.heard_nothing"):
    """The utterance held no speech, or could not be recorded or transcribed."""

    reason: str


class RemoteConsent(CustomEvent, frozen=True, tag="stt.remote_consent"):
    """The user's answer to sending a recording off the machine (never the audio)."""

    engine: str
    host: str
    model: str
    given: bool


EVENTS = (Listening, Heard, HeardNothingEvent, RemoteConsent)
