"""Which argument values are paths, commands or URLs: read from the schema, never guessed.

A tool's ``args_schema`` marks arguments with ``"x-adjutant-role"`` (`ARG_ROLE`):
``path``, ``paths``, ``argv`` or ``url``. `role_values` walks the schema and a call's
arguments together and returns every marked value, so a policy judges exactly what
the tool declared::

    from adjutant_hookspecs import RoleProblem, Verdict, role_values

    try:
        values = role_values(request.declaration.args_schema, request.call.args)
    except RoleProblem as exc:
        return Verdict("deny", str(exc))        # cannot tell: fail closed
    paths = [v.value for v in values if v.role == "path"]

Roles work at any depth: ``properties``, ``additionalProperties``,
``patternProperties``, ``items``/``prefixItems``, the ``allOf``/``anyOf``/``oneOf``/
``if``/``then``/``else`` branches (a role in any branch applies: fail closed) and
local ``$ref`` (``#/$defs/...``). Anything the walk cannot follow raises
`RoleProblem`; the guard denies such a call, and so should you. Values are returned
as given (not type-checked, not resolved): a ``path`` may be relative to the cwd.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ._protocols import ARG_ROLE

__all__ = ["MAX_ROLE_VALUES", "RoleProblem", "RoleValue", "role_values"]

#: Role values judged per call; more is refused (each path costs syscalls).
MAX_ROLE_VALUES = 256
_MAX_DEPTH = 32
_BRANCHES = ("allOf", "anyOf", "oneOf")
_SINGLE_BRANCHES = ("if", "then", "else")


class RoleProblem(ValueError):
    """The roles of a call cannot be read with certainty; the message says why."""


@dataclass(frozen=True, slots=True)
class RoleValue:
    """One marked value: ``role`` is ``path``, ``argv`` or ``url`` (``paths`` is split)."""

    role: str
    #: Where in the arguments, for reasons: ``path``, ``files[2]``, ``edits[0].target``.
    where: str
    value: object


def role_values(schema: object, args: object) -> list[RoleValue]:
    """Every value of ``args`` that ``schema`` marks with a role, in a fixed order.

    :param schema: The tool's ``args_schema``.
    :param args: The call's arguments (``request.call.args``).
    :raises RoleProblem: the roles cannot be read with certainty (an unknown role, a
        ``$ref`` that cannot be followed, a ``paths`` value that is not a list, more
        than `MAX_ROLE_VALUES` values); deny the call.
    """
    out: list[RoleValue] = []
    for value in _walk(schema, args, "", schema, 0):
        out.append(value)
        if len(out) > MAX_ROLE_VALUES:
            raise RoleProblem(
                f"the call has more than {MAX_ROLE_VALUES} paths, commands or URLs")
    return out


def _walk(schema: Any, value: Any, where: str, root: Any, depth: int) -> Iterator[RoleValue]:
    if depth > _MAX_DEPTH:
        raise RoleProblem("the tool's argument schema nests too deeply to check")
    if not isinstance(schema, dict) or value is None:
        return
    if "$ref" in schema:
        yield from _walk(_ref(root, schema["$ref"]), value, where, root, depth + 1)
    if ARG_ROLE in schema:
        yield from _marked(schema[ARG_ROLE], value, where or "arguments")
    for key in _BRANCHES:
        branches = schema.get(key, [])
        if not isinstance(branches, list):
            raise RoleProblem(f"the tool's argument schema has a malformed {key}")
        for branch in branches:
            yield from _walk(branch, value, where, root, depth + 1)
    for key in _SINGLE_BRANCHES:
        yield from _walk(schema.get(key), value, where, root, depth + 1)

    if isinstance(value, dict):
        props = schema.get("properties") or {}
        patterns = schema.get("patternProperties") or {}
        extra = schema.get("additionalProperties")
        for name, item in value.items():
            at = f"{where}.{name}" if where else str(name)
            if isinstance(props, dict) and name in props:
                yield from _walk(props[name], item, at, root, depth + 1)
            matched = False
            for pattern, sub in patterns.items() if isinstance(patterns, dict) else ():
                try:
                    hit = re.search(pattern, str(name)) is not None
                except re.error:
                    raise RoleProblem(f"bad patternProperties regex {pattern!r}") from None
                if hit:
                    matched = True
                    yield from _walk(sub, item, at, root, depth + 1)
            if not matched and not (isinstance(props, dict) and name in props):
                yield from _walk(extra, item, at, root, depth + 1)
    elif isinstance(value, list | tuple):
        prefix = schema.get("prefixItems") or []
        items = schema.get("items")
        if isinstance(items, list):  # draft-04 tuple form
            prefix, items = items, schema.get("additionalItems")
        for i, item in enumerate(value):
            sub = prefix[i] if i < len(prefix) else items
            yield from _walk(sub, item, f"{where}[{i}]", root, depth + 1)


def _marked(role: Any, value: Any, where: str) -> Iterator[RoleValue]:
    if role in ("path", "argv", "url"):
        yield RoleValue(role, where, value)
    elif role == "paths":
        if not isinstance(value, list | tuple):
            raise RoleProblem(f"{where} should be a list of paths, got {type(value).__name__}")
        else:
            for i, item in enumerate(value):
                yield RoleValue("path", f"{where}[{i}]", item)
    else:
        raise RoleProblem(
            f"the tool's schema marks {where} with an unknown {ARG_ROLE} {role!r} "
            "(known: path, paths, argv, url)"
        )


def _ref(root: Any, ref: Any) -> Any:
    if not isinstance(ref, str) or not ref.startswith("#"):
        raise RoleProblem(f"the tool's argument schema has a $ref that cannot be followed: {ref!r}")
    node = root
    for token in ref[1:].split("/")[1:] if ref != "#" else []:
        token = token.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and token in node:
            node = node[token]
        elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
        else:
            raise RoleProblem(f"the tool's argument schema has a dangling $ref {ref!r}")
    return node
