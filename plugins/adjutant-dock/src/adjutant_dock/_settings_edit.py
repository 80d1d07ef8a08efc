"""Settings that edit: one change at a time to the profile in use (the model, its
temperature, the working folders, each plugin's declared section), checked by the profile loader and
the plugin's own schema (the loader's errors, ``reason @ $.path``), written to the
profile's file atomically, logged (``dock_settings``), then in force.

- ``GET /api/settings/form``: what can be edited and the current values, each
  plugin's fields from the settings class it declared (``register_settings``).
- ``POST /api/settings/edit`` ``{"model": {"provider": "llama-cpp", "model": "..."}}`` |
  ``{"temperature": 0.4}`` | ``{"cages": [...]}`` |
  ``{"plugins": {"tts": {"auto_speech": false}}}``.
- ``GET /api/folders?path=/abs/dir``: the folders a cage may be picked from (a folder
  picker limited to what the user may grant: never ``/``, a top-level folder, the
  home folder or one holding it).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import typing
from pathlib import Path
from typing import Any

import anyio
import attrs
import msgspec
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from adjutant import ProfileError, parse_profile, plugin_section, profile_path

from ._records import DockSettingsRecord
from ._scopes import home_of, too_wide
from ._state import dock_of, error, read_json, snapshot

__all__ = ["routes"]

#: Cage entries that are templates the loader expands, kept as they are.
TEMPLATES = ("{workspace}", "{scratch}")


def _fields(schema: type[Any], current: Any) -> list[dict[str, Any]]:
    """A plugin's settings class as form fields: name, kind, value, choices."""
    hints = typing.get_type_hints(schema)
    out = []
    for field in attrs.fields(schema):
        hint = hints.get(field.name, str)
        args = [a for a in typing.get_args(hint) if a is not type(None)]
        nullable = type(None) in typing.get_args(hint)
        base = args[0] if nullable and len(args) == 1 else hint
        if typing.get_origin(base) is typing.Literal:
            kind, choices = "choice", list(typing.get_args(base))
        elif base is bool:
            kind, choices = "bool", None
        elif base in (int, float):
            kind, choices = base.__name__, None
        elif base is str:
            kind, choices = "text", None
        else:
            continue  # lists, nested sections: the profile file's to edit
        out.append({"name": field.name, "kind": kind, "nullable": nullable,
                    "value": getattr(current, field.name), "choices": choices})
    return out


async def form(request: Request) -> Response:
    kernel = dock_of(request).kernel
    profile = kernel.profile
    plugins = {}
    for name, schema in sorted(kernel.settings_schemas.items()):
        try:
            current = kernel.plugin_settings(schema)
            problems: list[str] = []
        except ProfileError as exc:
            current, problems = schema(), exc.problems
        plugins[name] = {"fields": _fields(schema, current), "problems": problems}
    return JSONResponse({
        "profile": profile.name, "file": str(profile_path(Path(kernel.home), profile.name)),
        "model": f"{profile.model.provider}:{profile.model.model}",
        "provider": profile.model.provider, "model_name": profile.model.model,
        "providers": [{"name": name, "remote": _remote(provider)}
                      for name, provider in sorted(kernel.providers.items())],
        "temperature": profile.model.temperature, "cages": list(profile.path_cages),
        "plugins": plugins})


def _remote(provider: Any) -> bool:
    """Whether the provider sends requests off this machine (said beside its name)."""
    from adjutant.providers import capabilities_of

    return bool(capabilities_of(provider).remote)


def _file_data(path: Path) -> dict[str, Any]:
    """The profile file as written (not its expansion): a change keeps the rest."""
    try:
        data = msgspec.json.decode(path.read_bytes())
    except FileNotFoundError:
        return {}
    if not isinstance(data, dict):
        raise ProfileError(str(path), ["the profile file is not a JSON object @ $"])
    return data


def _changed(data: dict[str, Any], change: dict[str, Any], kernel: Any) -> list[str]:
    """Apply ``change`` to the file's data; the plugin sections it touched."""
    touched: list[str] = []
    unknown = set(change) - {"model", "temperature", "cages", "plugins"}
    if unknown or len(change) != 1:
        raise ProfileError("the change", [
            "send one of model, temperature, cages, plugins @ $" + (
                f".{sorted(unknown)[0]}" if unknown else "")])
    if "model" in change:
        given = change["model"]
        if not isinstance(given, dict) or set(given) - {"provider", "model"} or not all(
                isinstance(given.get(k), str) and given[k].strip() for k in ("provider", "model")):
            raise ProfileError("the change", [
                "model must be {\"provider\": \"...\", \"model\": \"...\"} @ $.model"])
        if given["provider"] not in kernel.providers:
            raise ProfileError("the change", [
                f"no model provider named {given['provider']!r} is installed (installed: "
                f"{', '.join(sorted(kernel.providers)) or 'none'}) @ $.model.provider"])
        model = data.setdefault("model", {})
        if not isinstance(model, dict):
            raise ProfileError("the profile", ["model must be an object @ $.model"])
        model.update(provider=given["provider"], model=given["model"].strip())
    if "temperature" in change:
        model = data.setdefault("model", {})
        if not isinstance(model, dict):
            raise ProfileError("the profile", ["model must be an object @ $.model"])
        model["temperature"] = change["temperature"]
    if "cages" in change:
        data["path_cages"] = _cages(change["cages"], kernel)
    if "plugins" in change:
        given = change["plugins"]
        if not isinstance(given, dict):
            raise ProfileError("the change", ["plugins must be an object @ $.plugins"])
        sections = data.setdefault("plugins", {})
        for name, values in given.items():
            if name not in kernel.settings_schemas or not isinstance(values, dict):
                raise ProfileError("the change", [
                    f"no plugin declared settings named {name!r} @ $.plugins.{name}"])
            sections.setdefault(name, {}).update(values)
            touched.append(name)
    return touched


