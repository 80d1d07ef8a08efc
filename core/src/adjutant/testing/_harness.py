"""`Harness`: a fresh kernel with only the plugins a test names."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from types import TracebackType
from typing import Any

from adjutant_hookspecs import ExecutionResult, Tool, ToolCall, ToolContext, hookimpl

from .._kernel import Kernel
from .._settings import ModelPreset, Profile
from ..scripted import MemoryKeyValueStore, MemoryLogStore, ScriptedProvider
from ._recorders import EventRecorder, HookRecorder

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
    """Build and start a kernel for one test::

        async with Harness(my_plugin) as h:
            result = await h.dry_run("my.tool", path="a.txt")

    Installed plugins never leak in (entry points are not read), the environment is
    empty except ``ADJUTANT_HOME`` (a temporary directory unless ``home`` is given),
    ``ADJUTANT_WORKSPACE`` (`workspace`, a temporary project directory) and
    ``XDG_CACHE_HOME``, and a broken plugin raises `PluginLoadError` unless
    ``strict=False``.

    :param plugins: Plugin modules or objects to load, in order.
    :param provider: The provider to register (default: an empty `ScriptedProvider`).
    :param profile: The profile (default: one using the scripted provider).
    :param env: Extra environment variables for the kernel.
    :param kv: / ``log``: in-memory stores to reuse (a restart keeps its state).
    """

    def __init__(
        self,
        *plugins: object,
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
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

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
