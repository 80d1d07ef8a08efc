"""The OpenRouter provider against its documented API, quirks and error paths."""

from __future__ import annotations

import base64
from contextlib import aclosing
from typing import Any

import anyio
import pytest

from adjutant.testing.conformance import ProviderConformance
from adjutant_hookspecs import CompletionRequest, ProviderError
from adjutant_openrouter import OpenRouter

from .fake_openrouter import FakeOpenRouter

pytestmark = pytest.mark.anyio
KEY = "sk-or-v1-test"
MODEL = "openai/gpt-4o-mini"


def provider(server: FakeOpenRouter, **options: Any) -> OpenRouter:
    return OpenRouter(server.url, api_key=KEY, **options)


async def collect(p: OpenRouter, request: CompletionRequest) -> list[Any]:
    try:
        async with aclosing(p.complete(request)) as stream:
            return [c async for c in stream]
    finally:
        await p.aclose()


async def test_streams_with_processing_comments_attribution_and_schema() -> None:
    with FakeOpenRouter() as server:
        request = CompletionRequest(prompt="p", system="s", model=MODEL,
                                    json_schema={"type": "object"})
        chunks = await collect(provider(server), request)
        sent = server.requests[-1]
    assert "".join(c.text for c in chunks) == "Hello"
    assert chunks[-1].finish_reason == "stop" and chunks[-1].usage.prompt_tokens == 1
    body = sent.json()
    assert body["response_format"] == {"type": "json_schema", "json_schema": {
        "name": "reply", "strict": True, "schema": {"type": "object"}}}
    assert body["provider"] == {"require_parameters": True}
    assert sent.headers["http-referer"] and sent.headers["x-openrouter-title"] == "Adjutant"
    assert sent.headers["authorization"] == f"Bearer {KEY}"
    # usage accounting asked for, and the cost it reports carried to the budget
    assert body["usage"] == {"include": True}
    assert chunks[-1].usage.cost == pytest.approx(1 * 0.00000015 + 2 * 0.0000006)


async def test_no_schema_no_require_parameters() -> None:
    with FakeOpenRouter() as server:
        await collect(provider(server), CompletionRequest(prompt="p", model=MODEL))
        assert "provider" not in server.requests[-1].json()


async def test_an_in_band_error_after_tokens_is_raised() -> None:
    with FakeOpenRouter(mode="midstream") as server, \
            pytest.raises(ProviderError, match="Provider disconnected"):
        await collect(provider(server, retries=0), CompletionRequest(prompt="p", model=MODEL))


async def test_rate_limit_then_success_and_a_long_wait_is_reported() -> None:
    with FakeOpenRouter(mode="rate-once") as server:
        chunks = await collect(provider(server), CompletionRequest(prompt="p", model=MODEL))
        assert chunks[-1].finish_reason == "stop" and len(server.requests) == 2
    with FakeOpenRouter(mode="rate") as server, pytest.raises(ProviderError) as caught:
        await collect(provider(server, retries=0),
                      CompletionRequest(prompt="p", model=MODEL))
    assert caught.value.status == 429 and "limit 20" in str(caught.value)
    assert "free models" in caught.value.hint


@pytest.mark.parametrize(("mode", "match"), [("credits", "no credits"),
                                             ("moderation", "reasons: violence")])
async def test_credit_and_moderation_refusals(mode: str, match: str) -> None:
    with FakeOpenRouter(mode=mode) as server, pytest.raises(ProviderError, match=match):
        await collect(provider(server), CompletionRequest(prompt="p", model=MODEL))


async def test_a_missing_or_wrong_key_says_where_to_get_one() -> None:
    with pytest.raises(ProviderError, match="OPENROUTER_API_KEY"):
        await collect(OpenRouter("http://127.0.0.1:9"), CompletionRequest(prompt="p"))
    with FakeOpenRouter() as server, pytest.raises(ProviderError, match="OPENROUTER_API_KEY"):
        await collect(OpenRouter(server.url, api_key="wrong"),
                      CompletionRequest(prompt="p", model=MODEL))


async def test_models_with_capabilities_and_switching() -> None:
    with FakeOpenRouter() as server:
        p = provider(server)
        models = {m.name: m for m in await p.list_models()}
        await p.load_model("google/gemini-2.5-flash")
        with pytest.raises(ProviderError, match="has no model"):
            await p.load_model("nope/nope")
        await collect(p, CompletionRequest(prompt="p"))
        assert server.requests[-1].json()["model"] == "google/gemini-2.5-flash"
    assert models[MODEL].context_size == 128000
    assert "response_format" in models[MODEL].capabilities
    assert "input:audio" in models["google/gemini-2.5-flash"].capabilities