def _cages(cages: Any, kernel: Any) -> list[str]:
    """The working folders: templates kept, others real folders the user may grant."""
    if not isinstance(cages, list) or not all(isinstance(c, str) for c in cages):
        raise ProfileError("the change", ["cages must be a list of folders @ $.cages"])
    home, problems = home_of(kernel), []
    for i, cage in enumerate(cages):
        if cage in TEMPLATES:
            continue
        real = os.path.realpath(cage)
        if not os.path.isabs(cage) or not os.path.isdir(real):
            problems.append(f"not an existing absolute folder: {cage!r} @ $.cages[{i}]")
        elif (why := too_wide(real, home)) is not None:
            problems.append(f"{cage!r} cannot be a working folder: {why} @ $.cages[{i}]")
    if problems:
        raise ProfileError("the change", problems)
    return cages


def _write_atomically(path: Path, data: dict[str, Any]) -> None:
    """The whole file or the old one, never half: a temporary file beside it,
    flushed to disk, renamed over it."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    handle, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(msgspec.json.format(msgspec.json.encode(data), indent=2) + b"\n")
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    folder = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(folder)
    finally:
        os.close(folder)


async def edit(request: Request) -> Response:
    dock = dock_of(request)
    kernel = dock.kernel
    change = await read_json(request)
    if not isinstance(change, dict):
        return error(400, "send one change as JSON: {\"temperature\": 0.4}, "
                     "{\"cages\": [...]} or {\"plugins\": {\"<plugin>\": {...}}}")
    path = profile_path(Path(kernel.home), kernel.profile.name)
    try:
        data = _file_data(path)
        touched = _changed(data, change, kernel)
        data.setdefault("name", kernel.profile.name)
        profile = parse_profile(data, source=str(path))
        for name in touched:  # each plugin's own schema, with the loader's paths
            plugin_section(profile, name, kernel.settings_schemas[name])
    except ProfileError as exc:
        return JSONResponse({"ok": False, "problems": exc.problems}, status_code=422)
    except msgspec.DecodeError as exc:
        return JSONResponse({"ok": False, "problems": [f"{path}: not valid JSON: {exc}"]},
                            status_code=422)
    await anyio.to_thread.run_sync(_write_atomically, path, data)
    await dock.copilot.log.record(DockSettingsRecord(
        profile=profile.name, path=str(path), change=change))
    await dock.copilot.use_preset(profile)  # in force from the next request
    return JSONResponse({"ok": True, "problems": [], "state": await snapshot(dock)})


async def folders(request: Request) -> Response:
    kernel = dock_of(request).kernel
    params = request.query_params
    if unknown := set(params) - {"path"}:
        return error(400, f"unknown parameter(s): {', '.join(sorted(unknown))} (path)")
    home = home_of(kernel)
    given = params.get("path") or home
    if not os.path.isabs(given) or "\x00" in given:
        return error(400, f"path must be an absolute folder, not {given!r}")
    try:
        return JSONResponse(await anyio.to_thread.run_sync(_listing, given, home))
    except OSError as exc:
        return error(404, f"cannot list {given!r}: {exc.strerror}")


def _listing(given: str, home: str) -> dict[str, Any]:
    """The folders in ``given`` (not hidden, not links), each marked grantable or not."""
    real = os.path.realpath(given)
    names = sorted(e.name for e in os.scandir(real)
                   if e.is_dir(follow_symlinks=False) and not e.name.startswith("."))
    rows = [{"name": name, "path": os.path.join(real, name),
             "grantable": too_wide(os.path.join(real, name), home) is None}
            for name in names[:500]]
    return {"path": real, "parent": os.path.dirname(real),
            "grantable": too_wide(real, home) is None, "folders": rows}

routes = [
    Route("/api/settings/form", form),
    Route("/api/settings/edit", edit, methods=["POST"]),
    Route("/api/folders", folders),
]
