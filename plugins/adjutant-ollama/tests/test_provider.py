"""The Ollama provider against its documented native API and quirks."""

from __future__ import annotations

from contextlib import aclosing
from typing import Any

import anyio
import pytest

from adjutant.testing.conformance import ProviderConformance
from adjutant_hookspecs import CompletionRequest, ProviderError
from adjutant_ollama import Ollama

from .fake_ollama import FakeOllama

pytestmark = pytest.mark.anyio
MODEL = "qwen2.5:0.5b"


async def collect(provider: Ollama, request: CompletionRequest) -> list[Any]:
    try:
        async with aclosing(provider.complete(request)) as stream:
            return [c async for c in stream]
    finally:
        await provider.aclose()


async def test_streams_ndjson_with_usage_and_sends_the_documented_body() -> None:
    with FakeOllama() as server:
        request = CompletionRequest(prompt="p", system="s", model=MODEL, stop=("<END>",),
                                    json_schema={"type": "object"}, context_size=8192,
                                    max_tokens=64, temperature=0.1)
        chunks = await collect(Ollama(server.url, keep_alive="10m"), request)
        body = server.requests[-1].json()
    assert "".join(c.text for c in chunks) == "Hello"
    final = chunks[-1]
    assert final.finish_reason == "stop" and final.usage.completion_tokens == 2
    assert body["format"] == {"type": "object"} and body["keep_alive"] == "10m"
    assert body["options"] == {"temperature": 0.1, "num_predict": 64, "stop": ["<END>"],
                               "num_ctx": 8192}
    assert body["messages"][0] == {"role": "system", "content": "s"}
    assert not final.warnings


async def test_a_silently_truncated_prompt_is_flagged() -> None:
    with FakeOllama() as server:
        request = CompletionRequest(prompt="word " * 8000, model=MODEL, context_size=2048)
        chunks = await collect(Ollama(server.url), request)
    assert chunks[-1].usage.prompt_tokens == 2048
    assert "cut the prompt to 2048 tokens" in chunks[-1].warnings[0]


async def test_an_error_line_mid_stream_is_raised() -> None:
    with FakeOllama(fail_after=1) as server, \
            pytest.raises(ProviderError, match="failed mid-stream: an error was encountered"):
        await collect(Ollama(server.url), CompletionRequest(prompt="p", model=MODEL))


async def test_busy_is_retried() -> None:
    with FakeOllama(busy=2) as server:
        chunks = await collect(Ollama(server.url), CompletionRequest(prompt="p", model=MODEL))
    assert chunks[-1].finish_reason == "stop"
    assert len([r for r in server.requests if r.path == "/api/chat"]) == 3


async def test_an_unknown_model_says_to_pull_it() -> None:
    with FakeOllama() as server, pytest.raises(ProviderError, match="ollama pull llama9"):
        await collect(Ollama(server.url), CompletionRequest(prompt="p", model="llama9"))


async def test_no_model_and_no_server_are_explained() -> None:
    with pytest.raises(ProviderError, match="no Ollama model chosen"):
        await collect(Ollama("http://127.0.0.1:9"), CompletionRequest(prompt="p"))
    with pytest.raises(ProviderError, match="ollama serve"):
        await collect(Ollama("http://127.0.0.1:9", retries=0),
                      CompletionRequest(prompt="p", model=MODEL))


async def test_models_capabilities_preload_and_unload() -> None:
    with FakeOllama() as server:
        provider = Ollama(server.url)
        assert [(m.name, m.loaded) for m in await provider.list_models()] == [
            (MODEL, False), ("gemma3:270m", False)]
        await provider.load_model("gemma3:270m")
        assert provider.model == "gemma3:270m"
        assert [m.name for m in await provider.list_models() if m.loaded] == ["gemma3:270m"]
        assert await provider.capabilities_for(MODEL) == ("completion", "tools")
        await provider.unload_model("gemma3:270m")
        assert not [m for m in await provider.list_models() if m.loaded]
        await provider.aclose()
        preload = [r.json() for r in server.requests if r.path == "/api/generate"]
    assert preload[0] == {"model": "gemma3:270m", "keep_alive": "5m"}
    assert preload[1] == {"model": "gemma3:270m", "keep_alive": 0}


async def test_cancelling_closes_the_connection() -> None:
    with FakeOllama(pieces=("tok ",) * 200, delay=0.02) as server:
        provider = Ollama(server.url, model=MODEL)
        got = []
        with anyio.move_on_after(0.3):
            async with aclosing(provider.complete(CompletionRequest(prompt="x"))) as stream:
                async for chunk in stream:
                    got.append(chunk)
        await provider.aclose()
        assert got and await anyio.to_thread.run_sync(server.wait_for_disconnect)


def test_ollama_host_without_a_scheme() -> None:
    assert Ollama.from_environment({"OLLAMA_HOST": "10.0.0.5:11434"}).base_url == \
        "http://10.0.0.5:11434"
    assert Ollama.from_environment({}).base_url == "http://127.0.0.1:11434"


class TestConformance(ProviderConformance):
    @pytest.fixture
    def provider(self) -> Any:
        with FakeOllama() as server:
            yield Ollama(server.url, model=MODEL)
