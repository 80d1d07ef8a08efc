"""`Harness`: a fresh kernel with only the plugins a test names, and the operator on
it, driven the way a client drives it (`Harness.run` returns a `RunResult`)."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

from adjutant_hookspecs import ExecutionResult, Tool, ToolCall, ToolContext, hookimpl

from ..kernel._kernel import Kernel
from ..kernel._settings import ModelPreset, Profile
from ..operator import Copilot, RunOutcome
from ..operator._consent import Approver
from ..scripted import MemoryKeyValueStore, MemoryLogStore, ScriptedProvider
from ._recorders import EventRecorder, HookRecorder
from ._runs import RecordingApprover, RunResult

__all__ = ["Harness"]


class _HarnessPlugin:
    """What every harness kernel gets: the scripted provider and in-memory stores."""

    name = "harness"

    def __init__(self, harness: Harness) -> None:
        self.harness = harness

    @hookimpl
    def register_providers(self, register: Callable[[Any], None]) -> None:
        register(self.harness.provider)

    @hookimpl
    def register_stores(self, register: Callable[[Any], None]) -> None:
        register(self.harness.kv)
        register(self.harness.log)


class Harness:
    """A kernel with only the plugins a test names, and the operator on it, driven as a
    client drives it::

        async with Harness(my_plugin, mode="execute-with-confirmation",
                           approver=ScriptedApprover(steps=["grant"])) as h:
            run = await h.run("tidy my notes", reply=plan(("notes.write", {...})))
            assert run.status == "executed" and run.tools == ["notes.write"]
            assert run.asked[0].preview.startswith("create") and "approval" in run.kinds

        async with Harness(my_plugin) as h:  # a tool by itself, no operator
            result = await h.dry_run("my.tool", path="a.txt")

    Installed plugins never leak in (entry points are not read), the environment is
    empty except ``ADJUTANT_HOME`` (a temporary directory unless ``home`` is given),
    ``ADJUTANT_WORKSPACE`` (`workspace`, a temporary project directory) and
    ``XDG_CACHE_HOME``, and a broken plugin raises `PluginLoadError` unless
    ``strict=False``.

    :param plugins: Plugin modules or objects to load, in order.
    :param mode: The operator's mode, set on the user's channel at start (default: as
        stored, so propose-only on a fresh home).
    :param approver: Who answers consent questions (default: `Approver`, which refuses
        every question as unanswerable, as a frontend with no way to ask does).
        Replaceable between runs (``h.approver = ...``).
    :param script: Replies the scripted model gives, in order (`ScriptedProvider`).
    :param provider: The provider to register (default: a `ScriptedProvider`).
    :param profile: The profile (default: one using the scripted provider).
    :param env: Extra environment variables for the kernel.
    :param kv: / ``log``: in-memory stores to reuse (a restart keeps its state).
    """

    def __init__(
        self,
        *plugins: object,
        mode: str | None = None,
        approver: Approver | None = None,
        script: Sequence[Any] = (),
        provider: ScriptedProvider | None = None,
        profile: Profile | None = None,
        env: Mapping[str, str] | None = None,
        home: str | Path | None = None,
        strict: bool = True,
        bus_capacity: int = 1 << 16,
        kv: MemoryKeyValueStore | None = None,
        log: MemoryLogStore | None = None,
    ) -> None:
        self._plugins = plugins
        self.provider = provider or ScriptedProvider()
        if script:  # a real provider (the benchmarks pass one) has no script to queue
            if not hasattr(self.provider, "queue"):
                raise TypeError(f"script= needs a ScriptedProvider, not "
                                f"{type(self.provider).__name__}")
            self.provider.queue(*script)
        self._mode = mode
        self._approver = RecordingApprover(approver or Approver())
        self._copilot: Copilot | None = None
        #: Pass the same stores to a second harness to test a restart.
        self.kv = kv or MemoryKeyValueStore()
        self.log = log or MemoryLogStore()
        self.hooks = HookRecorder()
        self._profile = profile or Profile(model=ModelPreset(provider=self.provider.name))
        self._env = dict(env or {})
        self._home = Path(home) if home is not None else None
        self._strict = strict
        self._bus_capacity = bus_capacity
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        self._kernel: Kernel | None = None
        self._events: EventRecorder | None = None

    @property
    def kernel(self) -> Kernel:
        if self._kernel is None:
            raise RuntimeError("the harness is not started; use `async with Harness(...)`")
        return self._kernel

    @property
    def events(self) -> EventRecorder:
        """Events published since the kernel started."""
        if self._events is None:
            raise RuntimeError("the harness is not started")
        return self._events

    @property
    def workspace(self) -> Path:
        """The active project directory: cwd and cage of tool calls (outside the data
        home, which policies protect)."""
        if self._tmp is None:
            raise RuntimeError("the harness is not started")
        return Path(self._tmp.name) / "workspace"

    async def __aenter__(self) -> Harness:
        self._tmp = tempfile.TemporaryDirectory(prefix="adjutant-harness-")
        root = Path(self._tmp.name)
        if self._home is None:
            self._home = root / "home"
        (root / "workspace").mkdir()
        env = {"ADJUTANT_HOME": str(self._home), "ADJUTANT_WORKSPACE": str(root / "workspace"),
               "XDG_CACHE_HOME": str(root / "cache"), **self._env}
        kernel = Kernel(
            plugins=[_HarnessPlugin(self), *self._plugins],
            load_installed=False,
            env=env,
            home=self._home,
            profile=self._profile,
            strict=self._strict,
            bus_capacity=self._bus_capacity,
        )
        kernel.observe_hooks(self.hooks)
        try:
            kernel.load()
        except BaseException:
            self._cleanup()
            raise
        self._home.mkdir(parents=True, exist_ok=True)
        self._kernel = kernel
        self._events = EventRecorder(kernel.bus)
        try:
            await kernel.__aenter__()
        except BaseException:
            self._cleanup()
            raise
        if self._mode is not None:
            try:
                await self.set_mode(self._mode)
            except BaseException as exc:
                await kernel.__aexit__(type(exc), exc, exc.__traceback__)
                self._cleanup()
                raise
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        try:
            await self.kernel.__aexit__(exc_type, exc, tb)
        finally:
            self._cleanup()

    def _cleanup(self) -> None:
        self._copilot = None
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

    # -- the operator, as a client drives it --------------------------------------------

    @property
    def copilot(self) -> Copilot:
        """The operator (one per harness, made on first use) on the workspace."""
        if self._copilot is None:
            self._copilot = self.operator()
        return self._copilot

    def operator(self, **options: Any) -> Copilot:
        """Another operator on the same kernel and stores (a second frontend, or one with
        other `Copilot` options such as ``clock`` or ``max_steps``), answered by the
        harness's approver."""
        options.setdefault("cwd", str(self.workspace))
        return Copilot(self.kernel, approver=self._approver, **options)

    @property
    def approver(self) -> Approver:
        return self._approver.inner

    @approver.setter
    def approver(self, approver: Approver) -> None:
        self._approver.inner = approver

    async def set_mode(self, mode: str) -> None:
        """Switch the mode as the user does (the user's channel; persisted)."""
        await self.copilot.set_mode(mode, channel="user")

    async def run(self, request: str, *, reply: Any = None, include: Sequence[str] = (),
                  thread_id: str | None = None) -> RunResult:
        """One request through the whole operator. ``reply``: queue this one scripted
        model reply first (a `Plan`, a `Response`, text)."""
        if reply is not None:
            self.provider.queue(reply)
        return await self.observe(self.copilot.handle(request, include=include,
                                                      thread_id=thread_id))

    async def call(self, tool: str, /, caller: str = "harness", **args: Any) -> RunResult:
        """One tool call asked for directly (as an MCP client does): a one-step run
        through the whole pipeline, under the mode."""
        return await self.observe(self.copilot.call(ToolCall(tool=tool, args=args),
                                                    caller=caller))

    async def observe(self, run: Awaitable[RunOutcome]) -> RunResult:
        """Await any run of the operator (``handle``, ``call``, ``assign``, ``replay``,
        on any operator of this harness) and gather what it published, logged and
        asked."""
        start = self.kernel.bus.last_seq
        outcome = await run
        history = [e for e in self.kernel.bus.history(after_seq=start)
                   if e.run_id == outcome.run_id]
        if history and history[0].run_seq != 1:
            raise AssertionError("the run's first events left the bus's replay window; "
                                 "give the Harness a larger bus_capacity")
        records = await self.copilot.log.records(run_id=outcome.run_id)
        return RunResult(
            outcome=outcome, envelopes=tuple(history), records=tuple(records),
            asked=tuple(p for p in self._approver.steps if p.run_id == outcome.run_id),
            plans=tuple(p for p in self._approver.plans if p.run_id == outcome.run_id))

    async def records(self, kind: str | None = None) -> list[dict[str, Any]]:
        """The whole action log (every run's records and those of no run: ``mode``,
        ``grant``, ``event``...), of one kind if given."""
        return [r for r in await self.copilot.log.records()
                if kind is None or r["kind"] == kind]

    # -- conveniences -------------------------------------------------------------------

    def tool(self, name: str) -> Tool:
        return self.kernel.tools[name]

    def context(self) -> ToolContext:
        """A tool context whose cwd and only cage is `workspace`."""
        return ToolContext(cwd=str(self.workspace), cages=(str(self.workspace),),
                           home=self.kernel.env.get("HOME") or os.path.expanduser("~"),
                           data_home=str(self.kernel.home))

    async def dry_run(self, tool: str, /, **args: Any) -> ExecutionResult:
        """Call the tool's dry-run directly (no operator, no safety pipeline)."""
        return await self.tool(tool).dry_run(ToolCall(tool=tool, args=args), self.context())

    async def execute(self, tool: str, /, **args: Any) -> ExecutionResult:
        """Call the tool's execute directly (no operator, no safety pipeline)."""
        call = ToolCall(tool=tool, args=args, dry_run=False)
        return await self.tool(tool).execute(call, self.context())
