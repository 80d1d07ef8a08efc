"""Data contracts that cross a boundary.

Field names are fixed and stay that way on the wire. Every contract is a
frozen msgspec Struct that rejects unknown fields, so a decode is strict and an
error names the exact path (``Expected `int`, got `str` - at `$.steps[0].args```).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, TypeVar

import msgspec

__all__ = [
    "ContextBulletin",
    "ContractError",
    "ExecutionResult",
    "GitState",
    "Plan",
    "Reply",
    "Response",
    "ToolCall",
    "ToolDeclaration",
    "ToolSafety",
    "convert",
    "decode",
    "encode",
    "is_write",
    "to_builtins",
]

_Struct = msgspec.Struct
_common: dict[str, Any] = {"frozen": True, "forbid_unknown_fields": True, "kw_only": True}

#: What a tool may do to the world, from least to most dangerous.
Level = Literal["read", "write", "destructive"]
Status = Literal["ok", "error", "denied", "cancelled", "dry_run"]


class ContractError(ValueError):
    """A payload does not match its contract; the message names the path."""


class ToolSafety(_Struct, **_common):
    """The safety declaration of a tool: what it may touch and how dangerous it is.

    ``level`` is the one that matters: ``read`` (no effect: runs without a question
    from confirm mode up), ``write`` (changes something the user can inspect and undo:
    asked in every mode by the write-gate) or ``destructive`` (deletes, overwrites or
    stops something that cannot be brought back: asked, and shown as high risk).
    ``writes`` says the same as a yes/no (true for
    ``write`` and ``destructive``); the two must agree, which is checked."""

    writes: bool = False
    #: Path globs the tool may touch; empty means "only the active cages".
    allowed_paths: tuple[str, ...] = ()
    #: Path globs the tool must never touch, on top of the policy's own list.
    forbid_patterns: tuple[str, ...] = ()
    level: Level = "read"
    network: bool = False

    def __post_init__(self) -> None:
        if self.writes and self.level == "read":
            raise ValueError("safety.level is 'read' but safety.writes is true")
        if self.level != "read" and not self.writes:
            raise ValueError(f"safety.level is {self.level!r} but safety.writes is false")


class ToolDeclaration(_Struct, **_common):
    """A tool's public interface: name, JSON schema of its arguments, safety."""

    name: str
    version: str
    description: str
    args_schema: dict[str, Any]
    safety: ToolSafety = ToolSafety()
    supports_dry_run: bool = True
    #: Example calls, each an object of arguments; used in prompts and docs.
    examples: tuple[dict[str, Any], ...] = ()
    #: A call in plain words, for questions and history: a template over the arguments,
    #: ``"Append to {path}"``; a ``[...]`` part shows only when each field in it is
    #: given (``"Search for {pattern}[ in {paths}]"``). A dry-run's own `summary` wins.
    summary: str = ""


def is_write(declaration: ToolDeclaration) -> bool:
    """Whether a tool changes something (the write gate's and the kernel's test)."""
    return declaration.safety.writes or declaration.safety.level != "read"


class ToolCall(_Struct, **_common):
    """One step of a plan: which tool, with which arguments, and why."""

    tool: str
    args: dict[str, Any] = msgspec.field(default_factory=dict)
    dry_run: bool = True
    explain: str = ""


class ExecutionResult(_Struct, **_common):
    """What running (or dry-running) one tool call did."""

    tool: str
    args: dict[str, Any]
    status: Status
    #: The exact effect preview (file diff, argv, refs); approvals bind to its hash.
    dry_run_diff: str | None = None
    stdout: str = ""
    stderr: str = ""
    duration_ms: int = 0
    #: Paths of files the step produced (under the run's artifact directory).
    artifacts: tuple[str, ...] = ()
    #: The call in plain words, as only running it can say (``"Append 1 line to
    #: notes.md"``); set by a dry-run, shown in the question before the details.
    summary: str = ""


class GitState(_Struct, **_common):
    """The repository part of a context bulletin."""

    root: str
    branch: str | None = None
    head: str | None = None
    dirty: bool = False
    changed: tuple[str, ...] = ()
    #: Why git could not be read here (a named pipe among its files, a repository
    #: reaching outside the cage, a timeout): said, not silently left out.
    unavailable: str | None = None


class ContextBulletin(_Struct, **_common):
    """What the operator knows about the user's situation; shown before it is used."""

    cwd: str
    git: GitState | None = None
    focus: str | None = None
    selected_files: tuple[str, ...] = ()
    recent_shell: tuple[str, ...] = ()
    logs: tuple[str, ...] = ()
    #: The clipboard's text (off unless the profile switches its provider on).
    clipboard: str | None = None
    #: Project metadata: name, version, language, build files found in the cwd.
    project: dict[str, Any] | None = None
    #: What memory retrieved for the request (working memory, project passages):
    #: ``text`` is what the prompt carries, labelled untrusted; ``sources`` the passages.
    memory: dict[str, Any] | None = None


class Plan(_Struct, tag_field="type", tag="plan", **_common):
    """``{"type": "plan", "steps": [...]}``: tool calls proposed for approval."""

    steps: tuple[ToolCall, ...]


class Response(_Struct, tag_field="type", tag="response", **_common):
    """``{"type": "response", "text": "..."}``: a plain answer, nothing to run."""

    text: str


#: What a provider's structured output decodes to.
Reply = Plan | Response

T = TypeVar("T")
_encoder = msgspec.json.Encoder()


def decode(data: bytes | str, type: type[T]) -> T:
    """Strictly decode JSON into a contract; raise `ContractError` naming the path."""
    try:
        return msgspec.json.decode(data, type=type, strict=True)
    except (msgspec.ValidationError, msgspec.DecodeError) as exc:
        raise ContractError(str(exc)) from None


def convert(obj: Mapping[str, Any], type: type[T]) -> T:
    """Strictly convert already-parsed data (a dict) into a contract."""
    try:
        return msgspec.convert(obj, type=type, strict=True)
    except msgspec.ValidationError as exc:
        raise ContractError(str(exc)) from None


def encode(obj: Any) -> bytes:
    """Encode a contract (or plain data) as compact JSON."""
    return _encoder.encode(obj)


def to_builtins(obj: Any) -> Any:
    """A contract as plain dicts and lists, wire field names kept."""
    return msgspec.to_builtins(obj)
