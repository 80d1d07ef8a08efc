"""Opt in to the Adjutant test harness, and build policy requests over a real tree."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from adjutant_hookspecs import ARG_ROLE, PolicyRequest, ToolCall, ToolDeclaration, ToolSafety


def pytest_configure(config: pytest.Config) -> None:
    # Rather than `pytest_plugins = ["adjutant.testing"]`, which pytest rejects in a
    # conftest that is not top-level (as when the repository's root runs every plugin's
    # tests at once). A no-op when `-p adjutant.testing` (the root config) loaded it.
    config.pluginmanager.import_plugin("adjutant.testing")


#: Argument names that get a role by default in `World.request` (override with roles=).
DEFAULT_ROLES = {"path": "path", "paths": "paths", "argv": "argv", "url": "url"}
_TYPES = {"path": {"type": "string"}, "url": {"type": "string"},
          "paths": {"type": "array", "items": {"type": "string"}},
          "argv": {"type": "array", "items": {"type": "string"}}}


def declaration(
    name: str = "files.read",
    *,
    roles: Mapping[str, str] | None = None,
    level: str = "read",
    network: bool = False,
    forbid: Iterable[str] = (),
    allowed: Iterable[str] = (),
) -> ToolDeclaration:
    """A tool declaration whose schema marks each argument in ``roles`` with its role."""
    props: dict[str, Any] = {
        arg: {**_TYPES.get(role, {}), ARG_ROLE: role} for arg, role in (roles or {}).items()
    }
    props.setdefault("note", {"type": "string"})  # an unmarked argument
    return ToolDeclaration(
        name=name,
        version="0.1.0",
        description="a tool under test",
        args_schema={"type": "object", "properties": props, "additionalProperties": False},
        safety=ToolSafety(
            writes=level != "read",
            level=level,  # type: ignore[arg-type]
            network=network,
            forbid_patterns=tuple(forbid),
            allowed_paths=tuple(allowed),
        ),
    )


@dataclass
class World:
    """A fake home, data home, a cage and its neighbours, under tmp_path.

    root/home/.ssh/{id_rsa,authorized_keys}, root/home/.bashrc
    root/data/log                  Adjutant's data home
    root/proj/                     the cage: a.txt, sub/b.txt, .git/{config,hooks/}
    root/proj-evil/x               prefix confusion bait
    root/outside/secret.txt
    """

    root: Path
    home: Path
    data: Path
    cage: Path
    outside: Path

    def request(
        self,
        tool: str = "files.read",
        *,
        level: str = "read",
        roles: Mapping[str, str] | None = None,
        network: bool = False,
        forbid: Iterable[str] = (),
        allowed: Iterable[str] = (),
        cwd: str | Path | None = None,
        cages: Iterable[str | Path] | None = None,
        grants: Iterable[str] = (),
        history: Iterable[ToolCall] = (),
        mode: str = "execute-with-confirmation",
        **args: Any,
    ) -> PolicyRequest:
        """A request for ``tool`` called with ``args``; arguments named path, paths,
        argv or url get that role unless ``roles`` says otherwise."""
        if roles is None:
            roles = {k: DEFAULT_ROLES[k] for k in args if k in DEFAULT_ROLES}
        return PolicyRequest(
            call=ToolCall(tool=tool, args=args),
            declaration=declaration(
                tool, roles=roles, level=level, network=network, forbid=forbid, allowed=allowed
            ),
            mode=mode,  # type: ignore[arg-type]
            cwd=str(self.cage if cwd is None else cwd),
            cages=tuple(str(c) for c in ([self.cage] if cages is None else cages)),
            grants=tuple(grants),
            history=tuple(history),
            home=str(self.home),
            data_home=str(self.data),
        )

    def write(self, tool: str = "files.write", **kw: Any) -> PolicyRequest:
        """A request for a writing tool."""
        kw.setdefault("level", "write")
        return self.request(tool, **kw)


def build_world(root: Path) -> World:
    root = root.resolve()
    home, data, cage, outside = (root / n for n in ("home", "data", "proj", "outside"))
    for d in (home / ".ssh", home / ".config" / "adjutant", data, cage / "sub",
              cage / ".git" / "hooks", root / "proj-evil", outside):
        d.mkdir(parents=True, exist_ok=True)
    (home / ".ssh" / "id_rsa").write_text("PRIVATE KEY\n")
    (home / ".ssh" / "authorized_keys").write_text("ssh-ed25519 AAAA me\n")
    (home / ".bashrc").write_text("alias ll='ls -l'\n")
    (data / "log").write_text("{}\n")
    (cage / "a.txt").write_text("a\n")
    (cage / "sub" / "b.txt").write_text("b\n")
    (cage / ".git" / "config").write_text("[core]\n")
    (root / "proj-evil" / "x").write_text("x\n")
    (outside / "secret.txt").write_text("s\n")
    return World(root=root, home=home, data=data, cage=cage, outside=outside)


# Test modules cannot import this conftest (importlib mode): helpers come as fixtures.


@pytest.fixture
def world(tmp_path: Path) -> World:
    return build_world(tmp_path)


@pytest.fixture(scope="session")
def make_world() -> Any:
    """`build_world`, for fixtures with a wider scope than ``tmp_path``."""
    return build_world


@pytest.fixture(scope="session")
def make_declaration() -> Any:
    """`declaration`: a ToolDeclaration whose schema marks argument roles."""
    return declaration


@pytest.fixture
def guard() -> Any:
    from adjutant_guard import Guard

    return Guard()

