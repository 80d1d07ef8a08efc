"""Hook dispatch on pluggy's own machinery, with the kernel's guarantees added.

Every hook is called through pluggy, so call order, ``tryfirst``/``trylast``,
new-style ``wrapper=True`` and old-style ``hookwrapper=True`` implementations, and
hook-call monitoring (`trace_hooks`, ``ADJUTANT_TRACE_HOOKS``) behave as pluggy
documents. What the kernel adds sits on each plain implementation, not around the
call (`guard`, applied before the implementation is registered, so pluggy's own
records are never rewritten):

- observers (`HookCall`, ``Kernel.observe_hooks``) see every implementation call,
  attributed to its plugin;
- where one plugin's failure must not be another's (``pre_tool_use``,
  ``confirmation_details``) an implementation that raises or returns the wrong
  type yields a result naming it instead (a deny; an ``errors`` entry), so the
  other implementations still run and wrappers see the coerced result, never the
  exception.

Registration hooks are called for one plugin at a time, as it loads (like pluggy's
historic hooks), and lifecycle hooks one plugin at a time so that each awaitable is
awaited before the next plugin starts: neither has a call that a wrapper could wrap,
so a wrapper on them is refused at load (`refused_wrapper`), as pluggy refuses
wrappers on historic hooks.
"""

from __future__ import annotations

import functools
import inspect
import reprlib
import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import pluggy

if TYPE_CHECKING:
    from adjutant_hookspecs import Verdict


__all__ = ["NO_WRAPPERS", "Guarded", "HookCall", "culprit", "describe", "guard", "refused_wrapper",
           "trace_hooks", "wrapper_plugins"]

#: Hooks the kernel calls one plugin at a time: a wrapper there has nothing to wrap.
NO_WRAPPERS = frozenset({
    "register_providers", "register_tools", "register_context_providers",
    "register_policies", "register_stores", "register_frontends", "register_commands",
    "register_checks", "register_events", "register_speech_engines",
    "register_speech_recognizers", "register_settings", "startup", "shutdown",
    "register_copilot_analyzers",
    "register_embedders",
    "register_plan_recallers",
    "register_task_capabilities",
})


class HookCall:
    """One hook implementation call, as hook observers see it."""

    __slots__ = ("error", "hook", "kwargs", "plugin", "result")

    def __init__(self, hook: str, plugin: str, kwargs: dict[str, Any]) -> None:
        self.hook = hook
        self.plugin = plugin
        self.kwargs = kwargs
        self.result: Any = None
        self.error: BaseException | None = None

    def __repr__(self) -> str:
        return f"HookCall({self.hook!r}, plugin={self.plugin!r})"


def describe(exc: BaseException) -> str:
    """``Type: message (file:line)`` — where in the plugin it went wrong (each cause
    inside an exception group, never the group's own "unhandled errors" line)."""
    if isinstance(exc, BaseExceptionGroup):
        from ._errors import leaves

        return "; ".join(describe(e) for e in leaves(exc))
    frames = traceback.extract_tb(exc.__traceback__)
    where = f" ({frames[-1].filename}:{frames[-1].lineno})" if frames else ""
    return f"{type(exc).__name__}: {exc}{where}"


def refused_wrapper(impls: Mapping[str, Sequence[pluggy.HookImpl]]) -> str | None:
    """Why a plugin cannot load, given its implementations by hook, when one is a
    wrapper on a hook in `NO_WRAPPERS`."""
    for hook, found in impls.items():
        if hook not in NO_WRAPPERS:
            continue
        for impl in found:
            if impl.wrapper or impl.hookwrapper:
                option = "wrapper=True" if impl.wrapper else "hookwrapper=True"
                how = ("awaited one plugin at a time" if hook in ("startup", "shutdown")
                       else "called for each plugin on its own, as it loads")
                return (f"{hook} cannot be a wrapper (@hookimpl({option})): it is "
                        f"{how}, so there is no call to wrap; drop the option")
    return None


# -- coercion: one plugin's failure is reported as its own result --------------------------

def _verdict(plugin: str, result: Any, error: BaseException | None) -> Verdict | None:
    """Fail closed: an exception or anything but a `Verdict` or None is a deny naming
    ``plugin``; a verdict without a policy is attributed to ``plugin``."""
    from adjutant_hookspecs import Verdict

    if error is not None:
        return Verdict(decision="deny", policy=plugin,
                       reason=f"pre_tool_use raised {describe(error)}")
    if result is None:
        return None
    if not isinstance(result, Verdict):
        return Verdict(decision="deny", policy=plugin,
                       reason=f"pre_tool_use returned {type(result).__name__}")
    if not result.policy:
        return Verdict(decision=result.decision, reason=result.reason, policy=plugin)
    return result


def _details(plugin: str, result: Any, error: BaseException | None) -> Any:
    """A failed ``confirmation_details`` is an ``errors`` entry naming ``plugin``."""
    if error is not None:
        return {"errors": [f"{plugin}: {describe(error)}"]}
    if result is None or isinstance(result, Mapping):
        return result
    return {"errors": [f"{plugin}: confirmation_details returned "
                       f"{type(result).__name__}, not a dict"]}


#: hook -> coerce(plugin, result, error): hooks where each implementation fails alone.
COERCE: dict[str, Callable[[str, Any, BaseException | None], Any]] = {
    "pre_tool_use": _verdict,
    "confirmation_details": _details,
}


