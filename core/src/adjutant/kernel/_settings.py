"""Settings and profiles: JSON presets validated with attrs + cattrs.

A profile is a named preset (model, grammar and stops, temperature, system prompt,
tool allow-list, path cages, context providers, auto-speech, verbosity, token
budget, stores) stored as ``<data home>/profiles/<name>.json``. Only the keys a user
wants to change need be written; the rest keep their defaults. Validation is
strict (no ``"yes"`` for a bool, no ``1.5`` for an int, no unknown keys) and a bad
profile raises `ProfileError` listing every problem as ``reason @ $.field.path``.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal, get_args, get_origin

import attrs
from attrs import validators as v

__all__ = ["Budgets", "Cap", "ModelPreset", "Profile", "ProfileError", "RouterSettings",
           "list_profiles", "load_profile", "parse_profile", "plugin_section", "profile_path"]

Verbosity = Literal["quiet", "normal", "verbose", "debug"]
PROFILE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
#: An entry of a profile's ``tools`` allow-list: a tool name, where ``*`` stands for any
#: run of characters (``fs.read``, ``fs.*``, ``mcp.*.get``, ``*``). Anything else is
#: refused when the profile is loaded, so a typo never widens or silently empties it.
TOOL_GLOB = re.compile(r"[a-z0-9_*]+(\.[a-z0-9_*]+)*")
PLUGIN_NAME = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$"
#: Top-level keys of older profiles whose settings now belong to a plugin:
#: key -> (plugin, the key inside its section; None: the section itself).
LEGACY_KEYS = {"speech": ("tts", None), "auto_speech": ("tts", "auto_speech"),
               "listen": ("stt", None)}

DEFAULT_SYSTEM_PROMPT = (
    "You are Adjutant, an operator on the user's own machine. Answer with JSON only: "
    'either {"type":"response","text":"..."} or {"type":"plan","steps":[{"tool":"...",'
    '"args":{...},"explain":"..."}]} using only the tools listed.'
)


class ProfileError(ValueError):
    """A profile could not be loaded; ``problems`` lists ``reason @ $.path`` strings."""

    def __init__(self, source: str, problems: list[str]) -> None:
        self.source = source
        self.problems = problems
        super().__init__(f"invalid profile {source}:\n  " + "\n  ".join(problems))


@attrs.frozen
class ModelPreset:
    """Which model to use and how to sample it."""

    #: Name of a registered provider (``llama-cpp``, ``ollama``, ``openrouter``, ...).
    provider: str = "llama-cpp"
    model: str = "qwen2.5-coder-0.5b"
    #: 0 by default: a plan is chosen, not invented, and the same request plans the same
    #: way run after run (the embedded model then decodes greedily, its fastest path).
    temperature: float = attrs.field(default=0.0, validator=[v.ge(0.0), v.le(2.0)])
    #: A GBNF grammar constraining output; None lets the operator use its plan grammar.
    grammar: str | None = None
    stop: tuple[str, ...] = ()
    max_tokens: int = attrs.field(default=512, validator=[v.gt(0), v.le(1_000_000)])
    #: The context window to ask the backend for (tokens); None keeps its default.
    context_size: int | None = attrs.field(
        default=None, validator=v.optional([v.gt(0), v.le(10_000_000)]))
    #: What a million tokens cost on this preset, in US dollars (prompt, completion):
    #: the estimate a budget is checked against before a call. 0: the model costs
    #: nothing (a local one), and no cost cap ever blocks it.
    prompt_cost_per_mtok: float = attrs.field(default=0.0, validator=[v.ge(0.0),
                                                                      v.le(100_000.0)])
    completion_cost_per_mtok: float = attrs.field(default=0.0, validator=[v.ge(0.0),
                                                                          v.le(100_000.0)])
    #: For a GGUF named by path: its SHA-256, checked before it is loaded.
    sha256: str | None = attrs.field(default=None, validator=v.optional(
        v.matches_re(r"^[0-9a-f]{64}$")))


def _not_default(name: str) -> None:
    if name == "default":
        raise ValueError("'models' may not name a preset 'default': that is the profile's "
                         "'model'")


def _escalation_known(profile: Profile) -> None:
    target = profile.router.escalate_to
    if target is not None and target != "default" and target not in profile.models:
        known = ", ".join(["default", *profile.models])
        raise ValueError(f"'router.escalate_to' names no preset: {target!r} (known: {known})")


@attrs.frozen
class RouterSettings:
    """Which preset a request goes to. A request stays on the profile's ``model`` (the
    ``default`` preset) unless it is long, carries files, or offers many tools, and
    ``escalate_to`` names a stronger preset (in ``models``); no rule ever picks a preset
    the user did not set up."""

    #: The preset (a name in ``models``) for long or heavy requests; None: never switch.
    escalate_to: str | None = None
    #: A request whose prompt and context come to more than this many tokens (estimated
    #: at four characters a token) is long.
    long_tokens: int = attrs.field(default=2000, validator=[v.gt(0), v.le(10_000_000)])
    #: This many files attached to the request (included in its context) or more.
    attachments: int = attrs.field(default=1, validator=[v.gt(0), v.le(10_000)])
    #: This many tools offered or more.
    many_tools: int = attrs.field(default=64, validator=[v.gt(0), v.le(100_000)])


@attrs.frozen
class Cap:
    """A spending limit: tokens (prompt and completion) and US dollars; None: no limit."""

    tokens: int | None = attrs.field(default=None, validator=v.optional(v.ge(0)))
    cost_usd: float | None = attrs.field(default=None, validator=v.optional(v.ge(0.0)))


@attrs.frozen
class Budgets:
    """Caps per request and per calendar day, week (Monday first) and month, checked
    before every model call that costs something. A preset whose calls cost nothing (a
    local model, prices 0) is counted and shown, never blocked."""

    request: Cap = Cap()
    day: Cap = Cap()
    week: Cap = Cap()
    month: Cap = Cap()


def _bad_tool_globs(value: Any) -> list[tuple[int, str]]:
    """``(index, reason)`` for each entry of a ``tools`` list that is no tool glob."""
    return [(index, f"{entry!r} is not a tool name or glob (lower-case letters, digits, "
                    "_ and * between dots, e.g. fs.*)")
            for index, entry in enumerate(value)
            if isinstance(entry, str) and not TOOL_GLOB.fullmatch(entry)]


def _tool_globs(instance: Any, attribute: Any, value: tuple[str, ...]) -> None:
    for index, reason in _bad_tool_globs(value):
        raise ValueError(f"'tools'[{index}] {reason}")


@functools.lru_cache(maxsize=64)
def _allow_list(patterns: tuple[str, ...]) -> re.Pattern[str] | None:
    """One regular expression for an allow-list; None for the empty list (no tool)."""
    parts = [".*".join(re.escape(piece) for piece in p.split("*"))
             for p in patterns if TOOL_GLOB.fullmatch(p)]  # malformed: matches nothing
    return re.compile("|".join(f"(?:{part})" for part in parts)) if parts else None


@attrs.frozen
class Profile:
    """A named preset. Fail closed: an empty tool allow-list allows no tool."""

    name: str = attrs.field(default="default", validator=v.matches_re(PROFILE_NAME))
    model: ModelPreset = ModelPreset()
    system_prompt: str = DEFAULT_SYSTEM_PROMPT
    #: Tool names or globs (``fs.*``) the operator may plan with, and the only tools
    #: that run, whoever asks (the safety pipeline refuses the others). Absent: all
    #: tools (``["*"]``); empty: none.
    tools: tuple[str, ...] = attrs.field(default=("*",), validator=_tool_globs)
    #: Directories writes may touch; ``{workspace}`` and ``{scratch}`` are expanded.
    path_cages: tuple[str, ...] = ("{workspace}", "{scratch}")
    #: Context providers switched on (True) or off (False) by name; unlisted ones are on.
    context_providers: dict[str, bool] = attrs.field(factory=dict)
    verbosity: Verbosity = "normal"
    token_budget: int = attrs.field(default=4096, validator=[v.gt(0), v.le(10_000_000)])
    #: How many tools the planner offers per request, the most relevant first (0: every
    #: allowed tool, up to 32: the model chooses; bench/planning.py measured this against 4).
    tool_menu: int = attrs.field(default=0, validator=[v.ge(0), v.le(1000)])
    #: Which registered store keeps the action log (``"log"``) and the operator's state
    #: (``"kv"``), by name (``{"log": "lmdb", "kv": "lmdb"}``); unnamed: the only
    #: durable one (`adjutant.kernel._stores`).
    stores: dict[str, str] = attrs.field(factory=dict, validator=v.deep_mapping(
        key_validator=v.in_(("log", "kv")), value_validator=v.instance_of(str)))
    #: Each plugin's own settings, by plugin name, in the shape the plugin declares
    #: (``register_settings``); validated when the plugin reads them and by
    #: ``adjutant doctor``. A section for a plugin not installed is kept, unread.
    plugins: dict[str, dict[str, Any]] = attrs.field(factory=dict, validator=v.deep_mapping(
        key_validator=v.matches_re(PLUGIN_NAME), value_validator=v.instance_of(dict)))
    #: More presets by name (``model`` is the one named ``default``): a remote or larger
    #: model the router may send a request to (``router.escalate_to``), or that "try a
    #: stronger model" uses.
    models: dict[str, ModelPreset] = attrs.field(factory=dict, validator=v.deep_mapping(
        key_validator=[v.matches_re(PROFILE_NAME), lambda _i, _a, key: _not_default(key)],
        value_validator=v.instance_of(ModelPreset)))
    router: RouterSettings = attrs.field(default=RouterSettings())
    budgets: Budgets = Budgets()

    def __attrs_post_init__(self) -> None:
        _escalation_known(self)

    def preset(self, name: str) -> ModelPreset:
        """The preset named ``name`` (``default``: ``model``); `KeyError` if none."""
        return self.model if name == "default" else self.models[name]

    def presets(self) -> list[str]:
        """Every preset's name, ``default`` first, then ``models`` in their order."""
        return ["default", *self.models]

    def allows(self, tool: str) -> bool:
        """Whether the ``tools`` allow-list lets ``tool`` run (or be offered at all)."""
        pattern = _allow_list(self.tools)
        return pattern is not None and pattern.fullmatch(tool) is not None

    def describe_tools(self) -> str:
        """The allow-list as the profile file spells it, for refusals and status."""
        import json

        return f'"tools": {json.dumps(list(self.tools))}'

    def replace(self, **changes: Any) -> Profile:
        """A copy with ``changes`` applied (validated like the profile)."""
        return attrs.evolve(self, **changes)

    def as_dict(self) -> dict[str, Any]:
        """The profile as plain data (what its JSON file would hold, every key)."""
        return attrs.asdict(self)


