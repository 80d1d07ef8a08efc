"""The kernel: one plugin manager, registries, settings and an event bus per instance.

Nothing here is module-global, so several kernels live side by side in one
process (the test harness relies on it). Loading is synchronous and cheap;
``async with Kernel() as kernel`` also runs the plugins' ``startup`` hooks and, on
exit, ``shutdown`` hooks and the ``aclose`` of registered providers and stores.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable, Collection, Iterable, Mapping
from pathlib import Path
from types import ModuleType, TracebackType
from typing import TYPE_CHECKING, Any, TypeVar

import pluggy

from adjutant_hookspecs import PROJECT_NAME, AdjutantSpec, Command

if TYPE_CHECKING:  # the contracts (msgspec structs): imported when first used, so that
    # `adjutant --help`, which loads only commands, never pays for msgspec
    from adjutant_hookspecs import (
        Check,
        ContextProvider,
        CopilotAnalyzer,
        Embedder,
        Event,
        Frontend,
        PlanRecaller,
        Policy,
        Provider,
        SpeechEngine,
        SpeechRecognizer,
        TaskCapability,
        Tool,
        ToolCall,
        ToolDeclaration,
        Verdict,
    )

from . import _hooks
from ._bus import DEFAULT_CAPACITY, EventBus
from ._hooks import HookCall, culprit, wrapper_plugins
from ._hooks import describe as _describe
from ._paths import data_home, private_home
from ._plugins import EntryPoint, PluginInfo, discover, selection
from ._registry import KINDS, TOOL_NAME, RegistrationError, Registry, validate

if TYPE_CHECKING:
    from ._settings import Profile

__all__ = ["HookCall", "Kernel", "PluginLoadError"]

T = TypeVar("T")

#: Registration hooks run when a plugin is added, in this order.
_REGISTRATION = tuple(KINDS.items())


class _PluginManager(pluggy.PluginManager):
    """pluggy's manager, minus inspecting every dunder of every plugin object on
    registration (85% of load time for plain plugin instances)."""

    def parse_hookimpl_opts(self, plugin: object, name: str) -> Any:
        if name.startswith("__"):
            return None
        return super().parse_hookimpl_opts(plugin, name)


class PluginLoadError(RuntimeError):
    """Raised by a strict kernel (the test harness) when a plugin cannot be loaded."""


class Kernel:
    """The Adjutant kernel.

    :param plugins: Plugin objects (modules or instances with ``@hookimpl``
        methods) to load, before any installed one.
    :param load_installed: Also load the ``adjutant`` entry-point group, filtered by
        ``ADJUTANT_LOAD_PLUGINS`` / ``ADJUTANT_DISABLE_PLUGINS``.
    :param env: The environment to read (default: ``os.environ``).
    :param profile: A `Profile`, or the name of one under ``<home>/profiles``.
    :param strict: Raise `PluginLoadError` instead of skipping a broken plugin.
    """

    def __init__(
        self,
        *,
        plugins: Iterable[object] = (),
        load_installed: bool = True,
        env: Mapping[str, str] | None = None,
        home: str | os.PathLike[str] | None = None,
        profile: Profile | str | None = None,
        bus_capacity: int = DEFAULT_CAPACITY,
        strict: bool = False,
    ) -> None:
        self.env: Mapping[str, str] = dict(os.environ if env is None else env)
        self.home = Path(home) if home is not None else data_home(self.env)
        self.strict = strict
        self.pm: pluggy.PluginManager = _PluginManager(PROJECT_NAME)
        self.pm.add_hookspecs(AdjutantSpec)
        if self.env.get("ADJUTANT_TRACE_HOOKS"):
            _hooks.trace_hooks(self.pm, _stderr_writer)

        self.providers: Registry[Provider] = Registry("provider")
        self.tools: Registry[Tool] = Registry("tool")
        self.context_providers: Registry[ContextProvider] = Registry("context provider")
        self.policies: Registry[Policy] = Registry("policy")
        self.stores: Registry[Any] = Registry("store")
        self.frontends: Registry[Frontend] = Registry("frontend")
        self.commands: Registry[Command] = Registry("command")
        self.checks: Registry[Check] = Registry("check")
        self.events: Registry[type[Event]] = Registry("event")
        self.speech_engines: Registry[SpeechEngine] = Registry("speech engine")
        self.speech_recognizers: Registry[SpeechRecognizer] = Registry("speech recognizer")
        self.embedders: Registry[Embedder] = Registry("embedder")
        self.plan_recallers: Registry[PlanRecaller] = Registry("plan recaller")
        #: plugin name -> the settings class it declared (``register_settings``)
        self.settings_schemas: Registry[type[Any]] = Registry("settings")
        self.copilot_analyzers: Registry[CopilotAnalyzer] = Registry("copilot analyzer")
        self.task_capabilities: Registry[TaskCapability] = Registry("task capability")
        self._event_classes: set[type[Event]] = set()
        self.bus = EventBus(capacity=bus_capacity, declared=self._event_classes)

        #: One report per plugin seen, in load order (`adjutant plugins` prints these).
        self.plugins: list[PluginInfo] = []
        self._objects: dict[str, object] = {}  # loaded plugin name -> plugin object
        self._guarded: dict[str, _hooks.Guarded] = {}  # loaded plugin name -> what pluggy holds
        self._infos: dict[str, PluginInfo] = {}  # loaded plugin name -> its report
        self._kinds: list[str] = list(KINDS)  # the registration kinds run so far
        self._callers: dict[tuple[str, str], Any] = {}  # (hook, plugin) -> subset caller
        self._settings: dict[tuple[int, str], Any] = {}  # (id(profile), plugin) -> values
        self._impls: dict[str, dict[str, list[Any]]] = {}  # plugin -> hook -> its impls
        self._explicit = list(plugins)
        self._load_installed = load_installed
        self._loaded = False
        self._started: list[str] = []
        self._observers: list[Callable[[HookCall], None]] = []
        self._profile_arg = profile
        self._profile: Profile | None = None

    # -- loading ------------------------------------------------------------------------

    @property
    def loaded_kinds(self) -> frozenset[str]:
        """The registration kinds run so far (`load`). ``"tools"`` never comes
        without ``"policies"``: whatever loads a tool loads its judges."""
        return frozenset(self._kinds) if self._loaded else frozenset()

    def load(self, kinds: Collection[str] | None = None) -> Kernel:
        """Load built-in, explicit and installed plugins (once), running their
        registration hooks of ``kinds`` (registry names; None: every kind).

        A later call registers the kinds not registered yet, for every plugin loaded:
        the command line builds its parser from ``commands`` alone and loads the rest
        only for the subcommand it runs, so a plugin's tools are not imported for
        ``adjutant --help``. A plugin that fails a later kind is unloaded then, with
        everything it registered before.
        """
        if unknown := set(kinds or ()) - set(KINDS):
            raise ValueError(f"unknown registration kinds: {', '.join(sorted(unknown))}")
        if kinds is not None and "tools" in kinds:
            kinds = {*kinds, "policies"}  # a tool is never loaded without its judges
        wanted = [kind for kind in KINDS if kinds is None or kind in kinds]
        if not self._loaded:
            self._loaded = True
            self._kinds = wanted
            from .. import _builtin
            from .._version import __version__

            self._install(_builtin, PluginInfo(
                name="adjutant", status="loaded", source="builtin",
                module=_builtin.__name__, distribution="adjutant-core", version=__version__,
            ))
            for plugin in self._explicit:
                self.add_plugin(plugin)
            if self._load_installed:
                for ep in discover():
                    self._add_entry_point(ep)
            return self
        missing = [kind for kind in wanted if kind not in self._kinds]
        if missing:
            self._kinds = [kind for kind in KINDS if kind in self._kinds or kind in missing]
            for name in list(self._objects):
                info = self._infos[name]
                if error := self._register(name, info, missing):
                    self._unload(name, info, error)
        return self

    def _add_entry_point(self, ep: EntryPoint) -> PluginInfo:
        info = PluginInfo(
            name=ep.name,
            status="disabled",
            source="entry-point",
            module=ep.value,
            distribution=ep.distribution,
            version=ep.version,
        )
        if reason := selection(self.env, ep.name, info.distribution):
            info.error = reason
            return self._report(info)
        try:
            plugin = ep.load()
        except BaseException as exc:
            if isinstance(exc, KeyboardInterrupt):
                raise
            return self._fail(info, f"import failed: {_describe(exc)}", exc)
        if isinstance(plugin, type):  # a class: one instance per kernel
            try:
                plugin = plugin()
            except Exception as exc:
                return self._fail(info, f"{ep.value}() raised {_describe(exc)}", exc)
        return self._install(plugin, info)

    def add_plugin(
        self, plugin: object, *, name: str | None = None, source: str = "explicit"
    ) -> PluginInfo:
        """Load one plugin object now; returns its report (status ``loaded`` or ``failed``).

        A class is instantiated (no arguments): one instance per kernel, holding
        whatever the plugin keeps for this kernel. Plugins added after start-up do not
        get the ``startup`` hook.
        """
        if isinstance(plugin, type):
            plugin = plugin()
        name = name or _plugin_name(plugin)
        module = plugin.__name__ if isinstance(plugin, ModuleType) else type(plugin).__module__
        return self._install(plugin, PluginInfo(name=name, status="loaded", source=source,
                                                module=module))

    def _install(self, plugin: object, info: PluginInfo) -> PluginInfo:
        name = info.name
        if name in self._objects:
            return self._fail(info, f"a plugin named {name!r} is already loaded")
        if any(obj is plugin for obj in self._objects.values()):
            return self._fail(info, f"{plugin!r} is already loaded under another name")
        guarded = _hooks.Guarded(plugin, name, self.pm, self._observers)
        try:
            self.pm.register(guarded, name=name)
        except pluggy.PluginValidationError as exc:
            return self._fail(info, f"invalid hook implementation: {exc}", exc)
        self._callers.clear()  # subset callers name the plugins to leave out
        try:
            self.pm.check_pending()
        except pluggy.PluginValidationError as exc:
            self.pm.unregister(guarded)
            return self._fail(info, f"unknown hook: {exc}", exc)
        impls: dict[str, list[Any]] = {}
        for caller in self.pm.get_hookcallers(guarded) or ():
            impls[caller.name] = [i for i in caller.get_hookimpls() if i.plugin is guarded]
        if refused := _hooks.refused_wrapper(impls):
            self.pm.unregister(guarded)
            return self._fail(info, refused)
        self._impls[name] = impls
        self._guarded[name] = guarded
        if error := self._register(name, info, self._kinds):
            self._unregister(name)
            return self._fail(info, error)
        info.status = "loaded"
        self._objects[name] = plugin
        self._infos[name] = info
        return self._report(info)

    def _register(self, name: str, info: PluginInfo, kinds: Collection[str]) -> str | None:
        """Run ``name``'s registration hooks of ``kinds`` and add what it registered,
        all or nothing; the reason when something was refused."""
        staged: list[tuple[str, str, Any]] = []  # (kind, key, obj)
        for kind, (hook, _) in _REGISTRATION:
            if kind not in kinds:
                continue

            def register(obj: Any, _kind: str = kind) -> None:
                key = validate(_kind, obj)
                if _kind == "settings_schemas":
                    key = name  # one settings class per plugin, under its name
                if any(k == _kind and n == key for k, n, _ in staged):
                    raise RegistrationError(f"registered {_kind} {key!r} twice")
                staged.append((_kind, key, obj))

            try:
                self._call_plugin(hook, name, register=register)
            except RegistrationError as exc:
                return f"{hook}: {exc}"
            except Exception as exc:
                _log_traceback(name, exc)
                return f"{hook} raised {_describe(exc)}"

        for kind, key, obj in staged:
            registry: Registry[Any] = getattr(self, kind)
            if kind == "settings_schemas" and obj in self.settings_schemas.values():
                return f"settings {obj.__qualname__} are already declared by another plugin"
            if key in registry:
                return (f"{registry.kind} {key!r} is already registered by plugin "
                        f"{registry.owner(key)!r}; plugin {name!r} cannot register it too")
        for kind, key, obj in staged:
            getattr(self, kind)._add(key, obj, name)
            if kind == "settings_schemas":  # reported as what it is, not under its key
                info.registered.setdefault("settings", []).append(obj.__qualname__)
            else:
                info.registered.setdefault(kind, []).append(key)
            if kind == "events":
                self._event_classes.add(obj)
        return None

    def _unload(self, name: str, info: PluginInfo, error: str) -> None:
        """A loaded plugin refused at a later registration: out with all it registered."""
        for kind in KINDS:
            registry: Registry[Any] = getattr(self, kind)
            for key in [k for k in registry if registry.owner(k) == name]:
                if kind == "events":
                    self._event_classes.discard(registry[key])
                registry._remove(key)
        self._unregister(name)
        del self._objects[name], self._infos[name]
        self._impls.pop(name, None)
        info.status, info.error, info.registered = "failed", error, {}
        from .._logging import get_logger

        get_logger(plugin=name).warning("plugin skipped", error=error)
        if self.strict:
            raise PluginLoadError(f"plugin {name!r}: {error}")

    def _unregister(self, name: str) -> None:
        guarded = self._guarded.pop(name, None)
        if guarded is not None:
            self.pm.unregister(guarded)
        self._callers.clear()

    def _report(self, info: PluginInfo) -> PluginInfo:
        self.plugins.append(info)
        return info

    def _fail(self, info: PluginInfo, error: str, exc: BaseException | None = None) -> PluginInfo:
        if info.name not in self._objects:
            self._impls.pop(info.name, None)
        info.status = "failed"
        info.error = error
        info.registered = {}
        self._report(info)
        from .._logging import get_logger

        log = get_logger(plugin=info.name)
        log.warning("plugin skipped", error=error)
        if exc is not None:
            log.debug("plugin skipped: traceback", exc_info=exc)
        if self.strict:
            raise PluginLoadError(f"plugin {info.name!r}: {error}") from exc
        return info

    def plugin_name(self, plugin: object) -> str:
        """The name a loaded plugin object was registered under."""
        for name, obj in self._objects.items():
            if obj is plugin:
                return name
        raise LookupError(f"{plugin!r} is not a loaded plugin")

    def plugin(self, name: str) -> object | None:
        """The loaded plugin named ``name`` (its module, or its instance for this
        kernel), or None: how one plugin reaches another's public API."""
        return self._objects.get(name)

    def plugin_settings(self, schema: type[T]) -> T:
        """The settings of the plugin that declared ``schema`` (``register_settings``):
        the profile's ``plugins.<that plugin>`` section validated into it, cached per
        profile. Raises `ProfileError` naming each bad field as
        ``$.plugins.<plugin>.<field>``, and `LookupError` when no loaded plugin declared
        ``schema``."""
        plugin = next((name for name, declared in self.settings_schemas.items()
                       if declared is schema), None)
        if plugin is None:
            raise LookupError(f"no loaded plugin declared the settings {schema.__qualname__} "
                              "(register_settings)")
        profile = self.profile
        key = (id(profile), plugin)
        if key not in self._settings:
            from ._settings import plugin_section

            self._settings = {k: v for k, v in self._settings.items() if k[0] == id(profile)}
            self._settings[key] = plugin_section(profile, plugin, schema)
        return self._settings[key]  # type: ignore[no-any-return]

    def mount_tools(self, plugin: str, prefix: str, tools: Iterable[Tool]) -> dict[str, str]:
        """Replace the tools ``plugin`` mounted under ``prefix`` with ``tools``, at run time.

        For tools discovered after start-up (an MCP server's list, which can change).
        Each tool is validated like a registered one; every name must start with
        ``prefix``, a namespace ``plugin`` alone may use. Returns the tools refused,
        name -> reason; the others are in `tools` when this returns."""
        if not prefix.endswith(".") or not TOOL_NAME.match(prefix[:-1]):
            raise ValueError(f"mount prefix {prefix!r} must be a tool name plus '.'")
        if plugin not in self._objects:
            raise ValueError(f"no loaded plugin named {plugin!r}")
        for name in list(self.tools):
            if name.startswith(prefix):
                if self.tools.owner(name) != plugin:
                    raise ValueError(f"{prefix}* belongs to plugin {self.tools.owner(name)!r}")
                self.tools._remove(name)
        refused: dict[str, str] = {}
        for tool in tools:
            name = getattr(getattr(tool, "declaration", None), "name", "?")
            try:
                name = validate("tools", tool)
                if not name.startswith(prefix):
                    raise RegistrationError(f"not under {prefix}")
                if name in self.tools:
                    raise RegistrationError("mounted twice")
            except RegistrationError as exc:
                refused[name] = str(exc)
                continue
            self.tools._add(name, tool, plugin)
        return refused

    # -- hook dispatch ------------------------------------------------------------------

    def _call_plugin(self, hook: str, plugin: str, **kwargs: Any) -> list[Any]:
        """Call ``hook`` on the plugin named ``plugin`` only, through pluggy (so its
        order, options and hook-call monitoring apply), and return the results."""
        if not self._impls.get(plugin, {}).get(hook):
            return []
        caller = self._callers.get((hook, plugin))
        if caller is None:  # pluggy's subset caller: the others left out
            mine = self._guarded[plugin]
            caller = self.pm.subset_hook_caller(
                hook, [p for p in self.pm.get_plugins() if p is not mine])
            self._callers[(hook, plugin)] = caller
        results = caller(**kwargs)
        assert isinstance(results, list)
        return results

    def _lifecycle_order(self, hook: str, names: Iterable[str]) -> list[str]:
        """``names`` with pluggy's ordering options of their ``hook`` applied: the
        ``tryfirst`` ones first, the ``trylast`` ones last, the rest in the given order."""
        rank = {i.plugin_name: 0 if i.tryfirst else 2 if i.trylast else 1
                for i in getattr(self.pm.hook, hook).get_hookimpls()}
        return sorted(names, key=lambda name: rank.get(name, 1))

    def implementers(self, hook: str) -> list[str]:
        """The loaded plugins that implement ``hook``, in load order."""
        return [name for name in self._objects if self._impls.get(name, {}).get(hook)]

    def observe_hooks(self, observer: Callable[[HookCall], None]) -> Callable[[], None]:
        """Call ``observer`` after every hook implementation call; returns an undo."""
        self._observers.append(observer)
        return lambda: self._observers.remove(observer)

    def pre_tool_use(
        self, call: ToolCall, declaration: ToolDeclaration, mode: str
    ) -> list[Verdict]:
        """Every ``pre_tool_use`` verdict, in pluggy's call order, wrappers applied.

        Fail closed: an implementation that raises or returns something else is a
        deny naming its plugin (other implementations still run); a wrapper that
        raises, or hands back anything but a list of verdicts, is a deny naming it."""
        from adjutant_hookspecs import Verdict

        caller = self.pm.hook.pre_tool_use
        try:
            results = caller(call=call, declaration=declaration, mode=mode)
        except Exception as exc:
            return [Verdict(decision="deny", policy=culprit(exc, caller),
                            reason=f"pre_tool_use raised {_describe(exc)}")]
        if not isinstance(results, list):
            return [Verdict(decision="deny", policy=_wrappers(caller), reason=(
                f"pre_tool_use wrapper returned {type(results).__name__}, not a list"))]
        verdicts = []
        for result in results:
            if isinstance(result, Verdict) and result.policy:
                verdicts.append(result)
            elif result is not None:  # put there by a wrapper: plain ones are coerced
                verdicts.append(_hooks.COERCE["pre_tool_use"](_wrappers(caller), result, None))
        return verdicts

    def confirmation_details(self, call: ToolCall, declaration: ToolDeclaration,
                             preview: Any, cwd: str) -> dict[str, Any]:
        """Every plugin's ``confirmation_details``, merged so that the implementation
        pluggy calls first wins a key (by default the plugin loaded last). Failures are
        listed under ``errors``, each naming its plugin, so the user sees that a detail
        is missing, and why."""
        caller = self.pm.hook.confirmation_details
        try:
            results = caller(call=call, declaration=declaration, preview=preview, cwd=cwd)
            if not isinstance(results, list):
                raise TypeError(f"a wrapper returned {type(results).__name__}, not a list")
        except Exception as exc:
            return {"errors": [f"{culprit(exc, caller)}: {_describe(exc)}"]}
        wrappers = _wrappers(caller)
        details: dict[str, Any] = {}
        errors: list[Any] = []
        for result in results:
            result = _hooks.COERCE["confirmation_details"](wrappers, result, None)
            if result is None:
                continue
            result = dict(result)
            found = result.pop("errors", [])
            errors += found if isinstance(found, list) else [found]
            details = {**result, **details}
        if errors:
            details["errors"] = errors
        return details

    # -- settings -----------------------------------------------------------------------

    @property
    def profile(self) -> Profile:
        """The active profile (loaded on first use; raises `ProfileError` if invalid)."""
        if self._profile is None:
            from ._settings import Profile, load_profile

            arg = self._profile_arg
            if isinstance(arg, Profile):
                self._profile = arg
            else:
                name = arg or self.env.get("ADJUTANT_PROFILE") or "default"
                self._profile = load_profile(self.home, name)
        return self._profile

    @profile.setter
    def profile(self, profile: Profile) -> None:
        """Switch presets at run time (takes effect on the next request)."""
        self._profile = profile

    # -- lifecycle ----------------------------------------------------------------------

    async def __aenter__(self) -> Kernel:
        if not self._loaded:  # loaded with only some kinds: started as it is
            self.load()
        private_home(self.home)
        for name in self._lifecycle_order("startup", list(self._objects)):
            try:
                for result in self._call_plugin("startup", name, kernel=self):
                    if inspect.isawaitable(result):
                        await result
            except Exception as exc:
                await self._stop()
                raise RuntimeError(f"plugin {name!r} failed to start: {_describe(exc)}") from exc
            self._started.append(name)
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self._stop()

    async def _stop(self) -> None:
        from .._logging import get_logger

        log = get_logger()
        for name in self._lifecycle_order("shutdown", reversed(self._started)):
            try:
                for result in self._call_plugin("shutdown", name, kernel=self):
                    if inspect.isawaitable(result):
                        await result
            except Exception as exc:
                log.error("plugin shutdown failed", plugin=name, error=_describe(exc))
        self._started.clear()
        for registry in (self.providers, self.stores, self.speech_engines):
            for key, obj in registry.items():
                try:
                    await obj.aclose()
                except Exception as exc:
                    log.error("aclose failed", kind=registry.kind, name=key,
                              error=_describe(exc))
        self.bus.close()


def _plugin_name(plugin: object) -> str:
    if isinstance(plugin, ModuleType):
        return plugin.__name__
    return getattr(plugin, "name", None) or type(plugin).__name__


def _wrappers(caller: Any) -> str:
    """Who answers for what a hook call returned besides its plain implementations."""
    return ", ".join(wrapper_plugins(caller)) or "kernel"


def _log_traceback(plugin: str, exc: BaseException) -> None:
    from .._logging import get_logger

    get_logger(plugin=plugin).debug("plugin skipped: traceback", exc_info=exc)


def _stderr_writer(text: str) -> None:
    import sys

    sys.stderr.write(text)


if TYPE_CHECKING:  # the kernel is what plugins are told it is (mypy checks this)
    from adjutant_hookspecs import Kernel as _PublicFace

    def _is_its_public_face(kernel: Kernel) -> _PublicFace:
        return kernel
