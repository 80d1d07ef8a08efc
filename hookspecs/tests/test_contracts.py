"""The data contracts decode strictly, keep their field names and round-trip."""

from __future__ import annotations

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from adjutant_hookspecs import (
    ContextBulletin,
    ContractError,
    ExecutionResult,
    Plan,
    Reply,
    Response,
    ToolCall,
    ToolDeclaration,
    ToolSafety,
    decode,
    encode,
)

WIRE_FIELDS = {
    ToolDeclaration: ["name", "version", "description", "args_schema", "safety",
                      "supports_dry_run", "examples", "summary"],
    ToolSafety: ["writes", "allowed_paths", "forbid_patterns", "level", "network"],
    ToolCall: ["tool", "args", "dry_run", "explain"],
    ExecutionResult: ["tool", "args", "status", "dry_run_diff", "stdout", "stderr",
                      "duration_ms", "artifacts", "summary"],
    ContextBulletin: ["cwd", "git", "focus", "selected_files", "recent_shell", "logs"],
}
#: Fields added later (the names above stay as they are).
ADDED_FIELDS: dict[type, list[str]] = {ContextBulletin: ["clipboard", "project", "memory"]}


@pytest.mark.parametrize("cls", list(WIRE_FIELDS))
def test_field_names_are_kept_on_the_wire(cls: type) -> None:
    expected = WIRE_FIELDS[cls] + ADDED_FIELDS.get(cls, [])
    assert sorted(cls.__struct_encode_fields__) == sorted(expected)


def test_the_two_reply_forms() -> None:
    plan = decode(b'{"type":"plan","steps":[{"tool":"files.read","args":{"path":"a"},'
                  b'"explain":"look"}]}', Reply)
    assert plan == Plan(steps=(ToolCall(tool="files.read", args={"path": "a"}, explain="look"),))
    assert decode(b'{"type":"response","text":"hi"}', Reply) == Response(text="hi")


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        (b'{"type":"plan","steps":[{"tool":1}]}',
         "Expected `str`, got `int` - at `$.steps[0].tool`"),
        (b'{"type":"plan","steps":[{"tool":"x","sudo":true}]}', "unknown field `sudo`"),
        (b'{"type":"shell","cmd":"rm -rf /"}', "Invalid value 'shell' - at `$.type`"),
        (b'{"type":"response","text":"hi"} trailing', "trailing characters"),
        (b'{"type":"response","text":"hi"', "truncated"),
        (b'{"type":"plan","steps":[{"tool":"x","dry_run":"no"}]}', "at `$.steps[0].dry_run`"),
    ],
)
def test_malformed_model_output_is_refused_with_a_path(payload: bytes, message: str) -> None:
    with pytest.raises(ContractError) as info:
        decode(payload, Reply)
    assert message in str(info.value)


def test_safety_declaration_is_consistent() -> None:
    with pytest.raises(ContractError, match=r"level is 'read' but safety\.writes is true"):
        decode(b'{"writes":true}', ToolSafety)
    with pytest.raises(ContractError, match=r"'destructive' but safety\.writes is false"):
        decode(b'{"level":"destructive"}', ToolSafety)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-2**53, 2**53) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                  max_size=4),
    max_leaves=12,
)


@given(tool=st.text(min_size=1, max_size=30), args=st.dictionaries(st.text(max_size=10),
                                                                     json_values, max_size=5),
       explain=st.text(max_size=50), dry_run=st.booleans())
def test_tool_calls_round_trip(tool: str, args: dict, explain: str, dry_run: bool) -> None:
    call = ToolCall(tool=tool, args=args, dry_run=dry_run, explain=explain)
    assert decode(encode(call), ToolCall) == call
    assert msgspec.json.decode(encode(Plan(steps=(call,))))["type"] == "plan"