def _strict_converter() -> Any:
    """A cattrs converter that refuses coercions JSON users would not expect."""
    import cattrs

    conv = cattrs.Converter(forbid_extra_keys=True, detailed_validation=True)

    def scalar(kind: type, accept: tuple[type, ...]) -> Any:
        def structure(value: Any, _: Any) -> Any:
            if (isinstance(value, bool) and kind is not bool) or not isinstance(value, accept):
                raise TypeError(f"expected {kind.__name__}, got {type(value).__name__}")
            return kind(value)

        return structure

    conv.register_structure_hook(str, scalar(str, (str,)))
    conv.register_structure_hook(int, scalar(int, (int,)))
    conv.register_structure_hook(float, scalar(float, (int, float)))
    conv.register_structure_hook(bool, scalar(bool, (bool,)))

    def is_homogeneous_tuple(t: Any) -> bool:
        return get_origin(t) is tuple and len(get_args(t)) == 2 and get_args(t)[1] is Ellipsis

    def structure_tuple(value: Any, t: Any) -> tuple[Any, ...]:
        if not isinstance(value, list | tuple):
            raise TypeError(f"expected a list, got {type(value).__name__}")
        item, out, errors = get_args(t)[0], [], []
        for index, x in enumerate(value):
            try:
                out.append(conv.structure(x, item))
            except Exception as exc:  # collect all, with the index, as cattrs does for lists
                note = cattrs.IterableValidationNote(f"Structuring @ index {index}", index, item)
                exc.__notes__ = [*getattr(exc, "__notes__", []), note]
                errors.append(exc)
        if errors:
            raise cattrs.IterableValidationError(f"While structuring {t!r}", errors, t)
        return tuple(out)

    conv.register_structure_hook_func(is_homogeneous_tuple, structure_tuple)
    return conv


