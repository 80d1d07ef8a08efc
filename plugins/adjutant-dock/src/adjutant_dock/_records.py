"""The dock's own action-log records (kinds the kernel's schema does not list: read
back as `adjutant_hookspecs.records.ExtensionRecord`)."""

from __future__ import annotations

from typing import Any

from adjutant_hookspecs.records import ActionRecord

__all__ = ["DockAnswerRecord", "DockCopilotDismissRecord", "DockSettingsRecord",
           "DockTaskRecord", "DockVoiceConsentRecord"]


class DockAnswerRecord(ActionRecord, frozen=True, kw_only=True, tag="dock_answer"):
    """An answer to an open interrupt, durable before the operator acts on it."""

    interrupt: str
    scope: str
    #: the digest of the packet answered (the preview the user saw).
    packet: str
    client_session: str
    action: str
    #: ``edit``: the new arguments.
    args: dict[str, Any] | None = None
    #: a scoped allow sent with the answer (offered by that question), granted after
    #: this record is written: the grant and its seconds
    grant: str | None = None
    seconds: float | None = None


class DockVoiceConsentRecord(ActionRecord, frozen=True, kw_only=True, tag="dock_voice_consent"):
    """The page's answer to sending a recording to a remote speech engine."""

    engine: str
    host: str
    model: str | None
    digest: str
    given: bool


class DockSettingsRecord(ActionRecord, frozen=True, kw_only=True, tag="dock_settings"):
    """A change made in the dock's Settings, written to the profile file (``path``)."""

    profile: str
    path: str
    #: what was changed, as sent (``temperature``, ``cages`` or ``plugins``)
    change: dict[str, Any]


class DockCopilotDismissRecord(ActionRecord, frozen=True, kw_only=True,
                               tag="dock_copilot_dismiss"):
    """A suggested question of a recording's copilot agent dismissed in the dock's
    Co-Pilot panel (``index`` 1-based, as ``adjutant copilot-agent dismiss N``)."""

    session: str
    index: int
    question: str


class DockTaskRecord(ActionRecord, frozen=True, kw_only=True, tag="dock_task"):
    """A change asked in the dock's Tasks view (``cancel``, ``retry``, ``approve``,
    ``deny``), written before it is made; ``digest``: the question the page showed."""

    task_id: str
    action: str
    digest: str | None = None
