"""The dock in a real browser: Debian's chromium driven by Playwright (through
``executable_path``: Playwright's own browser download cannot work offline). The
scripted model drives each flow; screenshots go to $ADJUTANT_DOCK_SHOTS (default: a
temporary directory)."""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path
from typing import Any

import anyio
import pytest
from dockkit import Dock, needs_chromium, plan, say, start_dock

import adjutant_lmdb

pytestmark = [pytest.mark.anyio, needs_chromium]
SHOTS = Path(os.environ.get("ADJUTANT_DOCK_SHOTS") or tempfile.mkdtemp(prefix="dock-shots-"))
READ = ("notes.read", {"path": "a.txt"})
#: proc.list's shape, with markup where a process name goes (it must stay text).
PROCS = ("    PID    PPID S     CPU_S   CPU%    RSS_MB  MEM% NAME\n"
         "   4242       1 S      1.25    0.3      25.1   0.4 python3 -m http.server\n"
         "   4243    4242 R      0.01    0.0       3.2   0.0 <img src=x onerror=window.pwned=1>\n"
         "(2 matching processes of uid 1000, 2 shown)\n")
LISTING = ("docs/: 3 entries\n"
           "file     12.5 KiB  2026-11-20 10:31  docs/guide.md\n"
           "dir                2026-11-19 09:00  docs/img/\n"
           "link               2026-11-19 09:01  docs/latest -> guide.md\n")
WRITE = ("notes.write", {"path": "b.txt", "text": "hello\n"})



async def open_page(browser: Any, dock: Dock, width: int = 1100, thread: str = "") -> Any:
    page = await browser.new_page(viewport={"width": width, "height": 900})
    page.set_default_timeout(10_000)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.errors = errors
    await page.goto(dock.server.url + (f"&thread={thread}" if thread else ""))
    assert "token" not in page.url  # the token left the address bar
    await page.wait_for_selector("#modes button[aria-checked='true']")
    return page


async def ask(page: Any, text: str) -> None:
    await page.fill("#prompt", text)
    await page.press("#prompt", "Enter")


async def test_a_read_runs_lands_in_the_timeline_and_dry_runs_again(browser: Any,
                                                                   dock: Dock) -> None:
    (dock.harness.workspace / "a.txt").write_text("alpha line\n")
    dock.provider.queue(plan(READ))
    page = await open_page(browser, dock)
    await ask(page, "read a.txt")
    await page.wait_for_selector("#messages .msg.tool pre.result:has-text('alpha line')")
    await page.wait_for_selector("#messages .msg.assistant:has-text('Done.')")
    await page.keyboard.press("Alt+3")
    await page.wait_for_selector("#timeline li.tool_call:has-text('notes.read')")
    status = await page.wait_for_selector("#recent li:has-text('read a.txt')")
    shown = await status.text_content() or ""
    assert "[executed]" in shown and " ms" in shown, shown
    assert "memory:" in await page.inner_text("#chips")
    await page.click("#log-verify")
    await page.wait_for_selector("#verdict:has-text('Log verify:')")
    await page.click("#log-bundle")
    await page.wait_for_selector("#verdict a:has-text('Download bundle-')")
    await page.click("#timeline li.tool_call button.dry-run")  # a past action, dry-run
    await page.wait_for_selector("#messages .msg.assistant:has-text('read a.txt')")
    await page.keyboard.press("Alt+3")
    await page.wait_for_selector("#timeline li.replay")
    await page.screenshot(path=str(SHOTS / "dock-log.png"), full_page=True)
    assert page.errors == []


async def test_a_request_of_several_lines_is_shown_as_typed(browser: Any,
                                                             dock: Dock) -> None:
    """A pasted diff had been shown run together on one line (stop 53, in chromium):
    the user's words keep their lines, as text."""
    (dock.harness.workspace / "a.txt").write_text("alpha line\n")
    dock.provider.queue(plan(READ))
    page = await open_page(browser, dock)
    await ask(page, "read a.txt, then apply this:\n--- a/a.txt\n+++ b/a.txt\n<b>x</b>")
    said = await page.wait_for_selector("#messages .msg.user:has-text('read a.txt')")
    assert "apply this:\n--- a/a.txt\n+++ b/a.txt\n<b>x</b>" in await said.inner_text()
    assert await page.locator("#messages b").count() == 0
    assert page.errors == []


