"""The standard tool checks, the tool's own behaviour, and the tool as a user meets
it: planned by a model, previewed and run by the operator."""

from pathlib import Path

import pytest

import adjutant_template
from adjutant.testing import Harness, ScriptedApprover, plan
from adjutant.testing.conformance import ToolConformance
from adjutant_hookspecs import ToolContext


class TestEcho(ToolConformance):
    # Fixtures are overridden on the class: `tool` (required), and optionally `ctx`
    # (where the example calls run) and `calls` (default: the declared examples).
    @pytest.fixture
    def tool(self) -> adjutant_template.Echo:
        return adjutant_template.Echo()


@pytest.mark.anyio
async def test_previews_then_echoes() -> None:
    async with Harness(adjutant_template) as h:  # a kernel with only this plugin
        preview = await h.dry_run("template.echo", text="hi")
        result = await h.execute("template.echo", text="hi")
    assert (preview.status, preview.dry_run_diff) == ("dry_run", "echo 'hi'")
    assert (result.status, result.stdout) == ("ok", "hi\n")


@pytest.mark.anyio
async def test_the_operator_previews_asks_and_runs_it() -> None:
    # The scripted model replies with a plan; with no safety policy installed every
    # step asks (add adjutant_guard and adjutant_write_gate to the Harness to see what
    # a user's installation decides), and the approver grants.
    async with Harness(adjutant_template, mode="execute-with-confirmation",
                       approver=ScriptedApprover(steps=["grant"])) as h:
        run = await h.run("say hi", reply=plan(("template.echo", {"text": "hi"})))
    assert run.status == "executed" and run.tools == ["template.echo"]
    assert [p.preview for p in run.asked] == ["echo 'hi'"]  # the user saw the exact effect
    assert run.results[0].stdout == "hi\n"
    assert run.logged("approval")[0]["action"] == "grant"  # the log has the answer


class TestAppend(ToolConformance):
    @pytest.fixture
    def tool(self) -> adjutant_template.Append:
        return adjutant_template.Append()

    @pytest.fixture
    def ctx(self, tmp_path: Path) -> ToolContext:  # the example's file, so previews succeed
        (tmp_path / "notes.txt").write_text("call mum\n")
        return ToolContext(cwd=str(tmp_path), cages=(str(tmp_path),))


@pytest.mark.anyio
async def test_a_write_is_previewed_asked_and_run_as_a_user_has_it() -> None:
    # With the guard (cages, deny rules) and the write-gate (every write asks), as in
    # a user's installation: the question shows the exact diff in plain words first.
    import adjutant_guard
    import adjutant_write_gate

    async with Harness(adjutant_template, adjutant_guard, adjutant_write_gate,
                       mode="execute-with-confirmation",
                       approver=ScriptedApprover(steps=["grant"])) as h:
        (h.workspace / "notes.txt").write_text("call mum\n")
        run = await h.run("add eggs to my notes",
                          reply=plan(("template.append", {"path": "notes.txt", "line": "eggs"})))
        assert run.status == "executed", run.error
        [asked] = run.asked
        assert asked.summary == "Add 1 line to notes.txt" and "+eggs" in (asked.preview or "")
        assert (h.workspace / "notes.txt").read_text() == "call mum\neggs\n"


@pytest.mark.anyio
async def test_a_path_outside_the_cage_or_through_a_link_is_refused() -> None:
    async with Harness(adjutant_template) as h:
        (h.workspace / "link.txt").symlink_to("/etc/hostname")
        outside = await h.execute("template.append", path="../escape.txt", line="x")
        linked = await h.execute("template.append", path="link.txt", line="x")
    assert outside.status == "error" and "[rule: traversal]" in outside.stderr
    assert linked.status == "error" and "[rule: symlink]" in linked.stderr
