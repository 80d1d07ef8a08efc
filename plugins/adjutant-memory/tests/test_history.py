"""Past sessions: the action log's runs recalled into a later question's context, and
`MemoryPlugin.similar_plans` (past successful plans for similar requests, for the
planner); the deny rules and redaction hold for both."""

import json

import pytest

from adjutant.testing import Harness, ScriptedApprover, plan
from adjutant_hookspecs import Response, hookimpl
from adjutant_memory import MemoryPlugin

pytestmark = pytest.mark.anyio

REMEMBER = plan(("memory.remember", {"text": "I prefer pytest -q", "kind": "preference"}))


def memory_of(run: object) -> dict[str, object]:
    [context] = [r for r in run.records if r["kind"] == "context"]  # type: ignore[attr-defined]
    memory = context["bulletin"]["memory"]
    assert isinstance(memory, dict)
    return memory


async def test_similar_plans_are_past_successful_plans() -> None:
    async with Harness(MemoryPlugin, mode="execute-with-confirmation",
                       approver=ScriptedApprover(steps=["grant", "deny"])) as h:
        plugin = h.kernel.plugin("memory")
        assert isinstance(plugin, MemoryPlugin)
        assert plugin.similar_plans("remember that I prefer tabs", 3) == []
        ok = await h.run("remember that I prefer pytest -q", reply=REMEMBER)
        assert ok.status == "executed"
        denied = await h.run("remember that I prefer black formatting",
                             reply=plan(("memory.remember", {"text": "I prefer black"})))
        assert denied.status != "executed"
        await plugin.require().refresh_history()
        found = plugin.similar_plans("remember that I prefer tabs", 3)
        assert [request for request, _ in found] == ["remember that I prefer pytest -q"]
        steps = json.loads(found[0][1])["steps"]
        assert steps[0]["tool"] == "memory.remember"
        assert steps[0]["args"]["text"] == "I prefer pytest -q"
        assert plugin.similar_plans("what time is it in Tokyo?", 3) == []
    assert plugin.similar_plans("remember that I prefer tabs", 3) == []  # after shutdown


async def test_an_earlier_session_joins_a_similar_question() -> None:
    async with Harness(MemoryPlugin, mode="execute-with-confirmation") as h:
        await h.run("how do we run the tests here?", reply=Response(text="with pytest -q"))
        run = await h.run("how do I run the tests?", reply=Response(text="pytest -q"))
        memory = memory_of(run)
        assert memory["past"] == ["how do we run the tests here?"]
        prompt = h.provider.requests[-1].prompt
        assert "[an earlier session]" in prompt and "answered: with pytest -q" in prompt
        # an unrelated question gets no earlier session
        other = await h.run("where is the database schema?", reply=Response(text="?"))
        assert memory_of(other)["past"] == []


async def test_a_run_that_named_a_protected_path_is_never_recalled() -> None:
    import adjutant_files

    async with Harness(MemoryPlugin, adjutant_files, mode="execute-with-confirmation",
                       approver=ScriptedApprover(steps=["grant"] * 4)) as h:
        (h.workspace / ".env").write_text("TOKEN=abc\n")
        (h.workspace / "notes.txt").write_text("herons nest by the river\n")
        await h.run("read the file .env", reply=plan(("fs.read", {"path": ".env"})))
        await h.run("read the file notes.txt", reply=plan(("fs.read", {"path": "notes.txt"})))
        plugin = h.kernel.plugin("memory")
        assert isinstance(plugin, MemoryPlugin)
        service = plugin.require()
        await service.refresh_history()
        [refused] = [r for r in service.history.runs.values() if r.refused]
        assert refused.request == "read the file .env" and ".env" in str(refused.refused)
        # the other run, same words, is recalled: what keeps the first out is its path
        found = [run.request for run, _, _ in await service.recall("which file did we read?",
                                                                   k=5)]
        assert found == ["read the file notes.txt"]
        assert [r for r, _ in plugin.similar_plans("read the file", 5)] == \
            ["read the file notes.txt"]


async def test_a_secret_in_an_earlier_answer_is_redacted() -> None:
    secret = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    async with Harness(MemoryPlugin, mode="execute-with-confirmation") as h:
        await h.run("what is the deploy token for the staging server?",
                    reply=Response(text=f"it is {secret}"))
        run = await h.run("what is the deploy token for staging?", reply=Response(text="?"))
        assert memory_of(run)["past"]
        assert secret not in h.provider.requests[-1].prompt


class BrokenRecall:
    """A plugin whose plan recaller fails (its index gone)."""

    name = "broken-recall"

    @hookimpl
    def register_plan_recallers(self, register: object) -> None:
        register(self)  # type: ignore[operator]

    def similar_plans(self, request: str, k: int) -> list[tuple[str, str]]:
        raise RuntimeError("index gone")


async def test_the_planner_hears_past_plans_through_the_recaller_hook() -> None:
    """`register_plan_recallers`: the operator's planner gets this user's earlier
    successful plans, restricted to the tools offered now; a recaller that fails is
    left out of the request, never stops it."""
    async with Harness(MemoryPlugin, BrokenRecall(), mode="execute-with-confirmation",
                       approver=ScriptedApprover(steps=["grant"])) as h:
        assert {"memory", "broken-recall"} <= set(h.kernel.plan_recallers)
        ok = await h.run("remember that I prefer pytest -q", reply=REMEMBER)
        assert ok.status == "executed"
        await h.kernel.plugin("memory").require().refresh_history()  # type: ignore[union-attr]
        prompting = h.copilot.prompting
        past = prompting.past_plans("remember that I prefer tabs", ["memory.remember"])
        assert [(e.request, e.label) for e in past] == [
            ("remember that I prefer pytest -q", "memory.remember")]
        assert prompting.past_plans("remember that I prefer tabs", ["fs.read"]) == []


def test_no_past_request_near_costs_no_lexical_index() -> None:
    """The planner asks before every plan: with no earlier request sharing enough
    words, the answer comes without importing bm25s (0.3-0.5 s of a cold run)."""
    import subprocess
    import sys

    code = ("from adjutant_memory._service import _may_be_near\n"
            "import sys\n"
            "assert not _may_be_near('list the python processes', "
            "['remember that I prefer tabs'], 0.5)\n"
            "assert _may_be_near('remember I prefer spaces', "
            "['remember that I prefer tabs'], 0.5)\n"
            "assert 'bm25s' not in sys.modules and 'numpy' not in sys.modules\n")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