async def test_a_reply_that_is_not_a_plan_is_said_to_be_unused(browser: Any,
                                                                dock: Dock) -> None:
    """The model's text streams into the chat as it comes; a malformed reply (made-up
    file contents, cut off) must not read as the answer: the chat says it was not used
    and that the model is asked again, as text (it quotes the model's words)."""
    (dock.harness.workspace / "a.txt").write_text("alpha line\n")
    dock.provider.queue('{"type":"response","text":"a.txt says <b>invented</b>', plan(READ))
    page = await open_page(browser, dock)
    await ask(page, "read a.txt")
    note = await page.wait_for_selector("#messages .msg.system:has-text('Not a valid plan')")
    assert "asking again with a simpler prompt" in await note.inner_text()
    await page.wait_for_selector("#messages .msg.tool pre.result:has-text('alpha line')")
    assert await page.locator("#messages b").count() == 0  # the model's markup stays text
    await page.screenshot(path=str(SHOTS / "dock-malformed-reply.png"), full_page=True)
    assert page.errors == []


async def test_a_write_waits_for_approval_and_runs_after_grant(browser: Any,
                                                                dock: Dock) -> None:
    dock.provider.queue(plan(WRITE))
    page = await open_page(browser, dock)
    await ask(page, "write hello to b.txt")
    question = await page.wait_for_selector("#question:not([hidden])")
    assert "create b.txt" in await question.inner_text()
    await page.wait_for_selector("#question .diff .add:has-text('+hello')")
    assert not (dock.harness.workspace / "b.txt").exists()
    await page.screenshot(path=str(SHOTS / "dock-approval.png"), full_page=True)
    await page.click("#grant")
    await page.wait_for_selector("#messages .msg.assistant:has-text('Done.')")
    assert (dock.harness.workspace / "b.txt").read_text() == "hello\n"
    await page.screenshot(path=str(SHOTS / "dock-done.png"), full_page=True)
    assert page.errors == []


async def test_deny_runs_nothing(browser: Any, dock: Dock) -> None:
    dock.provider.queue(plan(WRITE))
    page = await open_page(browser, dock)
    await ask(page, "write hello to b.txt")
    await page.wait_for_selector("#question:not([hidden])")
    await page.click("#deny")
    await page.wait_for_selector("#messages .msg.question.answered:has-text('✗ Denied by you')")
    await page.wait_for_selector("#messages .msg.assistant:has-text('Nothing ran')")
    assert not (dock.harness.workspace / "b.txt").exists()


async def test_edited_arguments_are_previewed_again(browser: Any, dock: Dock) -> None:
    dock.provider.queue(plan(WRITE))
    page = await open_page(browser, dock)
    await ask(page, "write hello to b.txt")
    await page.wait_for_selector("#question:not([hidden])")
    await page.click("#edit")
    await page.fill("#edit-args", '{"path": "c.txt", "text": "edited\\n"}')
    await page.click("#edit-preview")
    await page.wait_for_selector("#messages .msg.question.answered:has-text('✎ Edited by you')")
    await page.wait_for_selector("#question:not([hidden]) .diff .add:has-text('+edited')")
    assert "create c.txt" in await page.inner_text("#question")
    assert not (dock.harness.workspace / "c.txt").exists()
    await page.click("#grant")
    await page.wait_for_selector("#messages .msg.assistant:has-text('Done.')")
    assert (dock.harness.workspace / "c.txt").read_text() == "edited\n"
    assert not (dock.harness.workspace / "b.txt").exists()


async def test_a_dropped_connection_replays_without_loss_or_duplicates(
        browser: Any, dock: Dock) -> None:
    words = " ".join(f"w{i}" for i in range(60))
    dock.provider.queue(say(words))
    page = await open_page(browser, dock)
    cut: dict[str, int] = {}

    async def drop_midway(route: Any) -> None:
        """The first stream is cut after a third of its frames (no terminal event):
        the page must reconnect with the last seq it applied."""
        response = await route.fetch()
        frames = (await response.text()).split("\n\n")
        cut["kept"] = len(frames) // 3
        await route.fulfill(response=response, body="\n\n".join(frames[:cut["kept"]]) + "\n\n")
        await page.unroute("**/api/copilot/run", drop_midway)

    await page.route("**/api/copilot/run", drop_midway)
    reconnects: list[str] = []
    page.on("request", lambda r: reconnects.append(r.url) if "/events" in r.url else None)
    await ask(page, "count")
    await page.wait_for_selector(f"#messages .msg.assistant:has-text('{words[-8:]}')")
    assert reconnects and "after=" in reconnects[0]
    streamed = await page.text_content("#messages pre.stream") or ""
    assert streamed.count("w59") == 1 and streamed.count("w0 ") == 1
    assert [w for w in streamed.replace('"', " ").split() if w.startswith("w")] == \
        words.split()
    runs = await page.evaluate("Object.values(window.dock.lastSeq)")
    segment = next(iter(dock.server.hub.segments.values()))
    assert runs == [segment.next_seq - 1]