_converter: Any = None


def _describe(exc: BaseException, _type: Any) -> str:
    """Reason text for one failure (attrs validators already name the field)."""
    import cattrs

    if isinstance(exc, KeyError):
        return "required field missing"
    if isinstance(exc, cattrs.ForbiddenExtraKeysError):
        allowed = ", ".join(a.name for a in attrs.fields(exc.cl))
        return f"unknown field(s) {', '.join(sorted(exc.extra_fields))} (known: {allowed})"
    text = str(exc) or type(exc).__name__
    return text.replace("typing.", "")


def parse_profile(data: Mapping[str, Any], *, source: str = "<profile>") -> Profile:
    """Validate a decoded profile document; raise `ProfileError` on any problem."""
    import cattrs

    global _converter
    if _converter is None:
        _converter = _strict_converter()
    if not isinstance(data, Mapping):
        raise ProfileError(source, [f"expected a JSON object, got {type(data).__name__} @ $"])
    # named with their index here: the class's own check can only say "@ $"
    legacy = [f"expected a JSON object, got {type(data[key]).__name__} @ $.{key}"
              for key, (_, inner) in LEGACY_KEYS.items()
              if inner is None and key in data and not isinstance(data[key], Mapping)]
    if legacy:
        raise ProfileError(source, legacy)
    data = _moved_to_plugins(data)
    tools = data.get("tools")
    listed = [f"{reason} @ $.tools[{index}]" for index, reason in
              (_bad_tool_globs(tools) if isinstance(tools, list | tuple) else [])]
    plugins = data.get("plugins", {})
    sections = plugins.items() if isinstance(plugins, Mapping) else [("", plugins)]
    listed += [f"expected a JSON object, got {type(section).__name__} @ $.plugins"
               + (f".{name}" if name else "")
               for name, section in sections if not isinstance(section, Mapping)]
    if any(p.endswith("@ $.plugins") or "@ $.plugins." in p for p in listed):
        raise ProfileError(source, listed)
    try:
        return _converter.structure(dict(data), Profile)  # type: ignore[no-any-return]
    except cattrs.BaseValidationError as exc:
        problems = cattrs.transform_error(exc, "$", _describe)
    except (TypeError, ValueError) as exc:
        problems = [f"{exc} @ $"]
    problems = listed + [p for p in problems if not (listed and p.startswith("'tools'["))]
    raise ProfileError(source, problems) from None


