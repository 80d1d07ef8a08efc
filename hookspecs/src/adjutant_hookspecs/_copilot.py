"""The live-recording copilot's analysis capability: a recording's latest stretch of
audio and the conversation's running summary in, a structured understanding out.

A `CopilotAnalyzer` implements ``copilot_analyze`` for the providers it ``supports``:
natively, for a model that takes audio, or through a pipeline (speech-to-text, then a
text model). Where no registered analyzer supports the active provider, analysis is not
supported (`CopilotUnsupported`) and the agent does not start.

What a recording says is data: an analyzer puts it in its prompt as quoted material
and returns fields, never instructions the operator would act on.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import msgspec

if TYPE_CHECKING:
    from ._kernel import Kernel
    from ._protocols import Provider

__all__ = ["CopilotAnalyzer", "CopilotConcept", "CopilotCycleResult", "CopilotQuestion",
           "CopilotRequest", "CopilotUnsupported", "TranscriptSegment"]

_frozen: dict[str, Any] = {"frozen": True, "kw_only": True}


class TranscriptSegment(msgspec.Struct, **_frozen):
    """Words heard between ``start_s`` and ``end_s`` (seconds from the audio's start)."""

    start_s: float
    end_s: float
    text: str


class CopilotQuestion(msgspec.Struct, **_frozen):
    question: str
    reason: str = ""


class CopilotConcept(msgspec.Struct, **_frozen):
    term: str
    context: str = ""


class CopilotCycleResult(msgspec.Struct, **_frozen):
    """One cycle's analysis (the design's ``CoPilotCycleResult``), plus the transcript
    it was made from where there was one (an analyzer that hears audio natively may
    leave it empty; the items' evidence is then the whole stretch of audio)."""

    new_content: str = ""
    updated_summary: str = ""
    key_points: tuple[str, ...] = ()
    decisions: tuple[str, ...] = ()
    action_items: tuple[str, ...] = ()
    open_questions: tuple[str, ...] = ()
    suggested_questions: tuple[CopilotQuestion, ...] = ()
    key_concepts: tuple[CopilotConcept, ...] = ()
    transcript: tuple[TranscriptSegment, ...] = ()
    #: The prompt and the model's raw response, for the agent log (never audio).
    prompt: str = ""
    response: str = ""
    #: Seconds spent hearing the audio and analysing the words (0: not measured apart).
    stt_s: float = 0.0
    analysis_s: float = 0.0


class CopilotRequest(msgspec.Struct, **_frozen):
    """What one cycle asks: ``audio`` a WAV file's bytes (16 kHz mono 16-bit PCM) and
    ``context`` the running summary so far (``""`` on the first cycle). ``heard`` is the
    transcript already made of the start of ``audio`` by earlier cycles (times relative
    to ``audio``, oldest first): an analyzer may hear only what follows its last segment
    and return these as they are (the overlap's words are known). Segments with negative
    times were heard just before ``audio``: context to read (a reply at its start to a
    proposal made before it), never to hear again nor to return. ``vocabulary`` is
    the names and terms heard so far in the recording and its last words before
    ``audio``'s new part: a speech recognizer may take it as its prompt, so a name is
    spelled the same way each cycle (what was said: data, never an instruction)."""

    audio: bytes
    context: str = ""
    heard: tuple[TranscriptSegment, ...] = ()
    vocabulary: str = ""


class CopilotUnsupported(Exception):
    """No analyzer can run on this provider (the capability's default answer)."""

    def __init__(self, provider: str) -> None:
        super().__init__(f"Co-Pilot analysis is not supported by the provider {provider!r}")
        self.provider = provider


@runtime_checkable
class CopilotAnalyzer(Protocol):
    """Implements ``copilot_analyze`` for some providers.

    ``native`` is True when the analyzer hands the model the audio itself (it is then
    preferred over a speech-to-text pipeline for the providers it supports). A remote
    analyzer sends audio off the machine only with the consent its plugin asks for.
    Failures raise `ProviderError` (or `SpeechError`); cancelling the caller stops the
    work.
    """

    name: str
    native: bool

    def supports(self, provider: Provider) -> bool:
        """Whether this analyzer can analyse with ``provider``."""
        ...

    async def copilot_analyze(self, kernel: Kernel, provider: Provider,
                              request: CopilotRequest) -> CopilotCycleResult:
        """Analyse ``request.audio`` with ``request.context`` as the conversation so far."""
        ...
