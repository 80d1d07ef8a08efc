"""The action log's records: one tagged msgspec Struct per kind, with a schema version.

The log, ``replay``, bug bundles and frontends (the web dock) read and write the same
shapes. On the wire a record is one JSON object whose first fields are ``kind`` (the
tag), ``time`` (Unix seconds), ``run_id`` and ``v`` (the schema version, `VERSION`),
then its own fields in the order declared here: a step's records start with ``step``
and ``tool`` (log stores index runs from that head). Records written before versions
existed have no ``v`` and read as version 1.

Writers build the record where it happens, as its Struct, and hand it to
`ActionLog.record` (or ``defer``): ``log.record(AttemptRecord(run_id=..., attempt=1,
...))``. Its own fields are required unless they have a default, so the type checker
catches a missing or misspelt one; ``time`` is when the record was built.

Plugins record kinds of their own the same way: a subclass of `ActionRecord` with
its own ``tag`` (prefixed with the plugin's name), defined in the plugin. It is
written with the same head and read back as `ExtensionRecord` (this schema does not
list it).
"""

from __future__ import annotations

from time import time as _now
from typing import Any, Literal

import msgspec

__all__ = [
    "RECORDS",
    "VERSION",
    "ActionRecord",
    "ApprovalRecord",
    "ArtifactRecord",
    "AssignmentRecord",
    "AttemptRecord",
    "BudgetRefusedRecord",
    "BundleRecord",
    "CageChangedRecord",
    "CagePinnedRecord",
    "CageTrustedRecord",
    "ChangedRecord",
    "ContextErrorRecord",
    "ContextRecord",
    "DecisionRecord",
    "DenyAllRecord",
    "DirectCallRecord",
    "EventRecord",
    "ExtensionRecord",
    "GrantIgnoredRecord",
    "GrantRecord",
    "ModeChangeIgnoredRecord",
    "ModeRecord",
    "OutcomeRecord",
    "PlanRecord",
    "PresetRecord",
    "PresetUnavailableRecord",
    "PromptRecord",
    "ProviderWarningRecord",
    "RefusedCallRecord",
    "RefusedRecord",
    "ReplayRecord",
    "ResponseRecord",
    "ResultRecord",
    "RevokeRecord",
    "RouteRecord",
    "ToolCallRecord",
    "UsageRecord",
    "encode_record",
    "read_record",
]

#: The version of this schema, written with every record as ``v``.
VERSION = 1

_Args = dict[str, Any]


class ActionRecord(msgspec.Struct, frozen=True, kw_only=True, tag_field="kind",
                   forbid_unknown_fields=True):
    """What every record has. ``time`` is when it was built (Unix seconds).

    A subclass is declared ``frozen=True, kw_only=True, tag="<kind>"``: msgspec does
    not inherit ``kw_only``, and without it the subclass's fields would come before
    the head (`encode_record` refuses such a class)."""

    time: float = msgspec.field(default_factory=_now)
    run_id: str | None = None
    v: int = VERSION


# -- a run ---------------------------------------------------------------------------------


class PromptRecord(ActionRecord, frozen=True, kw_only=True, tag="prompt"):
    """A user request starts a run."""

    text: str
    mode: str
    thread_id: str | None = None
    include: list[str] = msgspec.field(default_factory=list)


class DirectCallRecord(ActionRecord, frozen=True, kw_only=True, tag="direct_call"):
    """A tool call asked for directly (an MCP client, an app) starts a run."""

    caller: str
    tool: str
    args: _Args
    mode: str


class ReplayRecord(ActionRecord, frozen=True, kw_only=True, tag="replay"):
    """A logged step run (or dry-run) again starts a run."""

    source_run: str
    source_step: int
    dry_run: bool
    tool: str
    args: _Args


class AssignmentRecord(ActionRecord, frozen=True, kw_only=True, tag="assignment"):
    assigned_by: str
    text: str


class ContextRecord(ActionRecord, frozen=True, kw_only=True, tag="context"):
    bulletin: dict[str, Any]


class ContextErrorRecord(ActionRecord, frozen=True, kw_only=True, tag="context_error"):
    provider: str
    error: str


class AttemptRecord(ActionRecord, frozen=True, kw_only=True, tag="attempt"):
    """One ask of the model: whether its reply was a valid plan or response."""

    attempt: int
    ok: bool
    simplified: bool
    menu: list[str]
    error: str | None = None
    output: str | None = None


class ProviderWarningRecord(ActionRecord, frozen=True, kw_only=True, tag="provider_warning"):
    text: str


