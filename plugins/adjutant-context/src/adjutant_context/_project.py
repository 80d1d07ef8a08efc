"""``project``: name, version and language from the build files in the cwd."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from typing import Any

from adjutant.safety.regular import read_regular

from ._common import Source

__all__ = ["BUILD_FILES", "ProjectProvider", "describe"]

#: Build files looked for, in priority order (the first that names a project wins).
BUILD_FILES = {"pyproject.toml": "python", "package.json": "javascript",
               "Cargo.toml": "rust", "go.mod": "go"}
_MAX_BYTES = 1 << 20
_GO_MODULE = re.compile(r"^\s*module\s+\"?([^\s\"]+)\"?", re.M)


def _text(path: str) -> str | None:
    try:
        data = read_regular(path, _MAX_BYTES + 1)  # a FIFO named pyproject.toml: refused
    except OSError:
        return None
    return None if len(data) > _MAX_BYTES else data.decode("utf-8", errors="replace")


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
    files = [f for f in BUILD_FILES if os.path.isfile(os.path.join(cwd, f))]
    if not files:
        return None
    project: dict[str, Any] = {"name": None, "version": None,
                               "language": BUILD_FILES[files[0]], "files": files}
    for file in files:
        text = _text(os.path.join(cwd, file))
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
