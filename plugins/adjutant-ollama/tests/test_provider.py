"""The Ollama provider against its documented native API and quirks."""

from __future__ import annotations

from contextlib import aclosing
from typing import Any

import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st

from adjutant.testing.conformance import ProviderConformance
from adjutant_hookspecs import CompletionChunk, CompletionRequest, ProviderError
from adjutant_ollama import Ollama, truncation_warning

from .fake_ollama import FakeOllama, error

pytestmark = pytest.mark.anyio
MODEL = "qwen2.5:0.5b"
NO_ENV: dict[str, str] = {}


def ollama(url: str, **options: Any) -> Ollama:
    return Ollama(url, env=NO_ENV, **options)


async def collect(provider: Ollama, request: CompletionRequest) -> list[CompletionChunk]:
    try:
        async with aclosing(provider.complete(request)) as stream:
            return [c async for c in stream]
    finally:
        await provider.aclose()


def chats(server: FakeOllama) -> list[Any]:
    return [r for r in server.requests if r.path == "/api/chat"]


async def test_streams_ndjson_with_usage_and_sends_the_documented_body() -> None:
    with FakeOllama() as server:
        request = CompletionRequest(prompt="p", system="s", model=MODEL, stop=("<END>",),
                                    json_schema={"type": "object"}, context_size=8192,
                                    max_tokens=64, temperature=0.1, grammar="root ::= x")
        chunks = await collect(ollama(server.url, keep_alive="10m"), request)
        body = server.requests[-1].json()
    assert [c.text for c in chunks] == ["Hel", "lo", ""]
    final = chunks[-1]
    assert final.finish_reason == "stop" and not final.warnings
    assert final.usage is not None
    assert (final.usage.prompt_tokens, final.usage.completion_tokens) == (10, 2)
    assert body == {
        "model": MODEL, "stream": True, "keep_alive": "10m", "format": {"type": "object"},
        "options": {"temperature": 0.1, "num_predict": 64, "stop": ["<END>"], "num_ctx": 8192},
        "messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "p"}]}


async def test_optional_fields_are_left_out() -> None:
    """No schema: no ``format``; no context size: Ollama's own; no system message."""
    with FakeOllama() as server:
        await collect(ollama(server.url, model=MODEL), CompletionRequest(prompt="p"))
        body = server.requests[-1].json()
    assert "format" not in body and body["keep_alive"] == "5m"
    assert body["options"] == {"temperature": 0.2, "num_predict": 512}
    assert body["messages"] == [{"role": "user", "content": "p"}]


async def test_lines_split_across_reads_are_reassembled() -> None:
    with FakeOllama(split=True) as server:
        chunks = await collect(ollama(server.url, model=MODEL), CompletionRequest(prompt="p"))
    assert "".join(c.text for c in chunks) == "Hello" and chunks[-1].finish_reason == "stop"


@pytest.mark.parametrize(("done_reason", "finish"), [("length", "length"), ("stop", "stop"),
                                                     ("unload", "stop"), ("", "stop")])
async def test_done_reason_maps_to_finish(done_reason: str, finish: str) -> None:
    with FakeOllama(done_reason=done_reason) as server:
        chunks = await collect(ollama(server.url, model=MODEL), CompletionRequest(prompt="p"))
    assert chunks[-1].finish_reason == finish


async def test_a_silently_truncated_prompt_is_flagged() -> None:
    with FakeOllama() as server:
        request = CompletionRequest(prompt="word " * 8000, model=MODEL, context_size=2048)
        chunks = await collect(ollama(server.url), request)
    assert chunks[-1].usage is not None and chunks[-1].usage.prompt_tokens == 2048
    (warning,) = chunks[-1].warnings
    assert "prompt was cut to 2048 tokens by Ollama's context size (2048)" in warning
    assert "OLLAMA_CONTEXT_LENGTH" in warning


async def test_truncation_at_the_servers_own_context_size_is_flagged() -> None:
    """No num_ctx in the request: the server's default (4096) or OLLAMA_CONTEXT_LENGTH."""
    for context in (4096, 8192):
        with FakeOllama(context=context) as server:
            request = CompletionRequest(prompt="word " * 12000, model=MODEL)
            chunks = await collect(ollama(server.url), request)
        assert f"cut to {context} tokens" in chunks[-1].warnings[0]


async def test_a_modelfile_num_ctx_learnt_from_show_is_used() -> None:
    with FakeOllama(context=2048) as server:
        provider = ollama(server.url)
        assert await provider.capabilities_for(MODEL) == ("completion", "tools")
        assert provider.known_context == {MODEL: 2048}
        chunks = await collect(provider, CompletionRequest(prompt="w " * 9000, model=MODEL))
    assert "context size (2048)" in chunks[-1].warnings[0]


async def test_a_long_prompt_that_fits_is_not_flagged() -> None:
    with FakeOllama() as server:
        request = CompletionRequest(prompt="word " * 2000, model=MODEL, context_size=16384)
        chunks = await collect(ollama(server.url), request)
    assert chunks[-1].warnings == ()


@given(st.text(max_size=400), st.integers(0, 200_000), st.none() | st.integers(1, 200_000))
def test_no_truncation_warning_when_the_count_covers_the_text(
        prompt: str, extra: int, window: int | None) -> None:
    counted = len(prompt) // 4 + extra
    assert truncation_warning("", prompt, counted, window) is None


@given(st.sampled_from([2048, 4096, 8192]), st.integers(0, 100))
def test_truncation_warning_when_the_window_is_full(window: int, below: int) -> None:
    counted = window - below
    assert truncation_warning("sys", "x" * (window * 8), counted, window)
    assert truncation_warning("sys", "x" * (window * 8), counted, None)


async def test_an_error_line_mid_stream_is_raised() -> None:
    with FakeOllama(fail_after=1) as server, \
            pytest.raises(ProviderError, match="failed mid-stream: an error was encountered"):
        await collect(ollama(server.url), CompletionRequest(prompt="p", model=MODEL))


async def test_a_stream_ending_without_done_is_a_retryable_error() -> None:
    with FakeOllama(cut_after=1) as server, \
            pytest.raises(ProviderError, match="without finishing") as caught:
        await collect(ollama(server.url), CompletionRequest(prompt="p", model=MODEL))
    assert caught.value.retryable


async def test_busy_is_retried() -> None:
    with FakeOllama(busy=2) as server:
        chunks = await collect(ollama(server.url), CompletionRequest(prompt="p", model=MODEL))
        assert len(chats(server)) == 3
    assert chunks[-1].finish_reason == "stop"


async def test_429_honours_retry_after_then_succeeds() -> None:
    limited = error(429, "too many requests", **{"Retry-After": "0.2"})
    with FakeOllama(refusals=[limited]) as server:
        started = anyio.current_time()
        chunks = await collect(ollama(server.url), CompletionRequest(prompt="p", model=MODEL))
        waited = anyio.current_time() - started
        assert len(chats(server)) == 2
    assert chunks[-1].finish_reason == "stop" and waited >= 0.2


async def test_busy_for_too_long_is_reported() -> None:
    with FakeOllama(busy=10) as server, pytest.raises(ProviderError, match="server busy") as e:
        await collect(ollama(server.url, retries=1, max_retry_wait=0.01),
                      CompletionRequest(prompt="p", model=MODEL))
    assert e.value.status == 503 and e.value.retryable


async def test_an_unknown_model_says_to_pull_it() -> None:
    with FakeOllama() as server, pytest.raises(ProviderError, match="ollama pull llama9") as e:
        await collect(ollama(server.url), CompletionRequest(prompt="p", model="llama9"))
    assert e.value.status == 404 and not e.value.retryable


async def test_a_missing_capability_is_explained() -> None:
    refused = error(400, "registry.ollama.ai/library/gemma3:270m does not support tools")
    with FakeOllama(refusals=[refused]) as server, \
            pytest.raises(ProviderError, match="does not support tools") as caught:
        await collect(ollama(server.url), CompletionRequest(prompt="p", model="gemma3:270m"))
    assert caught.value.status == 400 and "ollama show" in caught.value.hint


async def test_no_model_and_no_server_are_explained() -> None:
    with pytest.raises(ProviderError, match="no Ollama model chosen"):
        await collect(ollama("http://127.0.0.1:9"), CompletionRequest(prompt="p"))
    with pytest.raises(ProviderError, match=r"not reachable.*ollama serve") as caught:
        await collect(ollama("http://127.0.0.1:9", retries=0),
                      CompletionRequest(prompt="p", model=MODEL))
    assert caught.value.retryable


async def test_models_capabilities_preload_and_unload() -> None:
    with FakeOllama() as server:
        provider = ollama(server.url)
        try:
            assert [(m.name, m.loaded) for m in await provider.list_models()] == [
                (MODEL, False), ("gemma3:270m", False)]
            await provider.load_model("gemma3:270m")
            assert provider.model == "gemma3:270m"
            assert [m.name for m in await provider.list_models() if m.loaded] == ["gemma3:270m"]
            assert await provider.capabilities_for("gemma3:270m") == ("completion",)
            await provider.unload_model("gemma3:270m")
            assert not [m for m in await provider.list_models() if m.loaded]
            with pytest.raises(ProviderError, match="ollama pull nope"):
                await provider.load_model("nope")
            assert provider.model == "gemma3:270m"
        finally:
            await provider.aclose()
        calls = [r.json() for r in server.requests if r.path == "/api/generate"]
    assert calls[:2] == [{"model": "gemma3:270m", "keep_alive": "5m"},
                         {"model": "gemma3:270m", "keep_alive": 0}]


async def test_the_preloaded_model_answers_requests_without_a_model() -> None:
    with FakeOllama() as server:
        provider = ollama(server.url)
        await provider.load_model(MODEL)
        await collect(provider, CompletionRequest(prompt="p"))
        assert chats(server)[-1].json()["model"] == MODEL


async def test_cancelling_closes_the_connection() -> None:
    with FakeOllama(pieces=("tok ",) * 200, delay=0.02) as server:
        provider = ollama(server.url, model=MODEL)
        got = []
        with anyio.move_on_after(0.3):
            async with aclosing(provider.complete(CompletionRequest(prompt="x"))) as stream:
                async for chunk in stream:
                    got.append(chunk)
        await provider.aclose()
        assert got and await anyio.to_thread.run_sync(server.wait_for_disconnect)
        assert server.completed_streams == 0


async def test_breaking_out_early_closes_the_connection() -> None:
    with FakeOllama(pieces=("tok ",) * 200, delay=0.02) as server:
        provider = ollama(server.url, model=MODEL)
        async with aclosing(provider.complete(CompletionRequest(prompt="x"))) as stream:
            async for _ in stream:
                break
        await provider.aclose()
        assert await anyio.to_thread.run_sync(server.wait_for_disconnect)


def test_configuration_from_the_environment() -> None:
    assert Ollama(env={"OLLAMA_HOST": "10.0.0.5:11434"}).base_url == "http://10.0.0.5:11434"
    assert Ollama(env={}).base_url == "http://127.0.0.1:11434"
    provider = Ollama(env={"ADJUTANT_OLLAMA_URL": "https://box:1/", "OLLAMA_HOST": "ignored",
                           "OLLAMA_KEEP_ALIVE": "300", "ADJUTANT_OLLAMA_MODEL": "m"})
    assert (provider.base_url, provider.keep_alive, provider.model) == ("https://box:1", 300, "m")
    assert Ollama(env={"ADJUTANT_OLLAMA_KEEP_ALIVE": "-1"}).keep_alive == -1
    assert Ollama(env={}, keep_alive="1h").keep_alive == "1h"
    caps = Ollama(env={}).capabilities
    assert (caps.json_schema, caps.grammar, caps.native_tools, caps.load_models) == (
        True, False, True, True)


class TestConformance(ProviderConformance):
    @pytest.fixture
    def provider(self) -> Any:
        with FakeOllama() as server:
            yield ollama(server.url, model=MODEL)
