"""``project``: name, version and language from the build files in the cwd.

A build file is read only through core's check for files joining a prompt
(`adjutant.safety.protection.PromptFiles`, caged to the cwd): a ``pyproject.toml``
linked out of the project, to a protected file, or with a second hard link is not read
and not listed.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ._common import Source, data_home

if TYPE_CHECKING:
    from adjutant.safety.protection import PromptFiles

__all__ = ["BUILD_FILES", "ProjectProvider", "describe"]

#: Build files looked for, in priority order (the first that names a project wins).
BUILD_FILES = {"pyproject.toml": "python", "package.json": "javascript",
               "Cargo.toml": "rust", "go.mod": "go"}
_MAX_BYTES = 1 << 20
_GO_MODULE = re.compile(r"^\s*module\s+\"?([^\s\"]+)\"?", re.M)


def _text(path: str, files: PromptFiles) -> str | None:
    try:
        data = files.read(path, _MAX_BYTES).data
    except OSError:  # refused (PromptFileRefused is a PermissionError) or unreadable
        return None
    return data.decode("utf-8", errors="replace")


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _metadata(file: str, text: str) -> tuple[str | None, str | None]:
    """(name, version) declared in one build file; (None, None) if it declares none."""
    import tomllib

    try:
        if file == "pyproject.toml":
            data = tomllib.loads(text)
            table = data.get("project") or data.get("tool", {}).get("poetry") or {}
        elif file == "Cargo.toml":
            table = tomllib.loads(text).get("package") or {}
        elif file == "package.json":
            table = json.loads(text)
        else:  # go.mod: the module path names the project; versions live in tags
            match = _GO_MODULE.search(text)
            return (match.group(1) if match else None), None
    except (ValueError, AttributeError):  # tomllib.TOMLDecodeError is a ValueError
        return None, None
    if not isinstance(table, dict):
        return None, None
    return _str(table.get("name")), _str(table.get("version"))


def describe(cwd: str) -> dict[str, Any] | None:
    """The project in ``cwd``, or None when no build file is there."""
    from adjutant.safety.protection import PromptFiles

    gate = PromptFiles([cwd], data_home=str(data_home()))
    files = [f for f in BUILD_FILES if os.path.isfile(os.path.join(cwd, f))
             and gate.refusal(os.path.join(cwd, f)) is None]
    if not files:
        return None
    project: dict[str, Any] = {"name": None, "version": None,
                               "language": BUILD_FILES[files[0]], "files": files}
    for file in files:
        text = _text(os.path.join(cwd, file), gate)
        name, version = _metadata(file, text) if text is not None else (None, None)
        if name is not None:
            project.update(name=name, version=version, language=BUILD_FILES[file])
            break
    return project


class ProjectProvider(Source):
    """``{"project": {"name", "version", "language", "files"}}`` for the cwd."""

    name = "project"

    async def collect(self, cwd: str) -> Mapping[str, Any]:
        project = describe(cwd)
        return {"project": project} if project is not None else {}
