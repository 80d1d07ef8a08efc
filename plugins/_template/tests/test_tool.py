"""The standard tool checks, the tool's own behaviour, and the tool as a user meets
it: planned by a model, previewed and run by the operator."""

import pytest

import adjutant_template
from adjutant.testing import Harness, ScriptedApprover, plan
from adjutant.testing.conformance import ToolConformance


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