def a_wav(seconds: float = 0.5, rate: int = 16_000) -> bytes:
    """A real WAV file (a 440 Hz tone, 16-bit mono): the fake parses what it gets."""
    import io
    import math
    import struct
    import wave

    out = io.BytesIO()
    with wave.open(out, "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(rate)
        wav.writeframes(b"".join(struct.pack("<h", int(8000 * math.sin(i * 0.1728)))
                                 for i in range(int(rate * seconds))))
    return out.getvalue()


async def test_audio_input_is_raw_base64_and_refused_for_text_only_models() -> None:
    audio = a_wav()
    with FakeOpenRouter() as server:
        p = provider(server)
        await p.list_models()
        request = CompletionRequest(prompt="transcribe", model="google/gemini-2.5-flash")
        async with aclosing(p.complete_audio(request, audio)) as stream:
            chunks = [c async for c in stream]
        content = server.requests[-1].json()["messages"][-1]["content"]
        with pytest.raises(ProviderError, match="does not take audio"):
            await drain(p.complete_audio(CompletionRequest(prompt="x", model=MODEL), audio))
        await p.aclose()
    assert chunks[-1].finish_reason == "stop"
    assert content[1] == {"type": "input_audio", "input_audio": {
        "data": base64.b64encode(audio).decode(), "format": "wav"}}
    assert server.audio == [(audio, "wav")]


async def test_a_model_without_audio_input_is_refused_by_the_server_too() -> None:
    """Without a model list to check against, the request goes out and OpenRouter
    answers 404 (no endpoint takes audio) or 400 (no such model): one clear error."""
    with FakeOpenRouter() as server:
        p = provider(server)
        with pytest.raises(ProviderError, match="support input audio") as caught:
            await drain(p.complete_audio(CompletionRequest(prompt="x", model=MODEL), a_wav()))
        assert caught.value.status == 404
        with pytest.raises(ProviderError, match="not a valid model ID") as caught:
            await drain(p.complete_audio(CompletionRequest(prompt="x", model="no/such"),
                                         a_wav()))
        assert caught.value.status == 400
        await p.aclose()
        assert server.audio == []


async def test_audio_never_rides_on_a_concurrent_plain_request() -> None:
    """The recording is attached to its own request only, even when the same provider
    serves a plain prompt while the audio request is streaming."""
    with FakeOpenRouter(pieces=("tok ",) * 20, delay=0.01) as server:
        p = provider(server)
        audio_request = CompletionRequest(prompt="transcribe", model="google/gemini-2.5-flash")
        async with anyio.create_task_group() as group:
            group.start_soon(drain, p.complete_audio(audio_request, a_wav()))
            await anyio.sleep(0.02)
            group.start_soon(drain, p.complete(CompletionRequest(prompt="plain", model=MODEL)))
        await p.aclose()
        bodies = [r.json() for r in server.requests if r.path == "/chat/completions"]
    plain = next(b for b in bodies if b["messages"][-1]["content"] == "plain")
    assert len(bodies) == 2 and len(server.audio) == 1
    assert "input_audio" not in str(plain)


@pytest.mark.parametrize(("part", "problem"), [
    ({"data": "data:audio/wav;base64,AAAA", "format": "wav"}, "raw base64"),
    ({"data": "not base64!", "format": "wav"}, "not valid base64"),
    ({"data": base64.b64encode(b"RIFF....WAVEfmt ").decode(), "format": "wav"},
     "not a WAV file"),
    ({"data": base64.b64encode(b"x").decode(), "format": "opus"}, "not supported"),
])
async def test_the_fake_refuses_audio_the_real_api_refuses(part: dict[str, str],
                                                           problem: str) -> None:
    import httpx

    body = {"model": "google/gemini-2.5-flash", "messages": [{"role": "user", "content": [
        {"type": "text", "text": "transcribe"}, {"type": "input_audio", "input_audio": part}]}]}
    with FakeOpenRouter() as server:
        async with httpx.AsyncClient() as client:
            answer = await client.post(f"{server.url}/chat/completions", json=body,
                                       headers={"Authorization": f"Bearer {KEY}"})
    assert answer.status_code == 400
    assert problem in answer.json()["error"]["message"]
    assert answer.json()["error"]["code"] == 400


async def drain(stream: Any) -> None:
    async with aclosing(stream) as chunks:
        async for _ in chunks:
            pass


async def test_cancelling_closes_the_connection() -> None:
    with FakeOpenRouter(pieces=("tok ",) * 200, delay=0.02) as server:
        p = provider(server)
        got = []
        with anyio.move_on_after(0.3):
            request = CompletionRequest(prompt="x", model=MODEL)
            async with aclosing(p.complete(request)) as stream:
                async for chunk in stream:
                    got.append(chunk)
        await p.aclose()
        assert got and await anyio.to_thread.run_sync(server.wait_for_disconnect)


def test_key_from_the_environment() -> None:
    assert OpenRouter.from_environment({"OPENROUTER_API_KEY": "k"}).api_key == "k"
    assert OpenRouter.from_environment({}).api_key is None


class TestConformance(ProviderConformance):
    @pytest.fixture
    def provider(self) -> Any:
        with FakeOpenRouter() as server:
            yield OpenRouter(server.url, api_key=KEY, model=MODEL)