class ResponseRecord(ActionRecord, frozen=True, kw_only=True, tag="response"):
    text: str


class PlanRecord(ActionRecord, frozen=True, kw_only=True, tag="plan"):
    steps: list[dict[str, Any]]
    artifact: str


class OutcomeRecord(ActionRecord, frozen=True, kw_only=True, tag="outcome"):
    """How a run ended (``interrupted``: closed at a later start, after a kill)."""

    status: str
    error: str | None = None
    interrupted: dict[str, Any] | None = None


# -- a step --------------------------------------------------------------------------------


class DecisionRecord(ActionRecord, frozen=True, kw_only=True, tag="decision"):
    """The pipeline's verdict on a step, at the plan preview or right before it runs."""

    step: int
    tool: str
    stage: str
    args: _Args
    decision: str
    policy: str | None
    reason: str
    verdicts: list[dict[str, Any]]
    preview: str | None = None
    digest: str | None = None
    #: propose-only: what the pipeline would decide one mode up.
    would: dict[str, Any] | None = None


class ApprovalRecord(ActionRecord, frozen=True, kw_only=True, tag="approval"):
    """The user's answer: to a plan (``answer``) or a step (``action``, bound to
    ``digest``; ``unanswered`` says why nobody could answer; ``grant``: given in
    advance by that standing grant)."""

    scope: Literal["plan", "step"]
    step: int | None = None
    answer: str | None = None
    action: str | None = None
    digest: str | None = None
    args: _Args | None = None
    unanswered: str | None = None
    #: the standing grant that gave this yes in advance (``file:...``, ``tool:...``)
    grant: str | None = None


class ToolCallRecord(ActionRecord, frozen=True, kw_only=True, tag="tool_call"):
    """A step's intent, durable before it runs."""

    step: int
    tool: str
    args: _Args
    cwd: str
    digest: str | None
    approved: bool


class ResultRecord(ActionRecord, frozen=True, kw_only=True, tag="result"):
    """What a step did (an `ExecutionResult`)."""

    step: int
    tool: str
    args: _Args
    status: str
    dry_run_diff: str | None = None
    stdout: str = ""
    stderr: str = ""
    duration_ms: int = 0
    artifacts: list[str] = msgspec.field(default_factory=list)


class ArtifactRecord(ActionRecord, frozen=True, kw_only=True, tag="artifact"):
    step: int
    path: str | None
    error: str | None = None


class ChangedRecord(ActionRecord, frozen=True, kw_only=True, tag="changed"):
    """A step's effect changed between its approval and its execution."""

    step: int
    tool: str
    was: str | None
    now: str | None


class RefusedRecord(ActionRecord, frozen=True, kw_only=True, tag="refused"):
    """The runtime check refused a step right before it ran."""

    step: int
    tool: str
    reason: str
    policy: str | None


# -- the operator's state ------------------------------------------------------------------


class ModeRecord(ActionRecord, frozen=True, kw_only=True, tag="mode"):
    mode: str
    previous: str | None
    why: str


class ModeChangeIgnoredRecord(ActionRecord, frozen=True, kw_only=True, tag="mode_change_ignored"):
    requested: str
    channel: str


class GrantRecord(ActionRecord, frozen=True, kw_only=True, tag="grant"):
    grant: str
    seconds: float


class GrantIgnoredRecord(ActionRecord, frozen=True, kw_only=True, tag="grant_ignored"):
    grant: str
    channel: str


class RevokeRecord(ActionRecord, frozen=True, kw_only=True, tag="revoke"):
    grant: str


class PresetRecord(ActionRecord, frozen=True, kw_only=True, tag="preset"):
    name: str


class PresetUnavailableRecord(ActionRecord, frozen=True, kw_only=True, tag="preset_unavailable"):
    name: str
    error: str


class RouteRecord(ActionRecord, frozen=True, kw_only=True, tag="route"):
    """Which preset the router sent a request to, and why. ``asked``: the user was
    asked before it left the machine; ``declined``: a stronger preset was wanted and
    the user (or a frontend that cannot ask) said no, so it stayed on ``preset``."""

    preset: str
    model: str
    reason: str
    escalated: bool = False
    asked: bool = False
    declined: str | None = None
    #: "Try a stronger model": the run whose answer this one retries (one ask, several
    #: answers).
    ask_id: str | None = None