async def test_the_mode_persists_across_a_server_restart(browser: Any,
                                                         tmp_path: Path) -> None:
    home = tmp_path / "home"
    async with start_dock(mode=None, home=home, plugins=(adjutant_lmdb,)) as first:
        page = await open_page(browser, first)
        assert await page.get_attribute("#modes button[data-mode='propose']",
                                        "aria-checked") == "true"
        await page.click("#modes button[data-mode='listen']")
        await page.wait_for_selector("#modes button[data-mode='listen'][aria-checked='true']")
        await page.close()
    async with start_dock(mode=None, home=home, plugins=(adjutant_lmdb,)) as second:
        page = await open_page(browser, second)
        assert await page.get_attribute("#modes button[data-mode='listen']",
                                        "aria-checked") == "true"
        assert "(listen-only)" in await page.inner_text("#mode-meaning")


async def test_a_bad_profile_shows_the_loaders_errors(browser: Any, dock: Dock) -> None:
    page = await open_page(browser, dock)
    await page.keyboard.press("Alt+4")
    await page.fill("#profile-text", '{"verbosity": "loud", "colour": 1}')
    await page.click("#profile-check")
    await page.wait_for_selector("#profile-errors li")
    text = await page.inner_text("#profile-errors")
    assert "loud" in text and "$.verbosity" in text, text
    await page.fill("#profile-text", '{"name": "x"}')
    await page.click("#profile-check")
    await page.wait_for_selector("#profile-errors li:has-text('valid')")


async def test_works_at_400_px_and_esc_stops(browser: Any, dock: Dock) -> None:
    dock.provider.queue(say(" ".join(["word"] * 300)))
    dock.provider.delay = 0.03
    page = await open_page(browser, dock, width=400)
    width = await page.evaluate("document.documentElement.scrollWidth")
    assert width <= 400
    await ask(page, "talk")
    await page.wait_for_selector("#messages pre.stream:has-text('word word')")
    await page.screenshot(path=str(SHOTS / "dock-400px.png"), full_page=True)
    await page.keyboard.press("Escape")
    await page.wait_for_selector("#messages .msg.error:has-text('cancelled')")
    assert await page.is_disabled("#stop")


async def test_a_historical_session_rehydrates_after_a_restart(browser: Any,
                                                               tmp_path: Path) -> None:
    home = tmp_path / "home"
    async with start_dock(home=home, plugins=(adjutant_lmdb,)) as first:
        first.provider.queue(plan(WRITE))
        page = await open_page(browser, first)
        await ask(page, "write hello to b.txt")
        await page.wait_for_selector("#question:not([hidden])")
        await page.click("#grant")
        await page.wait_for_selector("#messages .msg.assistant:has-text('Done.')")
        await first.server.hub.drained()
        await page.close()
    async with start_dock(home=home, plugins=(adjutant_lmdb,)) as second:
        page = await open_page(browser, second)
        await page.keyboard.press("Alt+5")
        row = await page.wait_for_selector("#sessions li:has-text('write hello to b.txt')")
        shown = await row.text_content() or ""  # one row: the status it ended with, the answer
        assert "[executed]" in shown and "1 question: granted" in shown, shown
        await page.click("#sessions li:has-text('write hello to b.txt') button:text('Load')")
        await page.wait_for_selector("#historical:not([hidden])")
        await page.wait_for_selector("#messages .msg.user:has-text('write hello to b.txt')")
        await page.wait_for_selector("#messages .msg.tool pre.result:has-text('ok')")
        await page.wait_for_selector("#messages .msg.assistant:has-text('Done.')")
        assert await page.is_hidden("#ask")  # read-only
        assert await page.query_selector("#question") is None  # no live approval buttons
        await page.wait_for_selector(".msg.question.answered:has-text('✓ Granted by you')")
        await page.screenshot(path=str(SHOTS / "dock-history.png"), full_page=True)
        await page.click("#back-live")
        await page.wait_for_selector("#ask:not([hidden])")
        assert page.errors == []