def _moved_to_plugins(data: Mapping[str, Any]) -> Mapping[str, Any]:
    """An older profile's ``speech``/``auto_speech``/``listen`` as the ``tts`` and
    ``stt`` plugins' sections (a value already in the section wins)."""
    if not any(key in data for key in LEGACY_KEYS):
        return data
    data = dict(data)
    plugins = data.get("plugins", {})
    if not isinstance(plugins, Mapping):
        return data  # the class's own check names it
    plugins = {name: dict(section) if isinstance(section, Mapping) else section
               for name, section in plugins.items()}
    for key, (plugin, inner) in LEGACY_KEYS.items():
        if key not in data:
            continue
        value = data.pop(key)
        section = plugins.setdefault(plugin, {})
        if not isinstance(section, dict):
            continue
        if inner is not None:
            section.setdefault(inner, value)
        elif isinstance(value, Mapping):
            for name, item in value.items():
                section.setdefault(name, item)
    data["plugins"] = plugins
    return data


def plugin_section(profile: Profile, plugin: str, schema: type[Any]) -> Any:
    """``profile.plugins[plugin]`` validated into ``schema`` (an attrs class) with the
    profile's own strictness; `ProfileError` names each problem under
    ``$.plugins.<plugin>``."""
    import cattrs

    global _converter
    if _converter is None:
        _converter = _strict_converter()
    section = profile.plugins.get(plugin, {})
    where = f"$.plugins.{plugin}"
    try:
        return _converter.structure(dict(section), schema)
    except cattrs.BaseValidationError as exc:
        problems = cattrs.transform_error(exc, where, _describe)
    except (TypeError, ValueError) as exc:
        problems = [f"{exc} @ {where}"]
    raise ProfileError(repr(profile.name), problems) from None


def profile_path(home: Path, name: str) -> Path:
    if not PROFILE_NAME.match(name):
        raise ProfileError(name, [f"profile name {name!r} must match {PROFILE_NAME.pattern}"])
    return home / "profiles" / f"{name}.json"


def load_profile(home: Path, name: str = "default") -> Profile:
    """Load ``<home>/profiles/<name>.json``; the built-in default if ``default`` is absent."""
    import msgspec

    path = profile_path(home, name)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        if name == "default":
            return Profile()
        known = ", ".join(list_profiles(home)) or "none"
        raise ProfileError(str(path), [f"no such profile (known: {known})"]) from None
    except OSError as exc:
        raise ProfileError(str(path), [f"cannot read: {exc.strerror}"]) from None
    try:
        data = msgspec.json.decode(raw)
    except msgspec.DecodeError as exc:
        raise ProfileError(str(path), [f"not valid JSON: {exc}"]) from None
    if isinstance(data, dict):
        data.setdefault("name", name)
    return parse_profile(data, source=str(path))


def list_profiles(home: Path) -> list[str]:
    """Names of the profiles saved under ``home`` (the built-in default always exists)."""
    names = {p.stem for p in (home / "profiles").glob("*.json")}
    return sorted(names | {"default"})
