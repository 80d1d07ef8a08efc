"""What plugins register: the protocols of registered objects and small value types.

Hooks are synchronous; the objects handed to ``register`` carry the async
methods. The kernel checks each object against its protocol at registration and
names the plugin at fault when it does not fit.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._kernel import Kernel

from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any, Literal, Protocol, get_args, runtime_checkable

import msgspec

from ._commands import Command, lazy
from ._contracts import ExecutionResult, ToolCall, ToolDeclaration

__all__ = [
    "ARG_ROLE",
    "MODES",
    "MODE_LABELS",
    "Check",
    "CheckResult",
    "Command",
    "CompletionChunk",
    "CompletionRequest",
    "ContextProvider",
    "Frontend",
    "KeyValueStore",
    "LogStore",
    "Mode",
    "ModelInfo",
    "Policy",
    "PolicyRequest",
    "Provider",
    "ProviderCapabilities",
    "ProviderError",
    "Tool",
    "ToolContext",
    "Usage",
    "Verdict",
    "lazy",
    "mode_named",
]

_frozen: dict[str, Any] = {"frozen": True, "kw_only": True, "forbid_unknown_fields": True}

#: Schema keyword marking what an argument is, for policies and sandboxes:
#: ``"path"`` (a string), ``"paths"`` (an array of strings), ``"argv"`` (an array: a
#: command and its arguments) or ``"url"``. Example property:
#: ``{"type": "string", "x-adjutant-role": "path"}``.
ARG_ROLE = "x-adjutant-role"

Mode = Literal["off", "listen-only", "propose-only", "execute-with-confirmation", "execute-auto"]
#: The operator's modes, from doing nothing to running steps without asking.
MODES: tuple[Mode, ...] = get_args(Mode)
#: One vocabulary for the modes, used by every frontend: each mode's short name (the
#: button, the chip, ``adjutant mode confirm``) and what it means in one line. The long
#: name is what is stored and logged.
MODE_LABELS: dict[Mode, tuple[str, str]] = {
    "off": ("off", "does nothing: no planning, no microphone"),
    "listen-only": ("listen", "keeps what was said as context; plans nothing"),
    "propose-only": ("propose", "plans and previews every step; nothing runs"),
    "execute-with-confirmation": ("confirm", "reads run; every change waits for your yes"),
    "execute-auto": ("auto", "runs each step the safety rules allow, without asking"),
}


def mode_named(name: str) -> Mode:
    """The mode a short or long name means (``"confirm"`` or
    ``"execute-with-confirmation"``); `ValueError` lists the names."""
    for mode, (short, _) in MODE_LABELS.items():
        if name in (mode, short):
            return mode
    raise ValueError(f"unknown mode {name!r}; one of "
                     + ", ".join(f"{s} ({m})" for m, (s, _) in MODE_LABELS.items()))

Decision = Literal["allow", "ask", "deny", "abstain"]


# -- providers -------------------------------------------------------------------------


class CompletionRequest(msgspec.Struct, **_frozen):
    """What the operator asks a model provider for."""

    prompt: str
    system: str = ""
    model: str | None = None
    #: A GBNF grammar or JSON schema constraining the output, where supported.
    grammar: str | None = None
    json_schema: dict[str, Any] | None = None
    stop: tuple[str, ...] = ()
    temperature: float = 0.2
    max_tokens: int = 512
    #: The context window to ask for (tokens), where the backend takes one per request.
    context_size: int | None = None


class Usage(msgspec.Struct, **_frozen):
    """Token counts a backend reported (None: not reported)."""

    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    #: What the call cost in US dollars, where the backend says (OpenRouter's ``cost``).
    cost: float | None = None


class CompletionChunk(msgspec.Struct, **_frozen):
    """One piece of streamed output; the last one carries ``finish_reason`` (and
    ``usage`` where the backend reports it)."""

    text: str = ""
    finish_reason: Literal["stop", "length", "cancelled", "error"] | None = None
    usage: Usage | None = None
    #: Things the user should know about this answer (e.g. the prompt was truncated).
    warnings: tuple[str, ...] = ()


class ProviderCapabilities(msgspec.Struct, **_frozen):
    """What a provider can do; the planner picks its output constraint from this.

    ``json_schema`` means the backend *claims* to enforce a schema: outputs are
    validated anyway, since several backends silently do not."""

    streaming: bool = True
    #: Accepts a GBNF grammar (`CompletionRequest.grammar`).
    grammar: bool = False
    #: Accepts a JSON schema (`CompletionRequest.json_schema`).
    json_schema: bool = False
    native_tools: bool = False
    audio_input: bool = False
    list_models: bool = False
    #: Can load or switch models through its own mechanism (`Provider.load_model`).
    load_models: bool = False
    #: The context window in tokens, when known.
    context_size: int | None = None
    #: Requests leave this machine (a hosted API): the router asks before it sends one
    #: there on its own, outside the auto mode.
    remote: bool = False


class ModelInfo(msgspec.Struct, **_frozen):
    """One model a provider can serve."""

    name: str
    loaded: bool | None = None
    context_size: int | None = None
    capabilities: tuple[str, ...] = ()


class ProviderError(Exception):
    """A backend failure told the way a user can act on it.

    :param message: What happened (``"Ollama at http://127.0.0.1:11434 refused the
        connection"``).
    :param hint: What to do (``"start it with `ollama serve`"``).
    :param status: The HTTP status, when there was one.
    :param retryable: Whether trying again later may work (429, 503, a dropped stream).
    """

    def __init__(self, message: str, *, hint: str = "", status: int | None = None,
                 retryable: bool = False) -> None:
        super().__init__(f"{message}; {hint}" if hint else message)
        self.message, self.hint, self.status, self.retryable = message, hint, status, retryable


@runtime_checkable
class Provider(Protocol):
    """A model backend (llama.cpp, Ollama, OpenRouter, ...).

    Optional members, used when present: ``capabilities`` (a `ProviderCapabilities`;
    absent means plain streaming text), ``async list_models() -> list[ModelInfo]``
    ``async load_model(name) -> None`` (switch through the backend's own
    mechanism), and ``async prepare(model) -> None`` (get a model ready for a request
    that is coming, changing nothing else: the operator calls it while it gathers the
    request's context; a failure there is left for the request to report). Failures
    raise `ProviderError`.
    """

    name: str

    def complete(self, request: CompletionRequest) -> AsyncIterator[CompletionChunk]:
        """Stream the completion; cancelling the iteration interrupts generation and
        frees the backend (the connection is closed, a stop endpoint called)."""
        ...

    async def aclose(self) -> None: ...


# -- tools -----------------------------------------------------------------------------


class ToolContext(msgspec.Struct, **_frozen):
    """Where a tool call runs: the working directory and the writable cages.

    ``home`` and ``data_home`` anchor the deny rules a tool applies to files it reaches
    by itself (`adjutant.safety.protection.Shield.for_context`).
    """

    cwd: str
    cages: tuple[str, ...] = ()
    run_id: str | None = None
    #: The user's home directory and Adjutant's data directory (always protected).
    home: str = ""
    data_home: str = ""


@runtime_checkable
class Tool(Protocol):
    """A declared command interface with a dry-run and an execution function."""

    declaration: ToolDeclaration

    async def dry_run(self, call: ToolCall, ctx: ToolContext) -> ExecutionResult:
        """Return the exact effect the call would have (``dry_run_diff``), doing nothing."""
        ...

    async def execute(self, call: ToolCall, ctx: ToolContext) -> ExecutionResult: ...


# -- context ---------------------------------------------------------------------------


@runtime_checkable
class ContextProvider(Protocol):
    """Contributes fields of the context bulletin (``git``, ``recent_shell``, ...)."""

    name: str

    async def gather(self, cwd: str) -> Mapping[str, Any]:
        """Return bulletin fields; the kernel merges contributions in plugin order.

        A provider that answers a request (retrieval) may also define
        ``async def gather_for(self, cwd: str, prompt: str, thread_id: str | None)``:
        the operator then calls it instead, with the request, before the bulletin is
        shown and logged."""
        ...


# -- safety ----------------------------------------------------------------------------


class PolicyRequest(msgspec.Struct, **_frozen):
    """What a policy judges: one validated call, its declaration, and the situation.

    Which arguments are paths, commands or URLs is declared in the tool's schema with
    ``"x-adjutant-role"`` (see `ARG_ROLE`); policies judge those, never guess.
    """

    call: ToolCall
    declaration: ToolDeclaration
    mode: Mode
    cwd: str
    #: Directories writes may touch (resolved, absolute), grants included.
    cages: tuple[str, ...] = ()
    #: What the user granted for this session: ``"write"``, ``"network:<tool>"``.
    grants: tuple[str, ...] = ()
    #: Earlier calls of the same run, oldest first (for guardrails).
    history: tuple[ToolCall, ...] = ()
    #: The user's home directory and Adjutant's data directory (always protected).
    home: str = ""
    data_home: str = ""


class Verdict(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A policy's answer: ``Verdict("deny", "rm is not allowed here")``.

    ``decision`` is ``allow``, ``ask``, ``deny`` or ``abstain`` ("no opinion on this
    step": `Verdict.abstain`). Deny beats ask beats allow; abstentions do not count, and
    when no policy has an opinion the step asks, exactly as when no policy is installed.
    ``policy`` names who decided; leave it empty and the kernel fills in the registered
    name. Do not repeat that name in ``reason``: frontends show ``policy: reason``.
    """

    decision: Decision
    reason: str = ""
    policy: str = ""

    def __post_init__(self) -> None:
        if self.decision not in _RANKS:
            raise ValueError(f"Verdict decision must be one of {', '.join(_RANKS)}, "
                             f"got {self.decision!r}")
        if self.decision != "abstain" and not self.reason.strip():
            raise ValueError(f"a {self.decision!r} Verdict needs a reason the user can read")

    @classmethod
    def abstain(cls, reason: str = "no opinion on this step", *, policy: str = "") -> Verdict:
        """No opinion: the step is judged by the other policies (or asks, if none has one).

        Return this for every call your policy does not care about, rather than
        ``allow``: an ``allow`` is an opinion, and it turns off the kernel's "no policy
        has an opinion, so ask" fallback for that step."""
        return cls("abstain", reason, policy)

    @property
    def abstains(self) -> bool:
        return self.decision == "abstain"

    @property
    def rank(self) -> int:
        """-1 for abstain, 0 for allow, 1 for ask, 2 for deny: combine opinions with ``max``."""
        return _RANKS[self.decision]


_RANKS = {"abstain": -1, "allow": 0, "ask": 1, "deny": 2}


@runtime_checkable
class Policy(Protocol):
    """A link of the policy chain (path cages, deny patterns, guardrails...).

    ``evaluate`` sees every step of every run and answers with a `Verdict`:
    ``Verdict.abstain()`` for steps it has no opinion on, ``allow``/``ask``/``deny``
    otherwise. It may be async and slow (resolve paths, read files); an exception, or
    an answer that is not a `Verdict`, counts as a deny naming the policy.

    A Policy or a ``pre_tool_use`` hook? Write a Policy when the judgement needs the
    situation (cwd, cages, grants, the run's history, the mode) or I/O, and when it
    should be tested with `PolicyConformance`. Write a ``pre_tool_use`` hook for a
    quick, synchronous veto or "ask" from the call and declaration alone; it is also
    re-checked right before execution.

    Optional: ``description``, one line saying what the policy enforces, shown by
    ``adjutant status`` and ``adjutant doctor`` (default: the class docstring's first
    line).
    """

    name: str

    async def evaluate(self, request: PolicyRequest) -> Verdict: ...


# -- stores ----------------------------------------------------------------------------


@runtime_checkable
class KeyValueStore(Protocol):
    """Durable key/value storage for settings, mode and session state."""

    name: str
    kind: Literal["kv"]

    async def get(self, key: str) -> bytes | None: ...
    async def put(self, key: str, value: bytes) -> None: ...
    async def delete(self, key: str) -> bool: ...
    def scan(self, prefix: str = "") -> AsyncIterator[tuple[str, bytes]]: ...
    async def aclose(self) -> None: ...


@runtime_checkable
class LogStore(Protocol):
    """Append-only record storage (the action log); records are never edited."""

    name: str
    kind: Literal["log"]

    async def append(self, record: bytes) -> int:
        """Store one record durably and return its index (0, 1, 2, ...).

        A store may also offer ``async append_many(records) -> list[int]``: several
        records in one durable commit, all or none, indexes in order (checked with
        ``hasattr``; a store without it gets one ``append`` per record). The kernel's
        action log writes at barriers only: a step's intent before the step runs, a
        run's outcome before it is reported, and before a person is asked. Each hands
        the store what was queued since the last one, so with ``append_many`` a step
        is one commit (its intent with its decision, and the previous step's result).
        """
        ...

    def read(self, start: int = 0) -> AsyncIterator[tuple[int, bytes]]: ...
    async def aclose(self) -> None: ...


# -- frontends, commands, checks -------------------------------------------------------


@runtime_checkable
class Frontend(Protocol):
    """A way for the user to reach the operator (CLI REPL, web dock, voice)."""

    name: str

    async def serve(self, kernel: Kernel) -> None:
        """Run until cancelled; read events from ``kernel.bus``."""
        ...


class CheckResult(msgspec.Struct, frozen=True, kw_only=True):
    """One environment check's outcome; ``fix`` says what to do when it is not ok."""

    status: Literal["ok", "warn", "fail"]
    message: str
    fix: str = ""


class Check(msgspec.Struct, frozen=True, kw_only=True):
    """An ``adjutant doctor`` check contributed by a plugin."""

    name: str
    run: Callable[[Any], CheckResult]
