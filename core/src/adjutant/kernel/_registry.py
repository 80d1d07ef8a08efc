"""Registries: what plugins registered, validated on the way in, with who owns it.

Each registration hook gets a ``register`` callback bound to one plugin and one
kind. The callback validates the object at once (`RegistrationError` names the
plugin, the kind and the reason) and stages it; the kernel commits a plugin's
staged objects only when all of them are valid and none collides with a name
another plugin owns. A plugin is thus loaded whole or not at all.
"""

from __future__ import annotations

import contextlib
import inspect
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import adjutant_hookspecs as _hs

if TYPE_CHECKING:  # msgspec and the contracts load on first use (`_hs.Name`): `adjutant
    # --help` registers only commands (dataclasses) and never pays for them
    from adjutant_hookspecs import ToolDeclaration

from ._paths import cache_home

__all__ = ["KINDS", "RegistrationError", "Registry", "check_examples", "schema_errors",
           "validate"]

T = TypeVar("T")

TOOL_NAME = re.compile(r"^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*$")
PLAIN_NAME = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,63}$")
COMMAND_NAME = re.compile(r"^[a-z][a-z0-9-]{0,31}$")
MAX_SCHEMA_BYTES = 64 * 1024


class RegistrationError(ValueError):
    """A plugin handed the kernel something invalid or already taken."""


class Registry(Generic[T]):
    """Name → object, with the owning plugin remembered for every entry."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._items: dict[str, T] = {}
        self._owners: dict[str, str] = {}

    def __getitem__(self, name: str) -> T:
        try:
            return self._items[name]
        except KeyError:
            known = ", ".join(sorted(self._items)) or "none"
            raise KeyError(f"no {self.kind} named {name!r} (registered: {known})") from None

    def get(self, name: str) -> T | None:
        return self._items.get(name)

    def __contains__(self, name: object) -> bool:
        return name in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def items(self) -> Iterator[tuple[str, T]]:
        return iter(self._items.items())

    def values(self) -> Iterator[T]:
        return iter(self._items.values())

    def owner(self, name: str) -> str:
        """The plugin that registered ``name``."""
        return self._owners[name]

    def _add(self, name: str, obj: T, plugin: str) -> None:
        self._items[name] = obj
        self._owners[name] = plugin

    def _remove(self, name: str) -> None:
        del self._items[name], self._owners[name]


# -- validators: return the registry key, raise RegistrationError ------------------------


def _need_async(obj: Any, *methods: str) -> None:
    for method in methods:
        fn = getattr(obj, method, None)
        if fn is None:
            raise RegistrationError(f"{type(obj).__qualname__} has no {method}()")
        if not (inspect.iscoroutinefunction(fn) or inspect.isasyncgenfunction(fn)):
            raise RegistrationError(f"{type(obj).__qualname__}.{method} must be async")


def _named(obj: Any, pattern: re.Pattern[str] = PLAIN_NAME) -> str:
    name = getattr(obj, "name", None)
    if not isinstance(name, str) or not pattern.match(name):
        raise RegistrationError(
            f"{type(obj).__qualname__}.name must be a string matching {pattern.pattern}, "
            f"got {name!r}"
        )
    return name


def _validate_provider(obj: Any) -> str:
    name = _named(obj)
    if not isinstance(obj, _hs.Provider):
        raise RegistrationError(f"provider {name!r} lacks complete() or aclose()")
    _need_async(obj, "complete", "aclose")
    return name


def validate_schema(schema: Any, where: str) -> None:
    """Structural check of a tool's argument schema (a JSON Schema object)."""
    if not isinstance(schema, dict) or schema.get("type") != "object":
        raise RegistrationError(f"{where}: args_schema must be a JSON Schema with type 'object'")
    props = schema.get("properties", {})
    if not isinstance(props, dict) or not all(isinstance(p, dict) for p in props.values()):
        raise RegistrationError(f"{where}: args_schema.properties must map names to schemas")
    required = schema.get("required", [])
    if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
        raise RegistrationError(f"{where}: args_schema.required must be a list of names")
    if missing := [r for r in required if r not in props]:
        raise RegistrationError(f"{where}: required {missing} not in args_schema.properties")
    if len(_json(schema)) > MAX_SCHEMA_BYTES:
        raise RegistrationError(f"{where}: args_schema is larger than {MAX_SCHEMA_BYTES} bytes")


