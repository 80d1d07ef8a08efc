"""The Tasks view's API on a real dock with adjutant-tasks (its runner in the dock's
process): the queue as listed, an answer bound to the digest of the question shown (a
stale one refused and logged, nothing run), a deny that runs nothing, cancel and retry;
without adjutant-tasks the view says what to install."""

from __future__ import annotations

from typing import Any

import pytest
from dockkit import Dock
from tasksviewkit import tasks_dock, until, write_call

pytestmark = pytest.mark.anyio


async def _status(plugin: Any, task_id: str, *wanted: str) -> Any:
    async def check() -> Any:
        task = await plugin.queue.get(task_id)
        return task if task.status in wanted else None
    return await until(check)


async def test_the_view_lists_answers_bound_to_the_digest_cancels_and_retries() -> None:
    async with tasks_dock() as (dock, plugin, caps):
        work = dock.harness.workspace
        asks, _ = await plugin.submit("tool.call", write_call(work))
        waiting = await _status(plugin, asks.id, "waiting_for_human")
        listed = (await dock.client.get("/api/tasks")).json()
        assert listed["runner"]["alive"] and listed["runner"]["here"]
        shown = {t["id"]: t for t in listed["tasks"]}[asks.id]
        assert shown["question"]["digest"] == waiting.question.digest
        assert "create b.txt" in shown["question"]["preview"]
        # a stale digest (the page showed another question): refused, logged, not run
        stale = await dock.client.post("/api/tasks/answer", json={
            "task": asks.id, "action": "approve", "digest": "f" * 64})
        assert stale.status_code == 409, stale.text
        assert "changed since it was shown" in stale.json()["error"]
        assert stale.json()["task"]["question"]["digest"] == waiting.question.digest
        assert not (work / "b.txt").exists()
        refused = [r for r in await dock.harness.records("tasks_answer") if r.get("refused")]
        assert len(refused) == 1
        # malformed answers never reach the queue
        for bad in ({"task": asks.id, "action": "approve"},
                    {"task": asks.id, "action": "grant", "digest": "f" * 64},
                    {"task": "../x", "action": "approve", "digest": "f" * 64}):
            assert (await dock.client.post("/api/tasks/answer", json=bad)).status_code == 400
        unknown = await dock.client.post("/api/tasks/answer", json={
            "task": "0" * 20, "action": "approve", "digest": "f" * 64})
        assert unknown.status_code == 404
        ok = await dock.client.post("/api/tasks/answer", json={
            "task": asks.id, "action": "approve", "digest": waiting.question.digest})
        assert ok.status_code == 200, ok.text
        await _status(plugin, asks.id, "done")
        assert (work / "b.txt").read_text() == "from a task\n"
        kinds = [r["action"] for r in await dock.harness.records("dock_task")]
        assert kinds == ["approve", "approve"]  # the stale one and this one, both first
        # a deny: nothing runs
        denied, _ = await plugin.submit("tool.call", write_call(work, "again\n"))
        question = (await _status(plugin, denied.id, "waiting_for_human")).question
        no = await dock.client.post("/api/tasks/answer", json={
            "task": denied.id, "action": "deny", "digest": question.digest})
        assert no.status_code == 200, no.text
        after = await _status(plugin, denied.id, "failed")
        assert "denied" in (after.error or "")
        assert (work / "b.txt").read_text() == "from a task\n"
        # cancel a running task; retry a failed one; a change its status refuses is 409
        running, _ = await plugin.submit("test.report", {})
        await _status(plugin, running.id, "running")
        cancel = await dock.client.post("/api/tasks/cancel", json={"task": running.id})
        assert cancel.status_code == 200, cancel.text
        assert (await _status(plugin, running.id, "cancelled")).error == "cancelled by the user"
        again = await dock.client.post("/api/tasks/cancel", json={"task": running.id})
        assert again.status_code == 409 and "cancel takes a task that is" in again.json()["error"]
        retry = await dock.client.post("/api/tasks/retry", json={"task": running.id})
        assert retry.status_code == 200, retry.text
        await _status(plugin, running.id, "running")
        caps.report.go.set()
        done = await _status(plugin, running.id, "done")
        assert done.outputs == {"pages": 3, "said": "<b>not bold</b>"}
        listed = (await dock.client.get("/api/tasks?status=open")).json()
        assert [t["id"] for t in listed["tasks"]] == []
        every = {t["id"]: t for t in (await dock.client.get("/api/tasks")).json()["tasks"]}
        assert every[running.id]["files"] == [{"name": "report.txt", "size": 11}]
        for bad in ("?status=closed", "?limit=0", "?who=me"):
            assert (await dock.client.get("/api/tasks" + bad)).status_code == 400


async def test_the_view_shows_a_nested_task_and_its_parent() -> None:
    async with tasks_dock() as (dock, plugin, _):
        work = dock.harness.workspace
        parent, _ = await plugin.submit("test.parent", write_call(work))
        held = await _status(plugin, parent.id, "waiting_for_human")
        every = {t["id"]: t for t in (await dock.client.get("/api/tasks")).json()["tasks"]}
        child = every[held.waiting_on]
        assert every[parent.id]["children"] == [child["id"]]
        assert every[parent.id]["waiting_on"] == child["id"]
        assert every[parent.id]["question"] is None  # the child is the one to answer
        assert child["parent_task"] == parent.id and child["children"] == []
        refused = await dock.client.post("/api/tasks/answer", json={
            "task": parent.id, "action": "approve", "digest": "f" * 64})
        assert refused.status_code == 409 and "answer that one" in refused.json()["error"]
        ok = await dock.client.post("/api/tasks/answer", json={
            "task": child["id"], "action": "approve",
            "digest": child["question"]["digest"]})
        assert ok.status_code == 200, ok.text
        done = await _status(plugin, parent.id, "done")
        assert (work / "b.txt").read_text() == "from a task\n"
        assert done.outputs["child"] == (await plugin.queue.get(child["id"])).outputs


async def test_without_adjutant_tasks_the_view_says_what_to_install(dock: Dock) -> None:
    for response in (await dock.client.get("/api/tasks"),
                     await dock.client.post("/api/tasks/cancel", json={"task": "0" * 20})):
        assert response.status_code == 503
        assert "pip install adjutant-tasks" in response.json()["error"]
