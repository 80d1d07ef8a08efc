"""Typed, immutable events and the envelope the bus wraps them in.

Every event class maps one-to-one onto an AG-UI event type: the standard ones
carry the AG-UI type as their tag (``RUN_STARTED``), and plugin events subclass
`CustomEvent` with a dotted lower-case name as their tag (``copilot.plan``),
which AG-UI sees as ``{"type": "CUSTOM", "name": "copilot.plan", "value": {...}}``.
Fields are snake_case in Python and camelCase on the wire, as in AG-UI.

The bus adds what the producer cannot know (``seq``, ``run_seq``, timestamp)
in an `Envelope`; the event itself stays the producer's immutable value.
"""

from __future__ import annotations

import re
from typing import Any, Literal

import msgspec

__all__ = [
    "AG_UI_EVENTS",
    "CONSENT_EVENTS",
    "SPEECH_EVENTS",
    "ActivityDelta",
    "ActivitySnapshot",
    "ApprovalDecided",
    "ApprovalRequested",
    "BusGap",
    "Custom",
    "CustomEvent",
    "Envelope",
    "Event",
    "Interrupt",
    "MessagesSnapshot",
    "PatchOp",
    "Raw",
    "ReasoningEncryptedValue",
    "ReasoningEnd",
    "ReasoningMessageChunk",
    "ReasoningMessageContent",
    "ReasoningMessageEnd",
    "ReasoningMessageStart",
    "ReasoningStart",
    "ResumeEntry",
    "RunError",
    "RunFinished",
    "RunStarted",
    "SpeechProgress",
    "SpeechStarted",
    "SpeechStopped",
    "StateDelta",
    "StateSnapshot",
    "StepDenied",
    "StepFinished",
    "StepStarted",
    "SubagentError",
    "SubagentFinished",
    "SubagentStarted",
    "TextMessageChunk",
    "TextMessageContent",
    "TextMessageEnd",
    "TextMessageStart",
    "ToolCallArgs",
    "ToolCallChunk",
    "ToolCallEnd",
    "ToolCallResult",
    "ToolCallStart",
    "event_name",
    "is_custom",
]

_UNSET: Any = msgspec.UNSET
CUSTOM_NAME = re.compile(r"^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$")


class Event(msgspec.Struct, frozen=True, kw_only=True, tag_field="type", rename="camel"):
    """Base of every event. Subclass `CustomEvent` for a plugin's own events."""

    #: Extra data for consumers; AG-UI's optional ``metadata``.
    metadata: dict[str, Any] | None = None


class CustomEvent(Event, frozen=True):
    """Base of plugin-declared events; give the subclass ``tag="plugin.thing"``.

    Example::

        class PlanProposed(CustomEvent, frozen=True, tag="copilot.plan"):
            steps: tuple[ToolCall, ...]
    """


def event_name(cls: type[Event]) -> str:
    """The event's type name: the AG-UI type, or the dotted name of a custom event."""
    tag = cls.__struct_config__.tag
    if not isinstance(tag, str):
        raise TypeError(f"{cls.__qualname__} has no explicit tag; declare it with tag=...")
    return tag


def is_custom(cls: type[Event]) -> bool:
    """True for plugin events, which AG-UI carries as ``CUSTOM``."""
    return issubclass(cls, CustomEvent)


