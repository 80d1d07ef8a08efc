"""Verdicts are easy to write right (positional, abstain) and hard to write wrong; the
role walker policies use is public."""

from __future__ import annotations

import pytest

from adjutant_hookspecs import MAX_ROLE_VALUES, RoleProblem, RoleValue, Verdict, role_values

PATH = {"type": "string", "x-adjutant-role": "path"}


def test_verdict_takes_decision_and_reason_positionally() -> None:
    verdict = Verdict("deny", "rm is not allowed here")
    assert (verdict.decision, verdict.reason, verdict.policy) == ("deny", "rm is not allowed here",
                                                                  "")
    assert Verdict("ask", "why", "mine").policy == "mine"


def test_a_wrong_decision_or_a_missing_reason_names_the_class() -> None:
    with pytest.raises(ValueError, match="Verdict decision must be one of abstain, allow"):
        Verdict("block", "no")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="'deny' Verdict needs a reason"):
        Verdict("deny")


def test_abstain_is_an_explicit_non_opinion() -> None:
    verdict = Verdict.abstain()
    assert verdict.decision == "abstain" and verdict.abstains and verdict.reason
    assert verdict.rank < Verdict("allow", "ok").rank < Verdict("ask", "?").rank \
        < Verdict("deny", "no").rank
    assert Verdict.abstain("not mine", policy="rmguard").policy == "rmguard"


def test_role_values_finds_marked_values_at_any_depth() -> None:
    schema = {"type": "object", "$defs": {"p": PATH}, "properties": {
        "path": PATH,
        "argv": {"type": "array", "x-adjutant-role": "argv"},
        "edits": {"type": "array", "items": {"type": "object",
                                             "properties": {"target": {"$ref": "#/$defs/p"}}}},
        "files": {"type": "array", "x-adjutant-role": "paths"},
    }}
    args = {"path": "a.txt", "argv": ["ls", "-l"], "edits": [{"target": "b.txt"}],
            "files": ["c", "d"], "other": "x"}
    found = role_values(schema, args)
    assert found == [RoleValue("path", "path", "a.txt"), RoleValue("argv", "argv", ["ls", "-l"]),
                     RoleValue("path", "edits[0].target", "b.txt"),
                     RoleValue("path", "files[0]", "c"), RoleValue("path", "files[1]", "d")]


@pytest.mark.parametrize(("schema", "args", "message"), [
    ({"properties": {"p": {"x-adjutant-role": "file"}}}, {"p": "x"}, "unknown x-adjutant-role"),
    ({"properties": {"p": {"$ref": "https://x/s.json"}}}, {"p": "x"}, "cannot be followed"),
    ({"properties": {"p": {"x-adjutant-role": "paths"}}}, {"p": "x"}, "list of paths"),
    ({"properties": {"p": {"x-adjutant-role": "paths"}}}, {"p": ["x"] * (MAX_ROLE_VALUES + 1)},
     "more than"),
])
def test_role_values_fails_closed(schema: dict, args: dict, message: str) -> None:
    with pytest.raises(RoleProblem, match=message):
        role_values(schema, args)
