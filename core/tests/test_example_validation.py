"""Examples are checked against the whole argument schema, at registration and by
`ToolConformance`; the suite fails a tool whose dry-runs all error."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from adjutant import Kernel, RegistrationError
from adjutant.kernel._registry import validate
from adjutant.testing.conformance import ToolConformance
from adjutant_hookspecs import (
    ExecutionResult,
    ToolCall,
    ToolContext,
    ToolDeclaration,
    hookimpl,
)

SCHEMA = {"type": "object", "properties": {
    "path": {"type": "string", "minLength": 1},
    "mode": {"enum": ["fast", "slow"]},
    "count": {"type": "integer", "minimum": 1},
}, "required": ["path"], "additionalProperties": False}


def make(examples: tuple[dict[str, Any], ...], schema: dict[str, Any] = SCHEMA,
         status: str = "dry_run") -> Any:
    class Tool:
        declaration = ToolDeclaration(name="t.tool", version="1", description="A tool.",
                                      args_schema=schema, examples=examples)

        async def dry_run(self, call: ToolCall, ctx: ToolContext) -> ExecutionResult:
            return ExecutionResult(tool=call.tool, args=call.args, status=status,  # type: ignore[arg-type]
                                   stderr="no such file" if status == "error" else "")

        async def execute(self, call: ToolCall, ctx: ToolContext) -> ExecutionResult:
            return ExecutionResult(tool=call.tool, args=call.args, status="ok")

    return Tool()


@pytest.mark.parametrize(("example", "message"), [
    ({"path": 7}, "7 is not of type 'string' @ $.path"),
    ({"path": ""}, "should be non-empty @ $.path"),
    ({"path": "a", "mode": "medium"}, "'medium' is not one of ['fast', 'slow'] @ $.mode"),
    ({"path": "a", "count": 0}, "0 is less than the minimum of 1 @ $.count"),
    ({"path": "a", "colour": "red"}, "Additional properties are not allowed"),
    ({}, "'path' is a required property"),
])
def test_registration_refuses_an_example_the_schema_refuses(example: dict[str, Any],
                                                            message: str) -> None:
    with pytest.raises(RegistrationError) as info:
        validate("tools", make(({"path": "ok"}, example)))
    assert "tool 't.tool': example 2" in str(info.value)
    assert message in str(info.value)


def test_registration_refuses_a_schema_that_is_not_json_schema() -> None:
    bad = {"type": "object", "properties": {"path": {"type": "text"}}}
    with pytest.raises(RegistrationError, match="not a valid JSON Schema"):
        validate("tools", make(({"path": "a"},), schema=bad))


def test_a_plugin_with_a_bad_example_is_skipped_and_named() -> None:
    class Plugin:
        name = "badexample"

        @hookimpl
        def register_tools(self, register: Any) -> None:
            register(make(({"path": 7},)))

    kernel = Kernel(plugins=[Plugin()], load_installed=False, env={}).load()
    [info] = [p for p in kernel.plugins if p.name == "badexample"]
    assert info.status == "failed"
    assert "example 1 {\"path\":7} does not fit args_schema" in (info.error or "")
    assert "t.tool" not in kernel.tools


def test_good_examples_register() -> None:
    assert validate("tools", make(({"path": "a", "mode": "fast", "count": 2},))) == "t.tool"


def test_the_suite_checks_examples_against_the_whole_schema() -> None:
    calls = [ToolCall(tool="t.tool", args={"path": 7})]
    with pytest.raises(AssertionError, match="not of type 'string'"):
        ToolConformance().test_examples_fit_the_schema(make(({"path": "a"},)), calls)


@pytest.mark.anyio
async def test_the_suite_fails_a_tool_whose_dry_runs_all_error(tmp_path: Path) -> None:
    tool = make(({"path": "a"}, {"path": "b"}), status="error")
    calls = [ToolCall(tool="t.tool", args=a) for a in tool.declaration.examples]
    ctx = ToolContext(cwd=str(tmp_path), cages=(str(tmp_path),))
    suite = ToolConformance()
    await suite.test_dry_run_previews_and_changes_nothing(tool, calls, ctx)  # still passes
    with pytest.raises(AssertionError, match=r"every dry-run of t\.tool failed"):
        await suite.test_some_dry_run_succeeds(tool, calls, ctx)
    await suite.test_some_dry_run_succeeds(make(({"path": "a"},)), calls, ctx)


def test_examples_that_passed_are_remembered_and_bad_ones_never(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from adjutant.kernel import _registry

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(_registry, "_PASSED", None)
    good = ({"path": "a.txt", "mode": "fast"},)
    _registry.check_examples(SCHEMA, good, "tool 'x'")
    memo = tmp_path / "adjutant" / "checked-examples"
    assert memo.read_text().split() == [_registry._digest(SCHEMA, good)]

    monkeypatch.setattr(_registry, "_PASSED", None)  # a new process: read from the file
    monkeypatch.setattr(_registry, "_check_examples", None)  # never called again for it
    _registry.check_examples(SCHEMA, good, "tool 'x'")
    monkeypatch.undo()

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(_registry, "_PASSED", None)
    for bad in ({"path": 7}, {"path": "a", "mode": "medium"}):
        for _ in range(2):  # refused every time: only a pass is remembered
            with pytest.raises(RegistrationError, match="does not fit args_schema"):
                _registry.check_examples(SCHEMA, (bad,), "tool 'x'")
    assert len(memo.read_text().split()) == 1