class PatchOp(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """One RFC 6902 JSON Patch operation."""

    op: Literal["add", "remove", "replace", "move", "copy", "test"]
    path: str
    value: Any = _UNSET
    from_: str | None = msgspec.field(default=None, name="from")


# -- run lifecycle ---------------------------------------------------------------------


class RunStarted(Event, frozen=True, tag="RUN_STARTED"):
    parent_run_id: str | None = None
    input: dict[str, Any] | None = None


class RunFinished(Event, frozen=True, tag="RUN_FINISHED"):
    result: Any = None
    #: ``{"type": "success"}``, ``{"type": "interrupt", "interrupts": [...]}`` or cancelled.
    outcome: dict[str, Any] | None = None


class RunError(Event, frozen=True, tag="RUN_ERROR"):
    message: str
    code: str | None = None


class StepStarted(Event, frozen=True, tag="STEP_STARTED"):
    step_name: str


class StepFinished(Event, frozen=True, tag="STEP_FINISHED"):
    step_name: str


# -- text messages ---------------------------------------------------------------------

Role = Literal["developer", "system", "assistant", "user"]


class TextMessageStart(Event, frozen=True, tag="TEXT_MESSAGE_START"):
    message_id: str
    role: Role = "assistant"


class TextMessageContent(Event, frozen=True, tag="TEXT_MESSAGE_CONTENT"):
    message_id: str
    delta: str

    def __post_init__(self) -> None:
        if not self.delta:
            raise ValueError("TEXT_MESSAGE_CONTENT needs a non-empty delta")


class TextMessageEnd(Event, frozen=True, tag="TEXT_MESSAGE_END"):
    message_id: str


class TextMessageChunk(Event, frozen=True, tag="TEXT_MESSAGE_CHUNK"):
    message_id: str | None = None
    role: Role | None = None
    delta: str | None = None


# -- tool calls ------------------------------------------------------------------------


class ToolCallStart(Event, frozen=True, tag="TOOL_CALL_START"):
    tool_call_id: str
    tool_call_name: str
    parent_message_id: str | None = None


class ToolCallArgs(Event, frozen=True, tag="TOOL_CALL_ARGS"):
    tool_call_id: str
    #: A fragment of the arguments' JSON text.
    delta: str


class ToolCallEnd(Event, frozen=True, tag="TOOL_CALL_END"):
    tool_call_id: str


class ToolCallChunk(Event, frozen=True, tag="TOOL_CALL_CHUNK"):
    tool_call_id: str | None = None
    tool_call_name: str | None = None
    parent_message_id: str | None = None
    delta: str | None = None


class ToolCallResult(Event, frozen=True, tag="TOOL_CALL_RESULT"):
    message_id: str
    tool_call_id: str
    content: str
    role: Literal["tool"] | None = None


# -- state, messages, activity, pass-through -------------------------------------------


class StateSnapshot(Event, frozen=True, tag="STATE_SNAPSHOT"):
    snapshot: Any


class StateDelta(Event, frozen=True, tag="STATE_DELTA"):
    delta: tuple[PatchOp, ...]


class MessagesSnapshot(Event, frozen=True, tag="MESSAGES_SNAPSHOT"):
    messages: tuple[dict[str, Any], ...]


class ActivitySnapshot(Event, frozen=True, tag="ACTIVITY_SNAPSHOT"):
    message_id: str
    activity_type: str
    content: dict[str, Any]
    replace: bool = True


class ActivityDelta(Event, frozen=True, tag="ACTIVITY_DELTA"):
    message_id: str
    activity_type: str
    patch: tuple[PatchOp, ...]


class Raw(Event, frozen=True, tag="RAW"):
    event: Any
    source: str | None = None


class Custom(Event, frozen=True, tag="CUSTOM"):
    """An untyped custom event from outside; prefer a declared `CustomEvent`."""

    name: str
    value: Any


# -- reasoning -------------------------------------------------------------------------


class ReasoningStart(Event, frozen=True, tag="REASONING_START"):
    message_id: str


class ReasoningMessageStart(Event, frozen=True, tag="REASONING_MESSAGE_START"):
    message_id: str
    role: Literal["reasoning"] = "reasoning"


class ReasoningMessageContent(Event, frozen=True, tag="REASONING_MESSAGE_CONTENT"):
    message_id: str
    delta: str


class ReasoningMessageEnd(Event, frozen=True, tag="REASONING_MESSAGE_END"):
    message_id: str


class ReasoningMessageChunk(Event, frozen=True, tag="REASONING_MESSAGE_CHUNK"):
    message_id: str | None = None
    delta: str | None = None


class ReasoningEnd(Event, frozen=True, tag="REASONING_END"):
    message_id: str


class ReasoningEncryptedValue(Event, frozen=True, tag="REASONING_ENCRYPTED_VALUE"):
    subtype: Literal["tool-call", "message"]
    entity_id: str
    encrypted_value: str


# -- sub-agents ------------------------------------------------------------------------


class SubagentStarted(Event, frozen=True, tag="SUBAGENT_STARTED"):
    subagent_run_id: str
    name: str
    description: str | None = None
    parent_subagent_run_id: str | None = None
    parent_tool_call_id: str | None = None
    parent_message_id: str | None = None


class SubagentFinished(Event, frozen=True, tag="SUBAGENT_FINISHED"):
    subagent_run_id: str
    result: Any = None
    outcome: dict[str, Any] | None = None


class SubagentError(Event, frozen=True, tag="SUBAGENT_ERROR"):
    subagent_run_id: str
    message: str
    code: str | None = None


# -- the bus's own marker --------------------------------------------------------------


class BusGap(CustomEvent, frozen=True, tag="adjutant.bus.gap"):
    """This subscriber fell behind: events ``first_missed..last_missed`` are gone
    from its view. Re-sync from a state snapshot, then carry on."""

    first_missed: int
    last_missed: int


# -- consent: approvals and refusals ---------------------------------------------------


class Interrupt(msgspec.Struct, frozen=True, kw_only=True, rename="camel", omit_defaults=True):
    """AG-UI's ``Interrupt``: something a run waits for from outside (here, consent).

    A client that speaks AG-UI interrupts ends its view of the run with
    ``RUN_FINISHED {"outcome": {"type": "interrupt", "interrupts": [<this>]}}`` and
    answers with a `ResumeEntry` carrying the same ``id``."""

    id: str
    #: ``tool_approval`` (one step) or ``plan_approval`` (a whole plan).
    reason: str
    #: A one-line question for whoever answers.
    message: str | None = None
    #: The step's tool call id (``<run>-step-<n>``), for a step approval.
    tool_call_id: str | None = None
    #: JSON Schema of the answer (see `ApprovalRequested`).
    response_schema: dict[str, Any] | None = None
    #: What the user must see to decide: the confirmation packet(s).
    metadata: dict[str, Any] | None = None


class ResumeEntry(msgspec.Struct, frozen=True, kw_only=True, rename="camel",
                  omit_defaults=True):
    """AG-UI's ``ResumeEntry``: the answer to one `Interrupt`.

    ``status`` is ``resolved`` when someone answered, ``cancelled`` when nobody could
    (no terminal, no approver); ``payload`` is the answer itself."""

    interrupt_id: str
    status: Literal["resolved", "cancelled"]
    payload: Any = None
    metadata: dict[str, Any] | None = None


class ApprovalRequested(CustomEvent, frozen=True, omit_defaults=True,
                        tag="adjutant.approval.requested"):
    """The operator is waiting for consent: the plan (``scope="plan"``) or one step.

    ``interrupt`` is an AG-UI `Interrupt`; its ``metadata`` holds what the user must
    see (``{"packet": ...}`` for a step: tool, args, preview, level, reasons, details;
    ``{"steps": [...]}`` for a plan), and ``response_schema`` the shape of the answer.
    ``requester`` names who asked for the run when it is not the user (an MCP client).
    """

    scope: Literal["plan", "step"]
    interrupt: Interrupt
    step: int | None = None
    requester: str | None = None


class ApprovalDecided(CustomEvent, frozen=True, omit_defaults=True,
                      tag="adjutant.approval.decided"):
    """Consent was given or refused: ``resume`` answers the `ApprovalRequested`
    interrupt with the same id.

    ``decision``: for a plan ``execute``, ``step`` or ``deny``; for a step ``grant``,
    ``deny`` or ``edit``. ``unanswered`` says why a deny came from nobody (then
    ``resume.status`` is ``cancelled``)."""

    scope: Literal["plan", "step"]
    decision: str
    resume: ResumeEntry
    step: int | None = None
    unanswered: str | None = None


class StepDenied(CustomEvent, frozen=True, omit_defaults=True, tag="adjutant.step.denied"):
    """A step was not run: refused by a policy (``by="policy"``, ``policy`` names it),
    by the tool itself, its dry-run refusing the call (``by="tool"``, ``policy`` is the
    tool's name), by the user (``by="user"``), or because nobody could approve it
    (``by="nobody"``).

    A step refused when it is checked has no ``TOOL_CALL_*`` events; one refused by the
    runtime check right before execution (``policy="runtime-check"``) has them, with
    the refusal as its ``TOOL_CALL_RESULT``."""

    step: int
    tool: str
    tool_call_id: str
    by: Literal["policy", "tool", "user", "nobody"]
    reason: str
    policy: str | None = None


# -- speech out (declared by the plugin that speaks, adjutant-tts) ---------------------


class SpeechStarted(CustomEvent, frozen=True, omit_defaults=True, tag="speech.started"):
    """An utterance began: ``speech_id`` names it in the progress and stop events.

    ``text`` is what is being said (the transcript a frontend may copy), ``engine`` and
    ``voice`` who says it, ``output`` where it goes (``device`` or ``file``, with
    ``path``), ``source`` why (``answer``, ``plan-summary``, ``user``); ``run_id`` of the
    envelope is the run whose answer it is, if any."""

    speech_id: str
    text: str
    engine: str
    output: str
    source: str = "user"
    voice: str | None = None
    path: str | None = None


class SpeechProgress(CustomEvent, frozen=True, omit_defaults=True, tag="speech.progress"):
    """Where an utterance is: ``state`` ``playing`` or ``paused``, ``played_ms`` of audio
    out so far, ``synthesized_ms`` ready (it grows while the engine streams)."""

    speech_id: str
    state: str
    played_ms: int
    synthesized_ms: int


class SpeechStopped(CustomEvent, frozen=True, omit_defaults=True, tag="speech.stopped"):
    """An utterance ended. ``reason``: ``finished``, ``stopped`` (by the user),
    ``interrupted`` (a newer answer took over), ``mode`` (the operator went off),
    ``error`` (``error`` says what, and the operator carries on without speech)."""

    speech_id: str
    reason: str
    played_ms: int = 0
    error: str | None = None


#: The speech events, declared by the plugin that publishes them.
SPEECH_EVENTS: tuple[type[Event], ...] = (SpeechStarted, SpeechProgress, SpeechStopped)


#: The kernel's own consent events (declared by the built-in plugin, sent as ``CUSTOM``).
CONSENT_EVENTS: tuple[type[Event], ...] = (ApprovalRequested, ApprovalDecided, StepDenied)


#: Every standard event class, one per AG-UI event type.
AG_UI_EVENTS: tuple[type[Event], ...] = (
    RunStarted, RunFinished, RunError, StepStarted, StepFinished,
    TextMessageStart, TextMessageContent, TextMessageEnd, TextMessageChunk,
    ToolCallStart, ToolCallArgs, ToolCallEnd, ToolCallChunk, ToolCallResult,
    StateSnapshot, StateDelta, MessagesSnapshot, ActivitySnapshot, ActivityDelta,
    Raw, Custom,
    ReasoningStart, ReasoningMessageStart, ReasoningMessageContent, ReasoningMessageEnd,
    ReasoningMessageChunk, ReasoningEnd, ReasoningEncryptedValue,
    SubagentStarted, SubagentFinished, SubagentError,
)  # fmt: skip


class Envelope(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """An event as the bus delivers it.

    ``seq`` is global and strictly increasing per bus; ``run_seq`` counts within
    ``run_id`` (0 when the event belongs to no run). ``timestamp`` is Unix ms.
    """

    seq: int
    run_seq: int
    run_id: str | None
    thread_id: str | None
    timestamp: int
    event: Event
