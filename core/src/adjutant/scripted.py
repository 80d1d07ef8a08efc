"""Stand-ins that need no model, no disk and no person: a provider that replays a
script, an approver that answers from one, and in-memory stores.

For an app's demo or dry mode, a tutorial, or a test: nothing here imports pytest
(`adjutant.testing`, the pytest plugin, re-exports these names). Load them into a
kernel like any plugin::

    from adjutant import Copilot, Kernel
    from adjutant.scripted import ScriptedApprover, ScriptedProvider, plugin, profile
    from adjutant_hookspecs import Plan, ToolCall

    provider = ScriptedProvider(Plan(steps=(ToolCall(tool="fs.read",
                                                     args={"path": "README.md"}),)))
    async with Kernel(plugins=[plugin(provider)], profile=profile()) as kernel:
        copilot = Copilot(kernel, approver=ScriptedApprover(steps=["grant"]))

`plugin` registers the provider and the stores (an in-memory action log included:
nothing is kept after the process ends, so this is not for real work).
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any, Literal

import anyio

from adjutant_hookspecs import (
    CompletionChunk,
    CompletionRequest,
    Plan,
    Response,
    Usage,
    encode,
    hookimpl,
)

if TYPE_CHECKING:
    from .kernel._settings import Profile

from .operator._consent import Approver, PlanDecision, PlanPacket, StepDecision, StepPacket

__all__ = [
    "MODEL",
    "PROVIDER",
    "MemoryKeyValueStore",
    "MemoryLogStore",
    "ScriptExhaustedError",
    "ScriptedApprover",
    "ScriptedProvider",
    "plugin",
    "profile",
]

#: The provider name `ScriptedProvider` registers by default, and the model name its
#: profile asks for (any name is answered from the script).
PROVIDER = "scripted"
MODEL = "script"

# -- the provider ----------------------------------------------------------------------

_Reply = str | Plan | Response | list[str] | BaseException
_PIECES = re.compile(r"\s*\S+|\s+")


class ScriptExhaustedError(AssertionError):
    """The code under test asked for more completions than the test queued."""


class ScriptedProvider:
    """Streams queued replies in order, one per request.

    A reply is a string (streamed in word-sized chunks), a `Plan` or `Response`
    (streamed as its JSON), a list of strings (streamed as exactly those chunks)
    or an exception (raised when the request arrives). ``requests`` holds every
    `CompletionRequest` received, so a test can check what the model was sent.

    :param delay: Seconds to sleep before each chunk: makes interruption testable.
    :param usage: What the last chunk of every reply reports (tokens, cost), as a
        backend that counts does; None: nothing, as the embedded model.
    """

    def __init__(self, *replies: _Reply, name: str = PROVIDER, delay: float = 0.0,
                 usage: Usage | None = None) -> None:
        self.name = name
        self.delay = delay
        self.usage = usage
        self.requests: list[CompletionRequest] = []
        self.closed = False
        self._replies: deque[_Reply] = deque()
        self.queue(*replies)

    def queue(self, *replies: _Reply) -> None:
        """Add replies to the end of the script."""
        self._replies.extend(replies)

    @property
    def pending(self) -> int:
        """Replies queued and not yet used."""
        return len(self._replies)

    async def complete(self, request: CompletionRequest) -> AsyncIterator[CompletionChunk]:
        self.requests.append(request)
        if not self._replies:
            raise ScriptExhaustedError(
                f"ScriptedProvider got request #{len(self.requests)} but no reply is queued "
                f"(prompt starts {request.prompt[:60]!r}); queue one with provider.queue(...)"
            )
        reply = self._replies.popleft()
        if isinstance(reply, BaseException):
            raise reply
        for chunk in _chunks(reply):
            if self.delay:
                await anyio.sleep(self.delay)
            else:
                await anyio.lowlevel.checkpoint()
            yield CompletionChunk(text=chunk)
        yield CompletionChunk(finish_reason="stop", usage=self.usage)

    async def aclose(self) -> None:
        self.closed = True


def _chunks(reply: Any) -> list[str]:
    if isinstance(reply, list):
        return [str(piece) for piece in reply]
    text = encode(reply).decode() if isinstance(reply, Plan | Response) else str(reply)
    return _PIECES.findall(text) or [""]


# -- the approver ----------------------------------------------------------------------


class ScriptedApprover(Approver):
    """``plan`` answers every plan approval; ``steps`` answers step approvals in order
    (``"grant"``, ``"deny"`` or a `StepDecision`), then ``default``; ``escalate``
    answers whether a request may go to a remote preset (`Escalation`, kept in
    ``escalations``)."""

    def __init__(self, plan: Literal["execute", "step", "deny"] = "step",
                 steps: list[Any] | None = None,
                 default: Literal["grant", "deny"] = "deny", escalate: bool = False) -> None:
        self.plan = plan
        self.escalate = escalate
        self.escalations: list[Any] = []
        self._steps: deque[Any] = deque(steps or [])
        self.default = default
        self.plans: list[PlanPacket] = []
        self.asked: list[StepPacket] = []

    async def approve_plan(self, packet: PlanPacket) -> PlanDecision:
        self.plans.append(packet)
        return PlanDecision(self.plan)

    async def approve_step(self, packet: StepPacket) -> StepDecision:
        self.asked.append(packet)
        answer: Any = self._steps.popleft() if self._steps else self.default
        return answer if isinstance(answer, StepDecision) else StepDecision(action=answer)

    async def approve_escalation(self, question: Any) -> bool:
        self.escalations.append(question)
        return self.escalate


# -- the stores ------------------------------------------------------------------------


class MemoryKeyValueStore:
    """A dict behind the `KeyValueStore` protocol; ``scan`` yields keys in order."""

    kind: Literal["kv"] = "kv"

    #: Lost when the process ends: chosen only when no durable store is registered.
    durable = False

    def __init__(self, name: str = "memory") -> None:
        self.name = name
        self.data: dict[str, bytes] = {}

    async def get(self, key: str) -> bytes | None:
        return self.data.get(key)

    async def put(self, key: str, value: bytes) -> None:
        if not isinstance(value, bytes | bytearray | memoryview):
            raise TypeError(f"value must be bytes, got {type(value).__name__}")
        self.data[key] = bytes(value)

    async def delete(self, key: str) -> bool:
        return self.data.pop(key, None) is not None

    async def scan(self, prefix: str = "") -> AsyncIterator[tuple[str, bytes]]:
        for key in sorted(k for k in self.data if k.startswith(prefix)):
            yield key, self.data[key]

    async def aclose(self) -> None:
        pass


class MemoryLogStore:
    """A list behind the `LogStore` protocol: append-only, records kept as given."""

    kind: Literal["log"] = "log"

    #: Lost when the process ends: chosen only when no durable store is registered.
    durable = False

    def __init__(self, name: str = "memory") -> None:
        self.name = name
        self.records: list[bytes] = []

    async def append(self, record: bytes) -> int:
        if not isinstance(record, bytes | bytearray | memoryview):
            raise TypeError(f"record must be bytes, got {type(record).__name__}")
        self.records.append(bytes(record))
        return len(self.records) - 1

    async def append_many(self, records: list[bytes]) -> list[int]:
        """Several records at once (all land or none), as durable stores do in one commit."""
        bodies = []
        for record in records:
            if not isinstance(record, bytes | bytearray | memoryview):
                raise TypeError(f"record must be bytes, got {type(record).__name__}")
            bodies.append(bytes(record))
        start = len(self.records)
        self.records.extend(bodies)
        return list(range(start, len(self.records)))

    async def read(self, start: int = 0) -> AsyncIterator[tuple[int, bytes]]:
        for index in range(max(start, 0), len(self.records)):
            yield index, self.records[index]

    async def aclose(self) -> None:
        pass


# -- all of it as one plugin -----------------------------------------------------------


class _Plugin:
    name = "scripted"

    def __init__(self, provider: Any, stores: tuple[Any, ...]) -> None:
        self.provider, self.stores = provider, stores

    @hookimpl
    def register_providers(self, register: Callable[[Any], None]) -> None:
        if self.provider is not None:
            register(self.provider)

    @hookimpl
    def register_stores(self, register: Callable[[Any], None]) -> None:
        for store in self.stores:
            register(store)


def plugin(provider: ScriptedProvider | None = None, *,
           kv: MemoryKeyValueStore | None = None,
           log: MemoryLogStore | None = None, stores: bool = True) -> object:
    """A plugin object registering ``provider`` (if given) and in-memory stores (new
    ones unless given; none with ``stores=False``, beside a real log store such as
    adjutant-lmdb): pass it to ``Kernel(plugins=[...])``. Its plugin name is
    ``scripted``; `profile` selects the provider by its ``name`` (``scripted``)."""
    if not stores:
        return _Plugin(provider, ())
    return _Plugin(provider, (kv or MemoryKeyValueStore(), log or MemoryLogStore()))


def profile(provider: str = PROVIDER) -> Profile:
    """A `Profile` whose model is the scripted provider named ``provider``:
    ``Kernel(plugins=[plugin(ScriptedProvider(...))], profile=scripted.profile())``."""
    from .kernel._settings import ModelPreset, Profile

    return Profile(model=ModelPreset(provider=provider, model=MODEL))