def validate_declaration(declaration: Any) -> ToolDeclaration:
    """Strictly re-validate a declaration (Python construction skips type checks)."""
    if not isinstance(declaration, _hs.ToolDeclaration):
        raise RegistrationError(
            f"tool declaration must be a ToolDeclaration, got {type(declaration).__qualname__}"
        )
    try:
        checked = _hs.convert(_hs.to_builtins(declaration), _hs.ToolDeclaration)
    except (_hs.ContractError, TypeError) as exc:
        raise RegistrationError(f"malformed tool declaration: {exc}") from None
    where = f"tool {checked.name!r}"
    if not TOOL_NAME.match(checked.name):
        raise RegistrationError(f"{where}: name must match {TOOL_NAME.pattern}")
    if not checked.description.strip():
        raise RegistrationError(f"{where}: description is empty")
    validate_schema(checked.args_schema, where)
    if checked.safety.level != "read" and not checked.supports_dry_run:
        raise RegistrationError(f"{where}: a tool with effects must support dry-run")
    if checked.examples:
        check_examples(checked.args_schema, checked.examples, where)
    return checked


def schema_errors(schema: dict[str, Any], args: Any) -> list[str]:
    """Every way ``args`` breaks the JSON Schema ``schema`` (draft 2020-12, the
    validator the pipeline uses), each as ``message @ $.path``; empty when it fits."""
    from jsonschema import Draft202012Validator

    errors = sorted(Draft202012Validator(schema).iter_errors(args),
                    key=lambda e: list(map(str, e.absolute_path)))
    return [f"{e.message} @ $" + "".join(f"[{p!r}]" if isinstance(p, int) else f".{p}"
                                          for p in e.absolute_path) for e in errors]


def check_examples(schema: dict[str, Any], examples: Any, where: str) -> None:
    """The schema is a valid JSON Schema and every example fits it, in full (types,
    enums, patterns, bounds: what the pipeline will check of a planned call).

    A schema and examples that passed once are remembered by digest (in the process
    and in the cache home), so a command's start-up neither imports the validator nor
    re-checks unchanged tools (measured: 65 ms of every ``adjutant`` command)."""
    digest = _digest(schema, examples)
    if digest in _passed():
        return
    _check_examples(schema, examples, where)
    _remember(digest)


def _check_examples(schema: dict[str, Any], examples: Any, where: str) -> None:
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError

    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        raise RegistrationError(f"{where}: args_schema is not a valid JSON Schema: "
                                f"{exc.message}") from None
    for number, example in enumerate(examples, 1):
        if errors := schema_errors(schema, example):
            raise RegistrationError(
                f"{where}: example {number} {_short(example)} does not fit args_schema: "
                + "; ".join(errors[:3]))


#: Digests of (schema, examples) pairs that passed `check_examples`, lazily loaded.
_PASSED: set[str] | None = None
#: Bump when what `_check_examples` checks changes: old digests stop counting.
_CHECKS_VERSION = "1"


def _digest(schema: Any, examples: Any) -> str:
    import hashlib

    blob = _json([_CHECKS_VERSION, schema, examples], order="deterministic")
    return hashlib.sha256(blob).hexdigest()


def _passed_file() -> Path:
    return cache_home() / "checked-examples"


def _passed() -> set[str]:
    global _PASSED
    if _PASSED is None:
        try:
            _PASSED = set(_passed_file().read_text(encoding="ascii").split())
        except (OSError, ValueError):
            _PASSED = set()
    return _PASSED


def _remember(digest: str) -> None:
    """Add to the memo; a cache that cannot be written only costs the next start-up."""
    _passed().add(digest)
    path = _passed_file()
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        with open(path, "a", encoding="ascii") as handle:
            handle.write(digest + "\n")


def _short(value: Any) -> str:
    text = _json(value).decode()
    return text if len(text) <= 120 else text[:117] + "..."