async def test_two_tabs_on_one_thread_run_fifo_each_with_its_own_events(
        browser: Any, dock: Dock) -> None:
    dock.provider.queue(say("first answer " + "and more " * 30), say("second answer"))
    dock.provider.delay = 0.03
    a = await open_page(browser, dock, thread="shared")
    b = await open_page(browser, dock, thread="shared")
    assert await a.evaluate("sessionStorage.getItem('dock.session')") != \
        await b.evaluate("sessionStorage.getItem('dock.session')")
    await ask(a, "one")
    await a.wait_for_selector("#messages pre.stream")
    await ask(b, "two")
    await b.wait_for_selector("#messages .msg.assistant:has-text('second answer')")
    await a.wait_for_selector("#messages .msg.assistant:has-text('first answer')")
    assert await b.evaluate("window.dock.queuedAt") == 1  # B waited behind A
    assert "second answer" not in await a.inner_text("#messages")
    assert "first answer" not in await b.inner_text("#messages")
    prompts = [r["text"] for r in await dock.copilot.log.records() if r["kind"] == "prompt"]
    assert prompts == ["one", "two"]
    threads = {s.thread_id for s in dock.server.hub.segments.values()}
    assert threads == {"shared"}


async def test_a_role_is_picked_shown_in_the_context_stack_or_blocks(browser: Any,
                                                                   dock: Dock) -> None:
    skills = dock.harness.workspace / ".adjutant" / "skills"
    skills.mkdir(parents=True)
    (skills / "reviewer.md").write_text("Review carefully.\n")
    dock.provider.queue(say("reviewed"))
    page = await open_page(browser, dock)
    await page.wait_for_selector("#role option[value='reviewer']", state="attached")
    await page.select_option("#role", "reviewer")
    await ask(page, "review this")
    await page.wait_for_selector("#messages .msg.assistant:has-text('reviewed')")
    await page.keyboard.press("Alt+2")
    stack = await page.inner_text("#context-stack")
    assert "Role reviewer: .adjutant/skills/reviewer.md" in stack and "Context bulletin" in stack
    (skills / "reviewer.md").unlink()  # gone before the next request: it is blocked
    await page.keyboard.press("Alt+1")
    await ask(page, "review again")
    await page.wait_for_selector("#messages .msg.error:has-text('no skill file for role')")
    assert await page.is_disabled("#stop")


async def test_the_command_palette_switches_the_mode_from_the_keyboard(browser: Any,
                                                                     dock: Dock) -> None:
    page = await open_page(browser, dock)
    await page.keyboard.press("Control+k")
    await page.wait_for_selector("#palette[open]")
    await page.keyboard.type("propose")
    await page.keyboard.press("Enter")
    await page.wait_for_selector("#modes button[data-mode='propose'][aria-checked='true']")
    assert await dock.copilot.mode() == "propose-only"
    meaning = await page.inner_text("#mode-meaning")  # said in words too, with its meaning
    assert meaning == "Propose: plans and previews every step; nothing runs (propose-only)"


