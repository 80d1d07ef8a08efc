"""adjutant-stt's own action-log records (kinds the kernel's schema does not list:
read back as `adjutant_hookspecs.records.ExtensionRecord`)."""

from __future__ import annotations

from adjutant_hookspecs.records import ActionRecord

__all__ = ["SpeechConsentRecord", "SpeechSentRecord"]


class SpeechConsentRecord(ActionRecord, frozen=True, kw_only=True, tag="speech_consent"):
    """Consent given or refused to send a recording off this machine."""

    engine: str
    host: str
    model: str | None
    given: bool
    #: who answered (``the terminal``, ``nobody (no terminal)``, ...).
    by: str


class SpeechSentRecord(ActionRecord, frozen=True, kw_only=True, tag="speech_sent"):
    """A recording sent to a remote engine, and how that went."""

    engine: str
    host: str
    model: str | None
    seconds: float
    bytes: int
    outcome: str