class UsageRecord(ActionRecord, frozen=True, kw_only=True, tag="usage"):
    """What one model call spent (``estimated``: the backend reported no token counts,
    so they are counted at four characters a token)."""

    preset: str
    prompt_tokens: int
    completion_tokens: int
    cost: float = 0.0
    metered: bool = False
    estimated: bool = False


class BudgetRefusedRecord(ActionRecord, frozen=True, kw_only=True, tag="budget_refused"):
    """A model call refused before it ran: over a cap, with the figures."""

    preset: str
    reason: str


class EventRecord(ActionRecord, frozen=True, kw_only=True, tag="event"):
    """A system event (`Copilot.notice`): context, never an instruction."""

    source: str
    text: str


class BundleRecord(ActionRecord, frozen=True, kw_only=True, tag="bundle"):
    path: str


class CagePinnedRecord(ActionRecord, frozen=True, kw_only=True, tag="cage_pinned"):
    path: str
    target: str
    device: int
    inode: int


class CageTrustedRecord(ActionRecord, frozen=True, kw_only=True, tag="cage_trusted"):
    path: str
    target: str
    device: int
    inode: int
    was: dict[str, Any] | None = None


class CageChangedRecord(ActionRecord, frozen=True, kw_only=True, tag="cage_changed"):
    path: str
    error: str
    input: dict[str, Any]


class DenyAllRecord(ActionRecord, frozen=True, kw_only=True, tag="deny_all"):
    """The user denied everything from a requester (an MCP client's session)."""

    caller: str
    scope: str


class RefusedCallRecord(ActionRecord, frozen=True, kw_only=True, tag="refused_call"):
    caller: str
    tool: str
    args: _Args
    why: str


class ExtensionRecord(msgspec.Struct, frozen=True, kw_only=True):
    """A record of a kind this schema does not list (a plugin's own), or one an older
    schema wrote that this one does not read, as written."""

    kind: str
    time: float
    run_id: str | None = None
    fields: dict[str, Any] = msgspec.field(default_factory=dict)


_encoder = msgspec.json.Encoder()


def encode_record(record: ActionRecord) -> bytes:
    """``record`` as written: ``kind``, ``time``, ``run_id`` and ``v`` first, then its
    own fields in their declared order. Checked by reading it back as its own type, so
    a field of the wrong type (which only the type checker would otherwise catch)
    raises `msgspec.ValidationError` here, before it is in the log (a bug, which the
    tests catch); a few microseconds a record."""
    cls = type(record)
    if cls not in _HEADED:
        if cls.__struct_fields__[:3] != ("time", "run_id", "v"):
            raise TypeError(f"{cls.__qualname__} must be declared with kw_only=True, so "
                            "that its fields follow kind, time, run_id and v")
        _HEADED.add(cls)
    body = _encoder.encode(record)
    msgspec.json.decode(body, type=cls)
    return body


_HEADED: set[type[ActionRecord]] = set()  # record classes whose head is checked


def read_record(body: dict[str, Any]) -> ActionRecord | ExtensionRecord:
    """A decoded record as its kind's Struct (an `ExtensionRecord` for other kinds)."""
    cls = RECORDS.get(str(body.get("kind")))
    if cls is not None and "time" in body:
        try:
            return msgspec.convert({k: v for k, v in body.items() if k != "kind"}, cls)
        except msgspec.ValidationError:  # written by an older schema: kept as it is
            pass
    rest = {k: v for k, v in body.items() if k not in ("kind", "time", "run_id")}
    return ExtensionRecord(kind=str(body.get("kind")), time=float(body.get("time") or 0),
                           run_id=body.get("run_id"), fields=rest)


#: Every record kind of this schema, by its ``kind``.
RECORDS: dict[str, type[ActionRecord]] = {
    cls.__struct_config__.tag: cls  # type: ignore[misc]
    for cls in (PromptRecord, DirectCallRecord, ReplayRecord, AssignmentRecord,
                ContextRecord, ContextErrorRecord, AttemptRecord, ProviderWarningRecord,
                ResponseRecord, PlanRecord, OutcomeRecord, DecisionRecord, ApprovalRecord,
                ToolCallRecord, ResultRecord, ArtifactRecord, ChangedRecord, RefusedRecord,
                ModeRecord, ModeChangeIgnoredRecord, GrantRecord, GrantIgnoredRecord,
                RevokeRecord, PresetRecord, PresetUnavailableRecord, EventRecord,
                BundleRecord, CagePinnedRecord, CageTrustedRecord, CageChangedRecord,
                DenyAllRecord, RefusedCallRecord, RouteRecord, UsageRecord,
                BudgetRefusedRecord)
}