async def test_grants_count_down_and_revoke_results_show_as_tables_and_diffs(
        browser: Any, dock: Dock) -> None:
    await dock.copilot.grant("write", seconds=3600, channel="user")
    page = await open_page(browser, dock, width=400)
    left = await page.wait_for_selector("#chips .chip.grant[data-grant='write'] .grant-left")
    first = await left.inner_text()
    assert re.fullmatch(r"· (59:[0-5]\d|1:00:00) left", first), first
    await page.wait_for_selector(f"#chips .grant-left:not(:has-text('{first}'))")  # counts down
    await page.screenshot(path=str(SHOTS / "dock-grant-400.png"))
    await page.click("#chips .chip.grant[data-grant='write'] button.revoke")
    await page.wait_for_selector("#chips .chip.grant", state="detached")
    assert dock.copilot.grants == []
    records = (await dock.client.get("/api/log?kind=revoke")).json()["records"]
    assert [r["grant"] for r in records] == ["write"]

    (dock.harness.workspace / "procs.txt").write_text(PROCS)
    dock.provider.queue(plan(("notes.read", {"path": "procs.txt"})))
    await ask(page, "list processes")
    widget = await page.wait_for_selector("#messages .msg.tool table.result-table")
    heads = [await h.inner_text() for h in await widget.query_selector_all("th")]
    assert heads == ["PID", "PPID", "S", "CPU_S", "CPU%", "RSS_MB", "MEM%", "NAME"]
    rows = await widget.query_selector_all("tbody tr")
    cells = [await c.inner_text() for c in await rows[1].query_selector_all("td")]
    assert len(rows) == 2 and cells[0] == "4243"
    assert cells[-1] == "<img src=x onerror=window.pwned=1>"  # markup stays text
    first_row = [await c.inner_text() for c in await rows[0].query_selector_all("td")]
    assert first_row[-1] == "python3 -m http.server"
    assert await page.query_selector("#messages img") is None
    assert await page.evaluate("window.pwned") is None
    assert "2 matching processes" in await page.inner_text("#messages .msg.tool .result-widget")
    await page.wait_for_selector("#messages .msg.assistant:has-text('Done.')")
    (dock.harness.workspace / "listing.txt").write_text(LISTING)  # fs.list's shape
    dock.provider.queue(plan(("notes.read", {"path": "listing.txt"})))
    await ask(page, "list docs")
    listing = await page.wait_for_selector(
        "#messages .msg.tool:has-text('listing.txt') table.result-table")
    heads = [await h.inner_text() for h in await listing.query_selector_all("th")]
    assert heads == ["Kind", "Size", "Modified", "Name"]
    names = [await c.inner_text() for c in await listing.query_selector_all("td:last-child")]
    assert names == ["docs/guide.md", "docs/img/", "docs/latest -> guide.md"]
    await page.wait_for_selector("#messages .msg.assistant:nth-last-child(1):has-text('Done.')")

    dock.provider.queue(plan(WRITE))
    await ask(page, "write b.txt")
    await page.wait_for_selector("#question button#grant")
    await page.click("#grant")
    applied = await page.wait_for_selector("#messages .msg.tool details.applied .diff .add")
    assert await applied.inner_text() == "+hello"
    await page.wait_for_selector("#messages .msg.assistant:has-text('Done.')")
    await page.screenshot(path=str(SHOTS / "dock-results-400.png"), full_page=True)
    await page.keyboard.press("Alt+4")  # the MCP panel says what it needs
    await page.wait_for_selector("#mcp-servers li:has-text('pip install adjutant-mcp')")
    await page.set_viewport_size({"width": 1100, "height": 900})
    await page.screenshot(path=str(SHOTS / "dock-results-1100.png"), full_page=True)
    assert page.errors == []


async def test_bidi_and_invisible_characters_are_shown_as_escapes_everywhere(
        browser: Any, dock: Dock) -> None:
    """A planned write to ``photo_\\u202egnp.sh`` rendered as "photo_hs.png" in the
    Grant box, the plan and the listings. Each field shows the escape now; the edited
    arguments parse back to the name the tool gets."""
    tricky = "photo_\u202egnp.sh"
    listing = "./: 1 entries\nfile     1 B  2026-11-20 10:31  notes\u200b.txt\n"
    dock.provider.queue(plan(("notes.write", {"path": tricky, "text": "x\n"})))
    page = await open_page(browser, dock)
    await ask(page, "save the photo")
    question = await page.wait_for_selector("#question:not([hidden])")
    shown = await question.inner_text()
    assert "photo_\\u202egnp.sh" in shown and "\u202e" not in shown, shown
    assert "\u202e" not in await page.inner_text("#plan")
    edit = await page.input_value("#edit-args")
    assert "\\u202e" in edit and "\u202e" not in edit, edit
    await page.screenshot(path=str(SHOTS / "dock-bidi.png"), full_page=True)
    await page.click("#grant")
    await page.wait_for_selector("#messages .msg.assistant:has-text('Done.')")
    assert (dock.harness.workspace / tricky).exists()  # what was approved is what ran
    body = await page.inner_text("body")
    assert "\u202e" not in body, body
    # a tool's output (a listing) shows the invisible character too
    dock.provider.queue(plan(READ))
    (dock.harness.workspace / "a.txt").write_text(listing)
    await ask(page, "read a.txt")
    for _ in range(100):  # (the page's CSP forbids wait_for_function's eval)
        if "notes\\u200b.txt" in await page.inner_text("#messages"):
            break
        await anyio.sleep(0.1)
    assert "notes\\u200b.txt" in await page.inner_text("#messages")
    assert "\u200b" not in await page.inner_text("body")
    assert page.errors == []
