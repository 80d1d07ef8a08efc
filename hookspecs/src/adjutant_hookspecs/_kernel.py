"""The kernel's public face, as plugins and the operator see it: a Protocol, so that
``kernel: Kernel`` is checked against what a plugin uses, and the kernel itself stays
free to change inside (`adjutant.Kernel` satisfies it)."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from ._contracts import ToolCall, ToolDeclaration
from ._copilot import CopilotAnalyzer
from ._embedding import Embedder
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
from ._recall import PlanRecaller
from ._speech import SpeechEngine, SpeechRecognizer
from ._tasks import TaskCapability

if TYPE_CHECKING:  # pathlib pulls in urllib and ipaddress: plugin load stays cheap
    from pathlib import Path

__all__ = ["EventBusView", "EventPublisher", "EventSubscription", "Kernel", "ModelView",
           "ProfileView", "Registered"]

T = TypeVar("T")
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


class EventSubscription(Protocol):
    """One subscriber's cursor over the bus (``async for envelope in subscription``)."""

    @property
    def position(self) -> int:
        """The seq of the last event consumed (resume with ``after_seq=position``)."""
        ...

    def __aiter__(self) -> EventSubscription: ...
    async def __anext__(self) -> Envelope: ...

    async def next_batch(self, limit: int = 1024) -> list[Envelope]:
        """Wait for the next event, then take up to ``limit`` in view at once."""
        ...


class EventBusView(EventPublisher, Protocol):
    """The event bus, as producers and subscribers use it. Each subscriber has its
    own bounded view; one that falls behind gets a ``BusGap`` marker, never a block."""

    @property
    def last_seq(self) -> int: ...

    def subscribe(self, *, after_seq: int | None = None, max_lag: int | None = None,
                  types: Collection[type[Event]] | None = None) -> EventSubscription:
        """A new view of the event sequence: only new events, or a replay after
        ``after_seq``; only ``types`` when given (gap markers always arrive)."""
        ...

    def history(self, *, after_seq: int = 0) -> Iterator[Envelope]:
        """The events still in the replay window after ``after_seq``, oldest first."""
        ...


class ModelView(Protocol):
    """The profile's model preset, as plugins read it."""

    @property
    def provider(self) -> str: ...
    @property
    def model(self) -> str: ...
    @property
    def temperature(self) -> float: ...
    @property
    def grammar(self) -> str | None: ...
    @property
    def stop(self) -> tuple[str, ...]: ...
    @property
    def max_tokens(self) -> int: ...
    @property
    def context_size(self) -> int | None: ...


class ProfileView(Protocol):
    """The active profile (`adjutant.Profile`), as plugins read it. A plugin's own
    settings are not read from here but through `Kernel.plugin_settings`."""

    @property
    def name(self) -> str: ...
    @property
    def model(self) -> ModelView: ...
    @property
    def system_prompt(self) -> str: ...
    @property
    def tools(self) -> tuple[str, ...]: ...
    @property
    def path_cages(self) -> tuple[str, ...]: ...
    @property
    def context_providers(self) -> Mapping[str, bool]: ...
    @property
    def verbosity(self) -> str: ...
    @property
    def token_budget(self) -> int: ...
    @property
    def tool_menu(self) -> int: ...
    @property
    def stores(self) -> Mapping[str, str]: ...
    @property
    def plugins(self) -> Mapping[str, Mapping[str, Any]]:
        """Each plugin's raw settings section, by plugin name."""
        ...

    def allows(self, tool: str) -> bool:
        """Whether the ``tools`` allow-list lets ``tool`` run."""
        ...

    def describe_tools(self) -> str:
        """The allow-list as the profile file spells it, for refusals and status."""
        ...

    def replace(self, **changes: Any) -> ProfileView:
        """A copy with ``changes`` applied (validated like the profile)."""
        ...

    def as_dict(self) -> dict[str, Any]:
        """The profile as plain data, every key."""
        ...


class Kernel(Protocol):
    """What a plugin (or the operator) may rely on of the kernel it was loaded by."""

    @property
    def profile(self) -> ProfileView:
        """The active profile; the operator switches presets by setting it."""
        ...

    @profile.setter
    def profile(self, profile: Any) -> None: ...

    @property
    def env(self) -> Mapping[str, str]:
        """The environment the kernel was started with (tests give their own)."""
        ...

    @property
    def home(self) -> Path:
        """The data home (``$ADJUTANT_HOME``)."""
        ...

    @property
    def bus(self) -> EventBusView: ...
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
    def events(self) -> Registered[type[Event]]:
        """The event classes declared by plugins (``register_events``), by name."""
        ...
    @property
    def speech_engines(self) -> Registered[SpeechEngine]: ...
    @property
    def speech_recognizers(self) -> Registered[SpeechRecognizer]: ...
    @property
    def settings_schemas(self) -> Registered[type[Any]]:
        """Plugin name -> the settings class it declared (``register_settings``)."""
        ...

    @property
    def plugins(self) -> Sequence[Any]:
        """Every plugin seen (`adjutant.PluginInfo`: name, status, version, error)."""
        ...

    def implementers(self, hook: str) -> list[str]:
        """The plugins implementing ``hook``."""
        ...

    def plugin_name(self, plugin: object) -> str: ...

    def plugin(self, name: str) -> object | None:
        """The loaded plugin named ``name`` (its module, or its one instance for this
        kernel), or None. How a plugin reaches another plugin's public API: check
        what you get against a Protocol, never a private name."""
        ...

    def plugin_settings(self, schema: type[T]) -> T:
        """The settings of the plugin that declared ``schema`` with
        ``register_settings``: the profile's ``plugins.<plugin>`` section validated
        into it. Raises ``ValueError`` (`adjutant.ProfileError`) naming each bad field,
        ``LookupError`` when no loaded plugin declared ``schema``."""
        ...

    def mount_tools(self, plugin: str, prefix: str, tools: Iterable[Tool]) -> dict[str, str]:
        """Register tools a plugin found at run time (MCP servers) under ``prefix``."""
        ...

    def pre_tool_use(self, call: ToolCall, declaration: ToolDeclaration,
                     mode: str) -> list[Verdict]: ...

    def confirmation_details(self, call: ToolCall, declaration: ToolDeclaration,
                             preview: Any, cwd: str) -> dict[str, Any]: ...

    @property
    def copilot_analyzers(self) -> Registered[CopilotAnalyzer]:
        """The live-recording copilot's analyzers (``register_copilot_analyzers``)."""
        ...

    @property
    def embedders(self) -> Registered[Embedder]:
        """The text-embedding models plugins registered (``register_embedders``)."""
        ...

    @property
    def plan_recallers(self) -> Registered[PlanRecaller]:
        """Sources of the user's past successful plans (``register_plan_recallers``)."""
        ...

    @property
    def task_capabilities(self) -> Registered[TaskCapability]:
        """Work the task runner can queue (``register_task_capabilities``), by name."""
        ...
