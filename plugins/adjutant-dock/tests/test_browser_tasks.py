"""The Tasks view in Chromium, at 1280 and 400 px, on a dock whose kernel runs
adjutant-tasks: a task waiting for approval shows its step, why, the preview and
Approve / Deny; the approval is bound to the preview shown (a file changed since is
asked again with the new preview; the old answer runs nothing); a running task's
progress follows live; what a task says (a bidi override, a terminal escape, markup) is
shown as text; outputs and files; cancel and retry. Screenshots go to
$ADJUTANT_DOCK_SHOTS (default /tmp/panel-shots): look at them."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from dockkit import needs_chromium
from tasksviewkit import tasks_dock, until, write_call

pytestmark = [pytest.mark.anyio, needs_chromium]
SHOTS = Path(os.environ.get("ADJUTANT_DOCK_SHOTS") or "/tmp/panel-shots")
WIDTHS = [pytest.param(1280, id="1280px"), pytest.param(400, id="400px")]


async def open_page(browser: Any, url: str, width: int) -> Any:
    page = await browser.new_page(viewport={"width": width, "height": 900})
    page.set_default_timeout(15_000)
    page.problems = []
    page.on("pageerror", lambda exc: page.problems.append(str(exc)))
    page.on("console", lambda m: page.problems.append(m.text) if m.type == "error" else None)
    await page.goto(url)
    await page.wait_for_selector("#modes button[aria-checked='true']")
    return page


async def shot(page: Any, name: str, width: int) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    await page.screenshot(path=str(SHOTS / f"{name}-{width}.png"), full_page=True)


@pytest.mark.parametrize("width", WIDTHS)
async def test_the_tasks_view_answers_follows_cancels_and_retries(browser: Any,
                                                                  width: int) -> None:
    async with tasks_dock() as (dock, plugin, caps):
        work = dock.harness.workspace
        (work / "b.txt").write_text("first line\n")
        broken, _ = await plugin.submit("test.broken", {"path": "a.pdf"})
        asks, _ = await plugin.submit("tool.call", write_call(work))
        report, _ = await plugin.submit("test.report", {"pdf": "q3.pdf"})
        page = await open_page(browser, dock.server.url, width)
        await page.keyboard.press("Alt+7")
        card = f"#tasks-list li[data-id='{asks.id}']"
        await page.wait_for_selector(f"{card}[data-status='waiting_for_human'] .tk-approve")
        await page.wait_for_selector(
            f"#tasks-list li[data-id='{report.id}'] .tk-pct:has-text('50%')")
        await page.wait_for_selector(f"#tasks-list li[data-id='{broken.id}'][data-status='failed']")
        assert await page.is_visible("#tasks-badge")
        assert await page.inner_text("#tasks-badge") == "1"
        head = await page.inner_text("#tasks-head")
        assert "1 waiting for you" in head and "the runner runs in this dock" in head
        question = await page.inner_text(f"{card} .tk-question")
        assert "notes.write" in question and "+from a task" in question
        assert "-first line" in question and "write-gate" in question
        # what the running task says is text: escapes shown, markup not made
        said = await page.inner_text(f"#tasks-list li[data-id='{report.id}'] .tk-msg")
        assert "\\u202e" in said and "\\x1b[2J" in said and "<img" in said, said
        assert await page.locator("#tasks-list img").count() == 0
        assert await page.title() != "owned"
        assert "the input is not a PDF" in await page.inner_text(
            f"#tasks-list li[data-id='{broken.id}'] .tk-error")
        await shot(page, "tasks-waiting", width)
        # the file changes after the preview was shown: the approval of that preview
        # is taken, the step previewed again and asked again: nothing written
        (work / "b.txt").write_text("changed meanwhile\n")
        shown_digest = (await plugin.queue.get(asks.id)).question.digest
        await page.click(f"{card} .tk-approve")

        async def asked_again() -> Any:
            task = await plugin.queue.get(asks.id)
            return task.status == "waiting_for_human" and \
                task.question.digest != shown_digest and task
        again = await until(asked_again)
        assert (work / "b.txt").read_text() == "changed meanwhile\n"
        await page.wait_for_selector(f"{card} .tk-question:has-text('-changed meanwhile')")
        assert "the step changed since it was approved" in await page.inner_text(
            f"{card} .tk-msg")
        await shot(page, "tasks-asked-again", width)
        await page.click(f"{card} .tk-approve")
        await page.wait_for_selector(f"{card}[data-status='done']")
        assert (work / "b.txt").read_text() == "from a task\n"
        answers = [(r["action"], r["digest"]) for r in await dock.harness.records("tasks_answer")]
        assert answers == [("grant", shown_digest), ("grant", again.question.digest)]
        assert not await page.is_visible("#tasks-badge")
        # cancel the running task, then retry it; it finishes with its outputs
        running = f"#tasks-list li[data-id='{report.id}']"
        await page.click(f"{running} .tk-cancel")
        await page.wait_for_selector(f"{running}[data-status='cancelled'] .tk-retry")
        await page.click(f"{running} .tk-retry")
        await page.wait_for_selector(f"{running}[data-status='running']")
        caps.report.go.set()
        await page.wait_for_selector(f"{running}[data-status='done']")
        await page.click(f"{running} summary:has-text('outputs')")
        outputs = await page.inner_text(f"{running} .tk-outputs")
        assert '"said": "<b>not bold</b>"' in outputs
        assert await page.locator(f"{running} .tk-outputs b").count() == 0
        await page.click(f"{running} summary:has-text('files (1)')")
        assert "report.txt" in await page.inner_text(f"{running} .tk-files")
        # the open <details> stay open across the polls
        await page.wait_for_timeout(1700)
        assert await page.is_visible(f"{running} .tk-outputs")
        await page.click(f"#tasks-list li[data-id='{broken.id}'] .tk-retry")
        await page.wait_for_selector(
            f"#tasks-list li[data-id='{broken.id}'][data-status='failed'] .tk-retry:enabled")
        await page.locator(running).scroll_into_view_if_needed()
        await shot(page, "tasks-done", width)
        await page.click("#tasks-filter button[data-filter='open']")
        await page.wait_for_selector("#tasks-list .tk-none:has-text('No open tasks.')")
        kinds = [r["action"] for r in await dock.harness.records("dock_task")]
        assert kinds == ["approve", "approve", "cancel", "retry", "retry"]
        assert page.problems == [], page.problems


async def test_the_tasks_view_shows_a_nested_task_and_its_parent(browser: Any) -> None:
    async with tasks_dock() as (dock, plugin, _):
        work = dock.harness.workspace
        parent, _ = await plugin.submit("test.parent", write_call(work))
        page = await open_page(browser, dock.server.url, 1280)
        await page.keyboard.press("Alt+7")
        held = f"#tasks-list li[data-id='{parent.id}'][data-status='waiting_for_human']"
        await page.wait_for_selector(f"{held} .tk-nest")
        child = (await plugin.queue.get(parent.id)).waiting_on
        assert await page.inner_text(f"{held} .tk-nest") == f"nested tasks: {child[:12]}"
        assert "answer that one" in await page.inner_text(f"{held} .tk-waits")
        card = f"#tasks-list li[data-id='{child}']"
        assert await page.inner_text(f"{card} .tk-nest") == f"nested in task {parent.id[:12]}"
        await shot(page, "tasks-nested", 1280)
        await page.click(f"{card} .tk-approve")
        await page.wait_for_selector(f"#tasks-list li[data-id='{parent.id}'][data-status='done']")
        assert (work / "b.txt").read_text() == "from a task\n"
        assert not page.problems, page.problems
