"""A remote speech engine from the dock: the page asks, and a yes is bound to the
destination it showed (engine, host, model). The fake OpenRouter transcribes what it
receives with the real local Whisper, so a transcript proves the recording arrived and
its list of recordings proves what did not.

Needs adjutant-stt and adjutant-openrouter (skipped in ``tox -e dock``)."""

from __future__ import annotations

import importlib.util
import io
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import attrs
import pytest
from dockkit import Dock, start_dock
from voicekit import espeak

pytestmark = pytest.mark.anyio
FAKE = Path(__file__).parents[2] / "adjutant-openrouter" / "tests" / "fake_openrouter.py"
KEY = "sk-or-v1-test"


def letters(text: str) -> str:
    return "".join(c for c in text.lower() if c.isalpha())


def whisper_ear(audio: bytes, fmt: str) -> str:
    """The fake hears with the real embedded Whisper."""
    from faster_whisper import decode_audio

    from adjutant_stt import HeardNothing, transcribe

    try:
        return transcribe(decode_audio(io.BytesIO(audio), sampling_rate=16_000)).text
    except HeardNothing:
        return ""


def fake_openrouter() -> Any:
    """adjutant-openrouter's fake (the repository's, not the wheel's)."""
    if not FAKE.exists():
        pytest.skip("the fake OpenRouter is in the repository, not in a distribution")
    spec = importlib.util.spec_from_file_location("dock_fake_openrouter", FAKE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.FakeOpenRouter


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    pytest.importorskip("adjutant_stt", reason="hearing needs adjutant-stt")
    pytest.importorskip("adjutant_openrouter", reason="the remote engine is adjutant-openrouter's")
    with fake_openrouter()(hear=whisper_ear) as fake:
        monkeypatch.setenv("OPENROUTER_API_KEY", KEY)
        monkeypatch.setenv("ADJUTANT_OPENROUTER_URL", fake.url)
        yield fake


def remote_profile(model: str | None = None) -> Any:
    from adjutant import ModelPreset, Profile

    plain = Profile(model=ModelPreset(provider="scripted"))
    return attrs.evolve(plain, plugins={"stt": {"engine": "openrouter",
                                                "remote_model": model}})


@pytest.fixture
async def remote_dock(server: Any) -> AsyncIterator[Dock]:
    import adjutant_openrouter
    import adjutant_stt

    async with start_dock(plugins=(adjutant_stt.SttPlugin, adjutant_openrouter),
                          profile=remote_profile()) as running:
        yield running


async def hear(dock: Dock, body: bytes, digest: str | None = None) -> Any:
    headers = {"Content-Type": "audio/wav"}
    if digest is not None:
        headers["X-Adjutant-Consent"] = digest
    return await dock.client.post("/api/voice/hear", content=body, headers=headers,
                                  timeout=180)


async def records(dock: Dock, kind: str) -> list[dict[str, Any]]:
    return (await dock.client.get(f"/api/log?kind={kind}")).json()["records"]


async def remote(dock: Dock) -> dict[str, Any]:
    found = (await dock.client.get("/api/state")).json()["voice"]["remote"]
    assert found is not None
    return dict(found)


async def test_the_state_names_where_the_audio_goes(remote_dock: Dock, server: Any) -> None:
    where = await remote(remote_dock)
    host = server.url.removeprefix("http://").split("/")[0]
    assert (where["engine"], where["host"], where["model"]) == (
        "openrouter", host, "google/gemini-2.5-flash")
    assert where["question"].startswith(f"send this recording to openrouter ({host}, model "
                                        "google/gemini-2.5-flash)? It leaves this machine.")
    assert len(where["digest"]) == 64
    # the local default names nothing
    async with start_dock() as plain:
        assert (await plain.client.get("/api/state")).json()["voice"]["remote"] is None


async def test_without_a_yes_nothing_is_sent_and_the_refusal_is_logged(
        remote_dock: Dock, server: Any, tmp_path: Path) -> None:
    body = espeak("List Python processes", tmp_path / "request.wav").read_bytes()
    got = (await hear(remote_dock, body)).json()
    assert got["status"] == "nothing" and "not sent" in got["text"], got
    [consent] = await records(remote_dock, "speech_consent")
    assert (consent["engine"], consent["given"]) == ("openrouter", False)
    assert consent["by"].startswith("nobody")
    # the user's no (or Esc) in the page: nothing was even uploaded; logged as refused
    where = await remote(remote_dock)
    answer = await remote_dock.client.post("/api/voice/consent", json={
        "digest": where["digest"], "given": False})
    assert answer.status_code == 200 and answer.json()["status"] == "nothing"
    refused = (await records(remote_dock, "speech_consent"))[-1]
    assert (refused["given"], refused["by"]) == (False, "frontend")
    [dock_no] = await records(remote_dock, "dock_voice_consent")
    assert (dock_no["given"], dock_no["digest"]) == (False, where["digest"])
    # a yes travels with the recording, never alone
    assert (await remote_dock.client.post("/api/voice/consent", json={
        "digest": where["digest"], "given": True})).status_code == 400
    assert server.audio == [] and not [r for r in server.requests
                                       if r.path == "/chat/completions"]


async def test_a_yes_to_another_destination_is_409_and_nothing_is_read_or_sent(
        remote_dock: Dock, server: Any, tmp_path: Path) -> None:
    body = espeak("List Python processes", tmp_path / "request.wav").read_bytes()
    shown = await remote(remote_dock)
    # the profile changes while the question is open: another model
    changed = attrs.evolve(remote_profile("openai/gpt-4o-audio-preview"), name="other")
    await remote_dock.copilot.use_preset(changed)
    answer = await hear(remote_dock, body, shown["digest"])
    assert answer.status_code == 409, answer.text
    got = answer.json()
    assert got["status"] == "changed" and "nothing was sent" in got["error"].lower()
    assert got["remote"]["model"] == "openai/gpt-4o-audio-preview"
    assert got["remote"]["digest"] != shown["digest"]
    answer = await remote_dock.client.post("/api/voice/consent", json={
        "digest": shown["digest"], "given": False})
    assert answer.status_code == 409
    forged = await hear(remote_dock, body, "0" * 64)
    assert forged.status_code == 409
    assert server.audio == []
    assert await records(remote_dock, "speech_consent") == []
    assert await records(remote_dock, "dock_voice_consent") == []
    assert not [e for e in remote_dock.harness.events.envelopes
                if type(e.event).__name__ == "Listening"]


async def test_a_yes_bound_to_the_destination_sends_and_the_words_come_back(
        remote_dock: Dock, server: Any, tmp_path: Path) -> None:
    body = espeak("List Python processes", tmp_path / "request.wav").read_bytes()
    shown = await remote(remote_dock)
    answer = await hear(remote_dock, body, shown["digest"])
    assert answer.status_code == 200, answer.text
    got = answer.json()
    assert got["status"] == "request" and "pythonprocess" in letters(got["text"]), got
    assert len(server.audio) == 1
    [consent] = await records(remote_dock, "speech_consent")
    assert (consent["engine"], consent["host"], consent["model"], consent["given"],
            consent["by"]) == ("openrouter", shown["host"], shown["model"], True,
                               "frontend")
    [dock_yes] = await records(remote_dock, "dock_voice_consent")
    assert (dock_yes["given"], dock_yes["digest"]) == (True, shown["digest"])
    [sent] = await records(remote_dock, "speech_sent")
    assert sent["outcome"] == "ok" and sent["bytes"] == len(server.audio[0][0])