def _validate_tool(obj: Any) -> str:
    declaration = validate_declaration(getattr(obj, "declaration", None))
    _need_async(obj, "dry_run", "execute")
    return declaration.name


def _validate_context_provider(obj: Any) -> str:
    name = _named(obj)
    if not isinstance(obj, _hs.ContextProvider):
        raise RegistrationError(f"context provider {name!r} lacks gather()")
    _need_async(obj, "gather")
    return name


def _validate_policy(obj: Any) -> str:
    name = _named(obj)
    if not isinstance(obj, _hs.Policy):
        raise RegistrationError(f"policy {name!r} lacks evaluate()")
    _need_async(obj, "evaluate")
    return name


def _validate_store(obj: Any) -> str:
    name = _named(obj)
    kind = getattr(obj, "kind", None)
    protocol: Any = {"kv": _hs.KeyValueStore, "log": _hs.LogStore}.get(kind)  # type: ignore[arg-type]
    if protocol is None:
        raise RegistrationError(f"store {name!r}: kind must be 'kv' or 'log', got {kind!r}")
    if not isinstance(obj, protocol):
        raise RegistrationError(f"store {name!r} does not implement the {kind} store protocol")
    methods = ("get", "put", "delete", "scan") if kind == "kv" else ("append", "read")
    _need_async(obj, *methods, "aclose")
    return f"{kind}:{name}"


def _validate_frontend(obj: Any) -> str:
    name = _named(obj)
    if not isinstance(obj, _hs.Frontend):
        raise RegistrationError(f"frontend {name!r} lacks serve()")
    _need_async(obj, "serve")
    return name


def _validate_command(obj: Any) -> str:
    if not isinstance(obj, _hs.Command):
        raise RegistrationError(f"expected a Command, got {type(obj).__qualname__}")
    if not COMMAND_NAME.match(obj.name):
        raise RegistrationError(f"command name {obj.name!r} must match {COMMAND_NAME.pattern}")
    if not callable(obj.run) or (obj.configure is not None and not callable(obj.configure)):
        raise RegistrationError(f"command {obj.name!r}: run and configure must be callable")
    return obj.name


def _validate_check(obj: Any) -> str:
    if not isinstance(obj, _hs.Check) or not callable(obj.run):
        raise RegistrationError(f"expected a Check with a callable run, got {obj!r}")
    return obj.name


def _validate_event(obj: Any) -> str:
    if not (isinstance(obj, type) and issubclass(obj, _hs.Event)):
        raise RegistrationError(f"expected an Event subclass, got {obj!r}")
    try:
        name = _hs.event_name(obj)
    except TypeError as exc:
        raise RegistrationError(str(exc)) from None
    if not obj.__struct_config__.frozen:
        raise RegistrationError(f"event {name!r} must be frozen (immutable)")
    if issubclass(obj, _hs.CustomEvent) and not _custom_name().match(name):
        raise RegistrationError(
            f"custom event name {name!r} must be dotted lower case, like 'myplugin.thing'"
        )
    return name


def _validate_speech_engine(obj: Any) -> str:
    name = _named(obj)
    if not isinstance(obj, _hs.SpeechEngine):
        raise RegistrationError(f"speech engine {name!r} lacks synthesize(), voices() or "
                                "aclose()")
    _need_async(obj, "synthesize", "voices", "aclose")
    return name


def _validate_speech_recognizer(obj: Any) -> str:
    name = _named(obj)
    if not isinstance(obj, _hs.SpeechRecognizer) or not isinstance(
            getattr(obj, "remote", None), bool):
        raise RegistrationError(f"speech recognizer {name!r} lacks remote, destination or "
                                "recognize()")
    _need_async(obj, "recognize")
    return name


