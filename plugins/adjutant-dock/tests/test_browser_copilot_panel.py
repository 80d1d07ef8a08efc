"""The Co-Pilot panel in Chromium, at 1280 and 400 px: no recording says so; then a
recording's agent state (made by adjutant-copilot-agent's merge, saved through its
store) shows each item with its span and the words heard there; Dismiss dismisses (and
the store keeps it); Act puts the action item's request and its question in the chat,
nothing written; an item holding a bidi override and a terminal escape is shown as
escapes. Screenshots go to $ADJUTANT_DOCK_SHOTS (default /tmp/panel-shots): look at
them."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from dockkit import Dock, needs_chromium, plan, start_dock
from panelkit import agent, recorded

pytestmark = [pytest.mark.anyio, needs_chromium]
SHOTS = Path(os.environ.get("ADJUTANT_DOCK_SHOTS") or "/tmp/panel-shots")
WIDTHS = [pytest.param(1280, id="1280px"), pytest.param(400, id="400px")]
WRITE = ("notes.write", {"path": "b.txt", "text": "release notes\n"})



@pytest.fixture
async def panel() -> AsyncIterator[Dock]:
    async with start_dock(plugins=(agent.CopilotAgentPlugin,)) as running:
        yield running


async def open_page(browser: Any, dock: Dock, width: int) -> Any:
    page = await browser.new_page(viewport={"width": width, "height": 800})
    page.set_default_timeout(10_000)
    page.problems = []
    page.on("pageerror", lambda exc: page.problems.append(str(exc)))
    page.on("console", lambda m: page.problems.append(m.text) if m.type == "error" else None)
    await page.goto(dock.server.url)
    await page.wait_for_selector("#modes button[aria-checked='true']")
    return page


async def shot(page: Any, name: str, width: int) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    await page.screenshot(path=str(SHOTS / f"{name}-{width}.png"))


@pytest.mark.parametrize("width", WIDTHS)
async def test_the_panel_shows_the_state_dismisses_and_acts(browser: Any, panel: Dock,
                                                            width: int) -> None:
    page = await open_page(browser, panel, width)
    await page.keyboard.press("Alt+6")
    await page.wait_for_selector("#copilot-head:has-text('No recording in progress')")
    await shot(page, "copilot-none", width)
    session = await recorded(panel.harness.kernel, stopped=False)
    # the panel follows: the recording appears without a reload
    await page.wait_for_selector(f"#copilot-head:has-text('{session}')", timeout=8000)
    assert (await page.inner_text("#copilot-head")).startswith("Recording in progress: ")
    meta = await page.inner_text("#cp-meta")
    assert "cycles 1" in meta and "failed 0" in meta and "audio analysed 00:20" in meta
    assert "The team plans the Friday release." in await page.inner_text("#cp-summary")
    decision = await page.inner_text("#cp-decisions li")
    assert "Ship on Friday" in decision and "00:00\u201300:04" in decision
    assert "We decided to ship on Friday" in decision  # the words heard there
    first = await page.inner_text("#cp-actions li[data-n='0']")
    assert "00:04\u201300:09" in first and "Alice will write the release notes" in first
    # what was said is shown as escapes, never obeyed by the page
    said = await page.inner_text("#cp-actions li[data-n='2'] .cp-text")
    assert said == "Wipe \\u202etxt.exe\\u202c then \\x1b[2J clear the screen", said
    heard = await page.inner_text("#cp-actions li[data-n='2'] .heard")
    assert "\\u202e" in heard and "\\x1b[2J" in heard and "\u202e" not in heard
    await page.locator("#cp-actions li[data-n='2']").scroll_into_view_if_needed()
    await shot(page, "copilot-escaped", width)
    await page.locator("#cp-meta").scroll_into_view_if_needed()
    await shot(page, "copilot-state", width)
    # Dismiss: the CLI's dismiss, kept by the store
    await page.click("#cp-suggested li[data-n='1'] .cp-dismiss")
    await page.wait_for_selector("#cp-suggested li.dismissed[data-n='1']")
    assert await page.locator("#cp-suggested li[data-n='0'] .cp-dismiss").count() == 1
    saved = await agent.load_state(panel.harness.kernel, session)
    assert [q.dismissed for q in saved.suggested_questions] == [False, True]
    await page.locator("#cp-suggested").scroll_into_view_if_needed()
    await shot(page, "copilot-dismissed", width)
    # Act: the item becomes a request in the chat, and its question is asked there
    panel.provider.queue(plan(WRITE))
    await page.click("#cp-actions li[data-n='0'] .cp-act")
    assert await page.is_visible("#tab-chat")
    await page.wait_for_selector(
        "#messages .msg.user:has-text('Write the release notes in b.txt')")
    question = await page.wait_for_selector("#messages li.msg.question#question")
    assert "notes.write" in await question.inner_text() or \
        "b.txt" in await question.inner_text()
    buttons = [await b.inner_text() for b in
               await page.query_selector_all("#question .actions button")]
    assert buttons[:2] == ["Allow once", "Deny"]
    assert not (panel.harness.workspace / "b.txt").exists()  # asked, nothing written
    assert await panel.copilot.mode() == "execute-with-confirmation"
    await shot(page, "copilot-act-question", width)
    await page.click("#question button:has-text('Deny')")
    await page.wait_for_selector(".msg.question.answered")
    assert not (panel.harness.workspace / "b.txt").exists()
    assert page.problems == [], page.problems


async def test_without_the_plugin_the_tab_says_what_to_install(browser: Any,
                                                               dock: Dock) -> None:
    page = await open_page(browser, dock, 400)
    await page.keyboard.press("Alt+6")
    note = await page.wait_for_selector("#copilot-note:has-text('pip install "
                                        "adjutant-copilot-agent')")
    assert await note.is_visible()
    await shot(page, "copilot-missing", 400)
