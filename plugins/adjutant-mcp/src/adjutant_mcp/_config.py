"""Which MCP servers there are: the common ``mcp.json`` shapes, merged with an overlay.

Sources, later ones winning on a name:

1. the workspace's ``.vscode/mcp.json`` (``{"servers": ...}``) and ``.mcp.json``
   (``{"mcpServers": ...}``);
2. the user's ``<data home>/mcp.json`` (either shape);
3. the overlay ``<data home>/mcp/overlay.json`` that ``adjutant mcp add|enable|
   disable|remove`` manage: added servers, disabled names, removed names, trusted
   workspace definitions.

A workspace file arrives with a cloned repository, and a stdio server is a program
to run: a workspace server stays off until the user enables it, and that trust is
bound to the hash of its definition (a changed command needs enabling again).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import attrs

__all__ = ["ConfigError", "Overlay", "ServerSpec", "load_servers", "parse_server", "sources"]

WORKSPACE_FILES = (".vscode/mcp.json", ".mcp.json")
_VAR = re.compile(r"\$\{([^}]*)\}")
DEFAULT_TIMEOUT = 60.0


class ConfigError(ValueError):
    """A configuration file or entry that cannot be used; the message says where."""


@attrs.frozen
class ServerSpec:
    """One configured MCP server, resolved."""

    name: str
    #: The mount segment: ``mcp.<key>.<tool>`` (the name, made a valid identifier).
    key: str
    transport: Literal["stdio", "http"]
    source: str
    command: str = ""
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = attrs.field(factory=dict)
    cwd: str | None = None
    url: str = ""
    headers: Mapping[str, str] = attrs.field(factory=dict)
    #: Tools the *user* says only read / stay on this machine (server hints are ignored).
    read_only: frozenset[str] = frozenset()
    local: frozenset[str] = frozenset()
    #: Argument names (any of its tools) that name files here: the guard cages them.
    path_args: frozenset[str] = frozenset()
    #: tool -> (a request in words, the arguments it takes): a worked example for the
    #: planner, from the user (servers' own examples are not trusted)
    examples: Mapping[str, tuple[str, dict[str, Any]]] = attrs.field(factory=dict)
    #: OAuth settings of an HTTP server, for an authorization server without dynamic
    #: registration: ``clientId``, ``clientSecret``, ``scope`` (see `adjutant_mcp._oauth`)
    oauth: Mapping[str, str] = attrs.field(factory=dict)
    timeout: float = DEFAULT_TIMEOUT
    enabled: bool = True
    #: Why it is off, or what is wrong with its entry (then it never starts).
    note: str = ""
    error: str = ""
    workspace: bool = False

    @property
    def digest(self) -> str:
        """What trust is bound to: everything that decides which program runs where."""
        what = {"transport": self.transport, "command": self.command, "args": self.args,
                "env": dict(self.env), "cwd": self.cwd, "url": self.url,
                "headers": dict(self.headers)}
        return hashlib.sha256(json.dumps(what, sort_keys=True).encode()).hexdigest()

    @property
    def target(self) -> str:
        """How it is reached, for people: the command line or the URL."""
        if self.transport == "http":
            return self.url
        return " ".join([self.command, *self.args])


def segment(name: str) -> str:
    """A name as a tool-name segment: lower case letters, digits and underscores."""
    key = re.sub(r"[^a-z0-9_]+", "_", name.lower()).strip("_")
    return key if key[:1].isalpha() else f"s_{key}"


def _expand(value: str, where: str, variables: Mapping[str, str], env: Mapping[str, str]) -> str:
    def one(match: re.Match[str]) -> str:
        name = match.group(1)
        if name in variables:
            return variables[name]
        if name.startswith("env:"):
            return env.get(name[4:], "")
        raise ConfigError(f"{where}: ${{{name}}} is not supported (Adjutant does not prompt "
                          "for inputs; put the value in the server's env instead)")
    return _VAR.sub(one, value)


def _strings(value: Any, where: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where} must be a list of strings")
    return tuple(value)


def _mapping(value: Any, where: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise ConfigError(f"{where} must map names to strings")
    return dict(value)


def parse_server(name: str, entry: Any, *, source: str, workspace: str,
                 env: Mapping[str, str], is_workspace: bool = False) -> ServerSpec:
    """One entry of either shape; raises `ConfigError` naming the file and the key."""
    where = f"{source}: server {name!r}"
    if not isinstance(entry, dict):
        raise ConfigError(f"{where} must be an object")
    variables = {"workspaceFolder": workspace, "userHome": env.get("HOME", ""),
                 "pathSeparator": os.sep}
    kind = entry.get("type")
    if kind in (None, "stdio") and "command" in entry:
        transport: Literal["stdio", "http"] = "stdio"
    elif kind in (None, "http", "streamable-http", "streamableHttp") and "url" in entry:
        transport = "http"
    elif kind == "sse":
        raise ConfigError(f"{where}: the SSE transport is deprecated and not supported; "
                          "use the server's streamable HTTP endpoint")
    else:
        raise ConfigError(f"{where} needs a 'command' (stdio) or a 'url' (streamable HTTP)")
    if not isinstance(entry.get("command", ""), str) or not isinstance(entry.get("url", ""), str):
        raise ConfigError(f"{where}: 'command' and 'url' must be strings")
    ours = entry.get("adjutant") or {}
    if not isinstance(ours, dict):
        raise ConfigError(f"{where}: 'adjutant' must be an object")
    timeout = ours.get("timeout", DEFAULT_TIMEOUT)
    if not isinstance(timeout, int | float) or isinstance(timeout, bool) or timeout <= 0:
        raise ConfigError(f"{where}: adjutant.timeout must be a positive number of seconds")

    examples: dict[str, tuple[str, dict[str, Any]]] = {}
    for tool, example in (ours.get("examples") or {}).items():
        if not (isinstance(example, dict) and isinstance(example.get("request"), str)
                and isinstance(example.get("args"), dict)):
            raise ConfigError(f"{where}: adjutant.examples.{tool} must be "
                              '{"request": "...", "args": {...}}')
        examples[tool] = (example["request"], example["args"])

    def x(value: str, key: str) -> str:
        return _expand(value, f"{where}.{key}", variables, env)

    return ServerSpec(
        name=name, key=segment(name), transport=transport, source=source,
        command=x(entry.get("command", ""), "command"),
        args=tuple(x(a, "args") for a in _strings(entry.get("args"), f"{where}.args")),
        env={k: x(v, "env") for k, v in _mapping(entry.get("env"), f"{where}.env").items()},
        cwd=x(entry["cwd"], "cwd") if isinstance(entry.get("cwd"), str) else None,
        url=x(entry.get("url", ""), "url"),
        headers={k: x(v, "headers") for k, v in
                 _mapping(entry.get("headers"), f"{where}.headers").items()},
        read_only=frozenset(_strings(ours.get("readOnlyTools"), f"{where}.adjutant.readOnlyTools")),
        local=frozenset(_strings(ours.get("localTools"), f"{where}.adjutant.localTools")),
        path_args=frozenset(_strings(ours.get("pathArguments"),
                                     f"{where}.adjutant.pathArguments")),
        examples=examples,
        oauth={k: x(v, f"adjutant.oauth.{k}") for k, v in
               _mapping(ours.get("oauth"), f"{where}.adjutant.oauth").items()
               if k in ("clientId", "clientSecret", "scope")},
        timeout=float(timeout),
        enabled=not entry.get("disabled", False),
        note="disabled in its file" if entry.get("disabled") else "",
        workspace=is_workspace,
    )


def _read(path: Path) -> dict[str, Any] | None:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot be read: {exc}") from None
    try:
        data = json.loads(text) if text.strip() else {}
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path}: not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: must hold a JSON object")
    return data


def sources(home: Path, workspace: str) -> list[tuple[Path, bool]]:
    """The files read, in order, each with whether it came with the workspace."""
    found = [(Path(workspace) / name, True) for name in WORKSPACE_FILES]
    return [*found, (home / "mcp.json", False)]


@attrs.define
class Overlay:
    """What Adjutant's own commands changed; kept in ``<home>/mcp/overlay.json``."""

    path: Path
    servers: dict[str, Any] = attrs.Factory(dict)
    disabled: list[str] = attrs.Factory(list)
    removed: list[str] = attrs.Factory(list)
    trusted: dict[str, str] = attrs.Factory(dict)

    @classmethod
    def load(cls, home: Path) -> Overlay:
        path = home / "mcp" / "overlay.json"
        data = _read(path) or {}
        try:
            return cls(path, dict(data.get("servers", {})), list(data.get("disabled", [])),
                       list(data.get("removed", [])), dict(data.get("trusted", {})))
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"{path}: malformed overlay: {exc}") from None

    def save(self) -> None:
        """Atomically: a crash leaves the old file or the new one, never half of one."""
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        data = {"servers": self.servers, "disabled": sorted(set(self.disabled)),
                "removed": sorted(set(self.removed)), "trusted": self.trusted}
        tmp = self.path.with_suffix(".tmp")
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(data, f, indent=2, sort_keys=True)
            f.write("\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.path)


def load_servers(home: Path, workspace: str, env: Mapping[str, str]
                 ) -> tuple[dict[str, ServerSpec], list[str]]:
    """Every configured server by name, and the problems found (files or entries)."""
    servers: dict[str, ServerSpec] = {}
    problems: list[str] = []
    try:
        overlay = Overlay.load(home)
    except ConfigError as exc:
        problems.append(str(exc))
        overlay = Overlay(home / "mcp" / "overlay.json")
    layers: list[tuple[str, dict[str, Any], bool]] = []
    for path, is_workspace in sources(home, workspace):
        try:
            data = _read(path)
        except ConfigError as exc:
            problems.append(str(exc))
            continue
        if data is None:
            continue
        entries = data.get("servers", data.get("mcpServers", {}))
        if not isinstance(entries, dict):
            problems.append(f"{path}: 'servers' / 'mcpServers' must be an object")
            continue
        layers.append((str(path), entries, is_workspace))
    layers.append((str(overlay.path), overlay.servers, False))
    for source, entries, is_workspace in layers:
        for name, entry in entries.items():
            try:
                spec = parse_server(name, entry, source=source, workspace=workspace, env=env,
                                    is_workspace=is_workspace)
            except ConfigError as exc:
                problems.append(str(exc))
                spec = ServerSpec(name=name, key=segment(name), transport="stdio",
                                  source=source, enabled=False, error=str(exc),
                                  workspace=is_workspace)
            servers[name] = spec
    for name, spec in list(servers.items()):
        if name in overlay.removed and spec.source != str(overlay.path):
            del servers[name]
            continue
        if spec.workspace and overlay.trusted.get(name) != spec.digest:
            was = "changed since you enabled it" if name in overlay.trusted else "not enabled"
            servers[name] = attrs.evolve(spec, enabled=False, note=(
                f"from the workspace ({spec.source}), {was}: `adjutant mcp enable {name}` "
                "to trust it"))
        elif name in overlay.disabled:
            servers[name] = attrs.evolve(spec, enabled=False,
                                         note="disabled (`adjutant mcp enable` to start it)")
    keys: dict[str, str] = {}
    for name, spec in list(servers.items()):
        if spec.key in keys:
            problems.append(f"servers {keys[spec.key]!r} and {name!r} both mount as "
                            f"mcp.{spec.key}.*; {name!r} is ignored (rename one)")
            del servers[name]
            continue
        keys[spec.key] = name
    return servers, problems
