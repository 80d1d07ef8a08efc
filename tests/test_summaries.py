"""Every question starts with the step in plain words ("Append 1 line to notes.md"):
the dry-run's own words where it has them, else the declaration's template, else the
tool's name and its first arguments; every value made printable."""

from __future__ import annotations

import pytest

import adjutant_files
import adjutant_write_gate
from adjutant import Kernel
from adjutant.operator._summary import fill, summarize
from adjutant.testing import Harness, ScriptedApprover, plan
from adjutant_hookspecs import ApprovalRequested, ToolDeclaration

pytestmark = pytest.mark.anyio
OURS = ("fs.", "editor.", "search.", "compress.", "git.", "shell.", "proc.", "sys.", "net.")


def test_every_shipped_tool_says_its_examples_in_plain_words(tmp_path) -> None:
    kernel = Kernel(env={"ADJUTANT_HOME": str(tmp_path)}).load()
    ours = {n: t for n, t in kernel.tools.items() if n.startswith(OURS)}
    assert len(ours) >= 19
    for name, tool in ours.items():
        declaration = tool.declaration
        assert declaration.summary, f"{name} declares no summary"
        for example in declaration.examples:
            said = fill(declaration.summary, example)
            assert said and "{" not in said, (name, example, said)


def test_optional_parts_missing_fields_and_hostile_values() -> None:
    grep = "Search for “{pattern}”[ in {paths}][ ({glob} files)]"
    assert fill(grep, {"pattern": "TODO"}) == "Search for “TODO”"
    assert fill(grep, {"pattern": "TODO", "paths": ["src", "docs"], "glob": "*.py"}) == (
        "Search for “TODO” in src docs (*.py files)")
    assert fill(grep, {"paths": ["src"]}) is None  # the required field is missing
    declaration = ToolDeclaration(name="x.write", version="1", description="d",
                                  args_schema={}, summary="Write {path}")
    assert summarize("x.write", {"path": "photo_\u202egnp.sh"}, declaration, None) == (
        "Write photo_\\u202egnp.sh")
    said = summarize("x.write", {"path": "a" * 500}, declaration, None)
    assert len(said) <= 160 and said.endswith("…")
    # no template fits: the tool's name and its first arguments, printable too
    assert summarize("mcp.t.go", {"to": "x\u200by", "n": 2}, None, None) == (
        "mcp.t.go (to x\\u200by, n 2)")


@pytest.mark.parametrize(("content", "said"), [
    ("buy milk\n", "Append 1 line to notes.md"),
    ("a\nb\nc", "Append 3 lines to notes.md"),
])
async def test_the_question_and_its_event_say_what_the_dry_run_saw(content: str,
                                                                    said: str) -> None:
    async with Harness(adjutant_files, adjutant_write_gate, mode="execute-with-confirmation",
                       approver=ScriptedApprover(steps=["deny"])) as h:
        (h.workspace / "notes.md").write_text("# notes\n")
        # the request states what to add: a value it does not state would be taken
        # for one copied from a worked example, and dropped
        result = await h.run(f"add to my notes: {content}", reply=plan(
            ("fs.append", {"path": "notes.md", "content": content})))
        [packet] = result.asked
        assert packet.summary == said
        [asked] = [e for e in result.events if isinstance(e, ApprovalRequested)]
        assert asked.interrupt.message == f"{said}?"
        assert asked.interrupt.metadata["packet"]["summary"] == said


async def test_a_new_file_and_a_replaced_one_are_told_apart() -> None:
    async with Harness(adjutant_files, adjutant_write_gate, mode="execute-with-confirmation",
                       approver=ScriptedApprover(steps=["deny", "deny"])) as h:
        (h.workspace / "old.txt").write_text("1\n2\n")
        result = await h.run("write two", reply=plan(
            ("fs.write", {"path": "new.txt", "content": "x\n"}),
            ("fs.write", {"path": "old.txt", "content": "y\n"})))
        assert [p.summary for p in result.asked][:1] == ["Create new.txt (1 line)"]


async def test_a_tools_own_refusal_is_reported_as_the_tools() -> None:
    """fs.append on a missing file is refused by the tool's dry-run: that is the tool
    speaking, not a policy named "dry-run" (as it was reported before)."""
    from adjutant_hookspecs import StepDenied

    async with Harness(adjutant_files, adjutant_write_gate, mode="execute-with-confirmation",
                       approver=ScriptedApprover(steps=["grant"])) as h:
        result = await h.run("add to my notes", reply=plan(
            ("fs.append", {"path": "missing.md", "content": "x\n"})))
        [denied] = [e for e in result.events if isinstance(e, StepDenied)]
        assert (denied.by, denied.policy) == ("tool", "fs.append")
        assert "missing.md does not exist" in denied.reason
        assert result.asked == ()  # nothing was asked: there was nothing to approve
