"""Voice in a real browser (Debian's chromium, driven by Playwright).

* Push-to-talk: chromium's fake microphone plays an espeak-ng recording of "List
  Python processes"; holding the mic button records it, releasing sends it to the
  dock, where the real Whisper (adjutant-stt) transcribes it; the transcript goes in as
  the request and the (scripted) model plans proc.list, which runs. In Listen the same
  words are logged as context and nothing is planned; in Off the button is disabled.
* The speaking indicator: the real default voice (adjutant-tts) speaks into a PortAudio
  stream on ALSA, played in real time (`voicekit.paced_speaker`); the page shows the
  text, Pause shows paused, Copy puts the text on the clipboard, Stop, Esc and Space
  stop it (``speech.stopped`` with reason ``stopped``).

Skipped where chromium, adjutant-stt / adjutant-system or adjutant-tts are missing
(``tox -e dock`` has none of the plugins: there the disabled button is what is tested).
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from dockkit import CHROMIUM, Dock, needs_chromium, plan, say, start_dock
from voicekit import espeak, has_portaudio, paced_speaker

pytestmark = [pytest.mark.anyio, needs_chromium]
LONG = " ".join(f"This is sentence number {i} of a long spoken answer." for i in range(40))


def shot_dir() -> Path | None:
    import os

    chosen = os.environ.get("ADJUTANT_DOCK_SHOTS")
    return Path(chosen) if chosen else None


async def shot(page: Any, name: str) -> None:
    folder = shot_dir()
    if folder is not None:
        folder.mkdir(parents=True, exist_ok=True)
        await page.screenshot(path=str(folder / name), full_page=True)


@pytest.fixture
async def playwright() -> AsyncIterator[Any]:
    from playwright.async_api import async_playwright

    async with async_playwright() as pw:
        yield pw


async def launch(pw: Any, *args: str) -> Any:
    return await pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", *args])


async def open_page(browser: Any, dock: Dock, width: int = 1100,
                    permissions: tuple[str, ...] = ()) -> Any:
    context = await browser.new_context(viewport={"width": width, "height": 800},
                                        permissions=list(permissions))
    page = await context.new_page()
    page.set_default_timeout(15_000)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.errors = errors
    await page.goto(dock.server.url)
    await page.wait_for_selector("#modes button[aria-checked='true']")
    return page


async def hold_mic(page: Any, at_least_ms: int, screenshot: str = "",
                   keys: bool = False) -> None:
    """Press the mic button (or Ctrl+Space), keep it down until that much audio was
    recorded, let go."""
    if keys:
        await page.keyboard.down("Control")
        await page.keyboard.down("Space")
    else:
        await page.hover("#mic")
        await page.mouse.down()
    await page.wait_for_selector("#voice-status[data-kind='recording']")
    import anyio

    # (not wait_for_function: the page's CSP forbids the eval it uses)
    with anyio.fail_after(30):
        await page.evaluate("""(ms) => new Promise((done) => { const t = setInterval(() => {
        if (window.dock.voice.recordedMs >= ms) { clearInterval(t); done(); } }, 50); })""",
                            at_least_ms)
    if screenshot:
        await shot(page, screenshot)
    if keys:
        await page.keyboard.up("Space")
        await page.keyboard.up("Control")
    else:
        await page.mouse.up()


def letters(text: str) -> str:
    return re.sub(r"[^a-z]", "", text.lower())


def events_named(dock: Dock, name: str) -> list[Any]:
    return [e for e in dock.harness.events.envelopes if type(e.event).__name__ == name]


async def test_without_adjutant_stt_the_mic_button_says_what_to_install(
        playwright: Any, dock: Dock) -> None:
    browser = await launch(playwright)
    page = await open_page(browser, dock, width=400)
    mic = await page.wait_for_selector("#mic[disabled]")
    assert "pip install adjutant-stt" in (await mic.get_attribute("title") or "")
    assert await page.is_hidden("#speech")
    await browser.close()
    assert page.errors == []


async def test_a_refused_or_missing_microphone_is_a_clear_message_and_loses_nothing(
        playwright: Any) -> None:
    stt = pytest.importorskip("adjutant_stt", reason="the mic button needs adjutant-stt")
    async with start_dock(plugins=(stt.SttPlugin,)) as dock:
        for flags, expected in (
                (("--use-fake-device-for-media-stream",), "permission denied"),  # not granted
                ((), "No microphone found")):  # no device at all
            browser = await launch(playwright, *flags)
            page = await open_page(browser, dock, width=400)
            await page.fill("#prompt", "half-typed request")
            await page.wait_for_selector("#mic:not([disabled])")
            await page.hover("#mic")
            await page.mouse.down()
            await page.wait_for_selector("#voice-status[data-kind='error']")
            await page.mouse.up()
            said = await page.inner_text("#voice-status")
            await shot(page, f"dock-voice-refused-400-{len(flags)}.png")
            assert expected in said and "Nothing was sent" in said, said
            assert await page.input_value("#prompt") == "half-typed request"
            assert await page.get_attribute("#mic", "aria-pressed") == "false"
            await browser.close()
            assert page.errors == []
        assert not events_named(dock, "Listening")


async def test_push_to_talk_plans_the_spoken_request_listen_logs_it_off_disables(
        playwright: Any, tmp_path: Path) -> None:
    stt = pytest.importorskip("adjutant_stt", reason="hearing needs adjutant-stt")
    system = pytest.importorskip("adjutant_system", reason="proc.list is adjutant-system's")
    import wave

    audio = espeak("List Python processes", tmp_path / "request.wav", lead_ms=2000)
    with wave.open(str(audio)) as w:
        spoken_ms = w.getnframes() * 1000 // w.getframerate()
    browser = await launch(playwright, "--use-fake-ui-for-media-stream",
                           "--use-fake-device-for-media-stream",
                           f"--use-file-for-fake-audio-capture={audio}%noloop")
    async with start_dock(plugins=(stt.SttPlugin, system)) as dock:
        dock.provider.queue(plan(("proc.list", {"name": "python"})))
        page = await open_page(browser, dock, permissions=("microphone",))
        await page.wait_for_selector("#mic:not([disabled])")
        await hold_mic(page, spoken_ms + 900, "dock-voice-recording.png")
        await page.wait_for_selector("#voice-status[data-kind='busy']")
        await shot(page, "dock-voice-transcribing.png")
        said = await page.wait_for_selector("#messages .msg.user:has-text('you (spoken)')",
                                            timeout=60_000)
        assert "pythonprocess" in letters(await said.inner_text())
        await page.wait_for_selector("#messages .msg.tool:has-text('proc.list')")
        await page.wait_for_selector("#messages .msg.assistant:has-text('Done.')")
        asked = dock.provider.requests[-1].prompt
        assert "pythonprocess" in letters(str(asked)), asked
        [started] = [e.event for e in events_named(dock, "ToolCallStart")]
        assert started.tool_call_name == "proc.list"
        assert page.errors == []

        await page.click("#modes button[data-mode='listen']")  # listen-only: context only
        await page.wait_for_selector("#modes button[data-mode='listen'][aria-checked='true']")
        runs = len(events_named(dock, "RunStarted"))
        await page.focus("#prompt")
        await hold_mic(page, spoken_ms + 900, keys=True)  # held Ctrl+Space this time
        context = await page.wait_for_selector("#messages .msg.context", timeout=60_000)
        shown = await context.inner_text()
        assert "pythonprocess" in letters(shown) and "not planned" in shown, shown
        assert await page.input_value("#prompt") == ""  # the held Space typed nothing
        assert len(events_named(dock, "RunStarted")) == runs  # nothing was planned
        assert dock.provider.pending == 0 and len(dock.provider.requests) == 1
        records = (await dock.client.get("/api/log?kind=event")).json()["records"]
        assert [r for r in records if r.get("source") == "speech"]

        await page.click("#modes button[data-mode='off']")
        mic = await page.wait_for_selector("#mic[disabled]")
        assert "Off" in (await mic.get_attribute("title") or "")
        assert page.errors == []
    await browser.close()


async def test_a_remote_engine_asks_first_no_sends_nothing_yes_sends(
        playwright: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    stt = pytest.importorskip("adjutant_stt", reason="hearing needs adjutant-stt")
    openrouter = pytest.importorskip("adjutant_openrouter",
                                     reason="the remote engine is adjutant-openrouter's")
    import wave

    from test_voice_consent import KEY, fake_openrouter, remote_profile, whisper_ear

    audio = espeak("List Python processes", tmp_path / "request.wav", lead_ms=2000)
    with wave.open(str(audio)) as w:
        spoken_ms = w.getnframes() * 1000 // w.getframerate()
    browser = await launch(playwright, "--use-fake-ui-for-media-stream",
                           "--use-fake-device-for-media-stream",
                           f"--use-file-for-fake-audio-capture={audio}%noloop")
    with fake_openrouter()(hear=whisper_ear) as server:
        monkeypatch.setenv("OPENROUTER_API_KEY", KEY)
        monkeypatch.setenv("ADJUTANT_OPENROUTER_URL", server.url)
        async with start_dock(plugins=(stt.SttPlugin, openrouter),
                              profile=remote_profile()) as dock:
            host = server.url.removeprefix("http://").split("/")[0]
            dock.provider.queue(say("Heard you."))
            for width in (400, 1100):
                page = await open_page(browser, dock, width=width, permissions=("microphone",))
                mic = await page.wait_for_selector("#mic:not([disabled])")
                assert f"openrouter ({host})" in (await mic.get_attribute("title") or "")
                await hold_mic(page, spoken_ms + 900)
                dialog = await page.wait_for_selector("#consent[open]")
                shown = await dialog.inner_text()
                assert "openrouter" in shown and host in shown, shown
                assert "google/gemini-2.5-flash" in shown and "leaves this machine" in shown
                assert await page.evaluate("document.activeElement.id") == "consent-no"
                await shot(page, f"dock-voice-consent-{width}.png")
                if width == 400:  # Esc is No: nothing is sent, the refusal is logged
                    await page.keyboard.press("Escape")
                    await page.wait_for_selector("#consent:not([open])", state="attached")
                    status = await page.wait_for_selector(
                        "#voice-status:has-text('Not sent: you said no')")
                    assert "Nothing left this machine" in await status.inner_text()
                    assert server.audio == []
                    records = (await dock.client.get("/api/log?kind=speech_consent")).json()
                    [refused] = records["records"]
                    assert (refused["given"], refused["by"]) == (False, "frontend")
                else:  # Yes: sent, and the words come back as the request
                    await page.click("#consent-yes")
                    said = await page.wait_for_selector(
                        "#messages .msg.user:has-text('you (spoken)')", timeout=90_000)
                    assert "pythonprocess" in letters(await said.inner_text())
                    await page.wait_for_selector("#messages .msg.assistant:has-text('Heard you.')")
                    assert len(server.audio) == 1
                    records = (await dock.client.get("/api/log?kind=speech_consent")).json()
                    given = records["records"][-1]
                    assert (given["given"], given["by"], given["host"]) == (True, "frontend",
                                                                            host)
                assert page.errors == []
                await page.context.close()
    await browser.close()


@pytest.mark.skipif(not has_portaudio(), reason="needs PortAudio and ALSA "
                    "(apt-get install libportaudio2)")
async def test_the_speaking_indicator_pauses_copies_and_stops(
        playwright: Any, tmp_path: Path) -> None:
    tts = pytest.importorskip("adjutant_tts", reason="speaking needs adjutant-tts")
    browser = await launch(playwright)
    with paced_speaker(tmp_path):
        async with start_dock(plugins=(tts.TtsPlugin,),
                              env={"ADJUTANT_SPEECH_OUTPUT": "device"}) as dock:
            speaker = tts.speaker_for(dock.harness.kernel)
            try:
                await speaking_indicator(dock, speaker, browser)
            finally:  # the kernel's shutdown would wait for a paused answer to end
                speaker.stop()
    await browser.close()


async def speaking_indicator(dock: Dock, speaker: Any, browser: Any) -> None:
    page = await open_page(browser, dock,
                           permissions=("clipboard-read", "clipboard-write"))
    said = await speaker.say(LONG)
    assert said is not None
    await page.wait_for_selector("#speech:not([hidden]) #speech-text:has-text("
                                 "'This is sentence number 0')")
    await page.wait_for_selector("#speech-time:has-text(' s of ')")  # speech.progress
    await page.click("#speech-pause")
    await page.wait_for_selector("#speech[data-state='paused']")
    assert await page.text_content("#speech-state") == "Paused"
    assert await page.text_content("#speech-pause") == "Resume"
    assert speaker.paused
    await page.reload()  # a page opened mid-speech learns it from the stream's snapshot
    await page.wait_for_selector("#speech[data-state='paused'] #speech-text:has-text("
                                 "'This is sentence number 0')")
    await page.wait_for_selector("#speech-time:has-text(' s of ')")
    await shot(page, "dock-speaking-paused.png")
    await page.click("#speech-copy")
    await page.wait_for_selector("#speech-note:has-text('Copied')")
    assert await page.evaluate("navigator.clipboard.readText()") == said.text
    await page.set_viewport_size({"width": 400, "height": 800})
    await shot(page, "dock-speaking-400.png")
    await page.set_viewport_size({"width": 1100, "height": 800})
    await page.click("#speech-stop")
    await page.wait_for_selector("#speech", state="hidden")
    assert (await said.wait()).reason == "stopped"
    assert await page.evaluate("window.dock.voice.lastStopped.reason") == "stopped"

    # Esc stops speaking first; with nothing said, it denies the open question
    dock.provider.queue(plan(("notes.write", {"path": "b.txt", "text": "hello\n"})))
    await page.fill("#prompt", "write hello to b.txt")
    await page.press("#prompt", "Enter")
    await page.wait_for_selector("#question:not([hidden])")
    said = await speaker.say(LONG)
    assert said is not None
    await page.wait_for_selector("#speech:not([hidden])")
    await page.keyboard.press("Escape")
    assert (await said.wait()).reason == "stopped"
    await page.wait_for_selector("#speech", state="hidden")
    assert await page.is_visible("#question")  # still asked
    await page.keyboard.press("Escape")
    await page.wait_for_selector("#messages .msg.question.answered:has-text('✗ Denied by you')")
    assert not (dock.harness.workspace / "b.txt").exists()
    await page.keyboard.press("Alt+1")

    # Space stops it too, but not while typing in the prompt box
    said = await speaker.say(LONG)
    assert said is not None
    await page.wait_for_selector("#speech:not([hidden])")
    await page.focus("#prompt")
    await page.keyboard.press("Space")
    assert await page.input_value("#prompt") == " " and not said.finished
    await page.evaluate("document.activeElement.blur()")
    await page.keyboard.press("Space")
    assert (await said.wait()).reason == "stopped"
    await page.wait_for_selector("#speech", state="hidden")
    stopped = [e.event.reason for e in events_named(dock, "SpeechStopped")]
    assert stopped == ["stopped"] * 3, stopped
    assert page.errors == []