def guard(function: Callable[..., Any], hook: str, plugin: str,
          observers: Sequence[Callable[[HookCall], None]]) -> Callable[..., Any]:
    """``function`` (one plain, not wrapper, implementation of ``hook`` by ``plugin``)
    with the kernel's guarantees put on it, before pluggy ever sees it: observers see
    its call, and on hooks in `COERCE` its failure becomes a result naming its plugin.
    pluggy calls the wrapper in its own order, inside any wrappers; its signature is
    the implementation's (``functools.wraps``), so pluggy reads the same arguments."""
    coerce = COERCE.get(hook)
    argnames: list[str] = []  # the positional names, read on first observed call

    @functools.wraps(function)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        if not observers:
            if coerce is None:
                return function(*args, **kwargs)
            try:
                result = function(*args, **kwargs)
            except Exception as exc:
                return coerce(plugin, None, exc)
            return coerce(plugin, result, None)
        if args and not argnames:
            argnames.extend(inspect.signature(function).parameters)
        call = HookCall(hook, plugin, {**dict(zip(argnames, args, strict=False)), **kwargs})
        try:
            call.result = function(*args, **kwargs)
        except BaseException as exc:
            call.error = exc
            if coerce is None or not isinstance(exc, Exception):
                raise
            return coerce(plugin, None, exc)
        finally:
            for observer in observers:
                observer(call)
        return call.result if coerce is None else coerce(plugin, call.result, None)

    return guarded


class Guarded:
    """What the kernel registers with pluggy in a plugin's place: the plugin's hook
    implementations under their own names and markers, each plain one wrapped with
    the kernel's guarantees (`_hooks.guard`). pluggy reads it like any plugin object;
    the plugin itself is never modified, and pluggy's records are never written to."""

    def __init__(self, plugin: object, name: str, pm: pluggy.PluginManager,
                 observers: list[Callable[[HookCall], None]]) -> None:
        self.plugin = plugin
        self.plugin_name = name
        marker = f"{pm.project_name}_impl"
        for attr in dir(plugin):
            opts = pm.parse_hookimpl_opts(plugin, attr)
            if opts is None:
                continue
            function = getattr(plugin, attr)
            if not (opts.get("wrapper") or opts.get("hookwrapper")):
                function = guard(function, opts.get("specname") or attr, name,
                                        observers)
                setattr(function, marker, opts)
            setattr(self, attr, function)

    def __repr__(self) -> str:
        return f"<hooks of plugin {self.plugin_name!r}>"


# -- naming the wrapper at fault ----------------------------------------------------------

def wrapper_plugins(caller: pluggy.HookCaller) -> list[str]:
    """The plugins with a wrapper on ``caller``'s hook, outermost first."""
    return list(dict.fromkeys(i.plugin_name for i in reversed(caller.get_hookimpls())
                              if i.wrapper or i.hookwrapper))


def culprit(exc: BaseException, caller: pluggy.HookCaller) -> str:
    """The plugin whose implementation raised ``exc`` out of a hook call (the innermost
    of its frames in the traceback), else the plugins with wrappers on the hook."""
    codes: dict[object, str] = {}
    for impl in caller.get_hookimpls():
        function = getattr(impl.function, "__wrapped__", impl.function)
        function = getattr(function, "__func__", function)
        if (code := getattr(function, "__code__", None)) is not None:
            codes[code] = impl.plugin_name
    found = None
    tb = exc.__traceback__
    while tb is not None:
        found = codes.get(tb.tb_frame.f_code, found)
        tb = tb.tb_next
    return found or ", ".join(wrapper_plugins(caller)) or "kernel"


# -- tracing ------------------------------------------------------------------------------

_repr = reprlib.Repr()
_repr.maxstring = _repr.maxother = 60


def trace_hooks(pm: pluggy.PluginManager, write: Callable[[str], object]) -> Callable[[], None]:
    """Write every hook call to ``write`` (pluggy's hook-call monitoring): the hook, its
    arguments, the implementations in the order pluggy calls them (wrappers first,
    marked), then what it returned or raised and how long it took. Returns an undo."""
    depth: list[float] = []  # start times of the calls in progress

    def before(hook: str, impls: Sequence[pluggy.HookImpl], kwargs: Mapping[str, Any]) -> None:
        order = [f"{i.plugin_name}{' [wrapper]' if i.wrapper or i.hookwrapper else ''}"
                 for i in reversed(impls)]
        args = ", ".join(f"{k}={_repr.repr(v)}" for k, v in kwargs.items())
        write(f"{'  ' * len(depth)}hook {hook}({args}) -> "
              f"{', '.join(order) or '(no implementation)'}\n")
        depth.append(time.perf_counter())

    def after(outcome: pluggy.Result[Any], hook: str, impls: Sequence[pluggy.HookImpl],
              kwargs: Mapping[str, Any]) -> None:
        ms = (time.perf_counter() - depth.pop()) * 1000
        if outcome.exception is not None:
            done = f"raised {describe(outcome.exception)}"
        else:
            done = f"returned {_repr.repr(outcome.get_result())}"
        write(f"{'  ' * len(depth)}hook {hook} {done} ({ms:.2f} ms)\n")

    return pm.add_hookcall_monitoring(before, after)