def _validate_embedder(obj: Any) -> str:
    name = _named(obj)
    if not isinstance(obj, _hs.Embedder) or not isinstance(getattr(obj, "remote", None), bool):
        raise RegistrationError(f"embedder {name!r} lacks model_id, dimension, remote, "
                                "destination or embed()")
    dimension = obj.dimension
    if isinstance(dimension, bool) or not isinstance(dimension, int) or dimension < 1:
        raise RegistrationError(f"embedder {name!r}: dimension must be a positive int, "
                                f"got {dimension!r}")
    if not isinstance(obj.model_id, str) or not obj.model_id:
        raise RegistrationError(f"embedder {name!r}: model_id must be a non-empty string")
    _need_async(obj, "embed")
    return name


def _validate_plan_recaller(obj: Any) -> str:
    name = _named(obj)
    if not isinstance(obj, _hs.PlanRecaller) or not callable(obj.similar_plans):
        raise RegistrationError(f"plan recaller {name!r} lacks similar_plans()")
    if inspect.iscoroutinefunction(obj.similar_plans):
        raise RegistrationError(f"plan recaller {name!r}: similar_plans must be "
                                "synchronous (it runs before every plan)")
    return name


def _validate_task_capability(obj: Any) -> str:
    name = _named(obj)
    if not isinstance(obj, _hs.TaskCapability):
        raise RegistrationError(f"task capability {name!r} lacks resource, timeout_s, "
                                "retryable or run()")
    timeout = obj.timeout_s
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not timeout > 0:
        raise RegistrationError(f"task capability {name!r}: timeout_s must be a positive "
                                f"number, got {timeout!r}")
    if not isinstance(obj.resource, str) or not obj.resource:
        raise RegistrationError(f"task capability {name!r}: resource must be a non-empty "
                                "string")
    _need_async(obj, "run")
    return name


def _validate_settings(obj: Any) -> str:
    """A settings class: attrs, every field with a default. The registry key is the
    plugin's name, given by the kernel; this returns the class's name."""
    import attrs

    if not (isinstance(obj, type) and attrs.has(obj)):
        raise RegistrationError(f"settings must be an attrs class, got {obj!r}")
    if missing := [a.name for a in attrs.fields(obj) if a.default is attrs.NOTHING]:
        raise RegistrationError(f"settings {obj.__qualname__}: every field needs a default "
                                f"(an empty section must be valid): {', '.join(missing)}")
    return obj.__qualname__


def _validate_copilot_analyzer(obj: Any) -> str:
    name = _named(obj)
    if not isinstance(obj, _hs.CopilotAnalyzer) or not isinstance(
            getattr(obj, "native", None), bool):
        raise RegistrationError(f"copilot analyzer {name!r} lacks native, supports() or "
                                "copilot_analyze()")
    _need_async(obj, "copilot_analyze")
    return name


#: kind → (registration hook, validator returning the registry key)
KINDS: dict[str, tuple[str, Callable[[Any], str]]] = {
    "providers": ("register_providers", _validate_provider),
    "tools": ("register_tools", _validate_tool),
    "context_providers": ("register_context_providers", _validate_context_provider),
    "policies": ("register_policies", _validate_policy),
    "stores": ("register_stores", _validate_store),
    "frontends": ("register_frontends", _validate_frontend),
    "commands": ("register_commands", _validate_command),
    "checks": ("register_checks", _validate_check),
    "events": ("register_events", _validate_event),
    "speech_engines": ("register_speech_engines", _validate_speech_engine),
    "speech_recognizers": ("register_speech_recognizers", _validate_speech_recognizer),
    #: keyed by the registering plugin's name: one settings class per plugin
    "settings_schemas": ("register_settings", _validate_settings),
    "copilot_analyzers": ("register_copilot_analyzers", _validate_copilot_analyzer),
    "embedders": ("register_embedders", _validate_embedder),
    "plan_recallers": ("register_plan_recallers", _validate_plan_recaller),
    "task_capabilities": ("register_task_capabilities", _validate_task_capability),
}


def validate(kind: str, obj: Any) -> str:
    """Validate ``obj`` as a ``kind`` registration and return its key."""
    return KINDS[kind][1](obj)


def _json(value: Any, **options: Any) -> bytes:
    import msgspec

    return msgspec.json.encode(value, **options)


def _custom_name() -> re.Pattern[str]:
    from adjutant_hookspecs._events import CUSTOM_NAME

    return CUSTOM_NAME

