"""The kernel's public face, as plugins and the operator see it: a Protocol, so that
``kernel: Kernel`` is checked against what a plugin uses, and the kernel itself stays
free to change inside (`adjutant.Kernel` satisfies it)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from ._contracts import ToolCall, ToolDeclaration
from ._events import Envelope, Event
from ._protocols import (
    Check,
    Command,
    ContextProvider,
    Frontend,
    Policy,
    Provider,
    Tool,
    Verdict,
)

if TYPE_CHECKING:  # pathlib pulls in urllib and ipaddress: plugin load stays cheap
    from pathlib import Path

__all__ = ["EventPublisher", "Kernel", "Registered"]

T_co = TypeVar("T_co", covariant=True)


class Registered(Protocol[T_co]):
    """Name → registered object, with the plugin that registered each."""

    def __getitem__(self, name: str, /) -> T_co: ...
    def get(self, name: str, /) -> T_co | None: ...
    def __contains__(self, name: object, /) -> bool: ...
    def __iter__(self) -> Iterator[str]: ...
    def __len__(self) -> int: ...
    def items(self) -> Iterator[tuple[str, T_co]]: ...
    def values(self) -> Iterator[T_co]: ...
    def owner(self, name: str, /) -> str:
        """The name of the plugin that registered ``name``."""
        ...


class EventPublisher(Protocol):
    """The event bus, as producers use it."""

    def publish(self, event: Event, *, run_id: str | None = None,
                thread_id: str | None = None) -> Envelope: ...


class Kernel(Protocol):
    """What a plugin (or the operator) may rely on of the kernel it was loaded by."""

    #: The loaded profile (`adjutant.Profile`); the operator switches presets by setting it.
    profile: Any

    @property
    def env(self) -> Mapping[str, str]:
        """The environment the kernel was started with (tests give their own)."""
        ...

    @property
    def home(self) -> Path:
        """The data home (``$ADJUTANT_HOME``)."""
        ...

    @property
    def bus(self) -> EventPublisher: ...
    @property
    def tools(self) -> Registered[Tool]: ...
    @property
    def providers(self) -> Registered[Provider]: ...
    @property
    def context_providers(self) -> Registered[ContextProvider]: ...
    @property
    def policies(self) -> Registered[Policy]: ...
    @property
    def stores(self) -> Registered[Any]: ...
    @property
    def frontends(self) -> Registered[Frontend]: ...
    @property
    def commands(self) -> Registered[Command]: ...
    @property
    def checks(self) -> Registered[Check]: ...

    @property
    def plugins(self) -> Sequence[Any]:
        """Every plugin seen (`adjutant.PluginInfo`: name, status, version, error)."""
        ...

    def implementers(self, hook: str) -> list[str]:
        """The plugins implementing ``hook``."""
        ...

    def plugin_name(self, plugin: object) -> str: ...

    def mount_tools(self, plugin: str, prefix: str, tools: Iterable[Tool]) -> dict[str, str]:
        """Register tools a plugin found at run time (MCP servers) under ``prefix``."""
        ...

    def pre_tool_use(self, call: ToolCall, declaration: ToolDeclaration,
                     mode: str) -> list[Verdict]: ...

    def confirmation_details(self, call: ToolCall, declaration: ToolDeclaration,
                             preview: Any, cwd: str) -> dict[str, Any]: ...
