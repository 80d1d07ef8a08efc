"""A server's form (elicitation): prefilled with its defaults (SEP-1034), answered by
the user or declined. The whole exchange is proved against the conformance suite's
elicitation-sep1034-client-defaults server in `test_conformance.py`."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from adjutant_mcp._config import parse_server
from adjutant_mcp._connection import Connection, form_defaults

pytestmark = pytest.mark.anyio


def test_the_form_is_prefilled_with_defaults_of_the_field_s_type_only() -> None:
    schema = {"type": "object", "properties": {
        "name": {"type": "string", "default": "John Doe"},
        "age": {"type": "integer", "default": 30},
        "score": {"type": "number", "default": 95.5},
        "status": {"type": "string", "enum": ["active", "inactive"], "default": "active"},
        "verified": {"type": "boolean", "default": True},
        "count": {"type": "integer", "default": True},      # a bool is no integer here
        "level": {"type": "string", "enum": ["a"], "default": "b"},  # not a choice
        "note": {"type": "string", "default": 3},           # wrong type
        "plain": {"type": "string"}}}
    assert form_defaults(schema) == {"name": "John Doe", "age": 30, "score": 95.5,
                                     "status": "active", "verified": True}


def connection(on_form: Any) -> Connection:
    spec = parse_server("s", {"type": "http", "url": "http://127.0.0.1:9/mcp"},
                        source="test", workspace="/", env={})
    return Connection(spec, spawn=lambda *a: None, logdir=Path("/tmp/adjutant-forms-test"),
                      on_form=on_form)


async def test_with_no_one_to_ask_a_form_is_declined() -> None:
    params = SimpleNamespace(message="your password?", requested_schema={
        "type": "object", "properties": {"password": {"type": "string"}}})
    result = await connection(None)._elicit(None, params)
    assert result.action == "decline" and result.content is None


async def test_the_user_s_answer_is_what_the_server_gets() -> None:
    seen: list[Any] = []

    async def user(server: str, message: str, schema: dict[str, Any],
                   prefilled: dict[str, Any]) -> dict[str, Any] | None:
        seen.append((server, message, prefilled))
        return None if message == "no" else {**prefilled, "name": "Ada"}
    params = SimpleNamespace(message="who?", requested_schema={
        "type": "object", "properties": {"name": {"type": "string", "default": "x"},
                                         "age": {"type": "integer", "default": 3}}})
    accepted = await connection(user)._elicit(None, params)
    assert (accepted.action, accepted.content) == ("accept", {"name": "Ada", "age": 3})
    declined = await connection(user)._elicit(None, SimpleNamespace(
        message="no", requested_schema={"type": "object", "properties": {}}))
    assert declined.action == "decline"
    assert seen[0] == ("s", "who?", {"name": "x", "age": 3})
