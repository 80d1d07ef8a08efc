"""The text-generation-webui provider against its documented wire format."""

from __future__ import annotations

from contextlib import aclosing
from typing import Any

import anyio
import pytest

from adjutant.testing.conformance import ProviderConformance
from adjutant.testing.fakeserver import FakeResponse, FakeServer
from adjutant_hookspecs import CompletionRequest, ProviderError
from adjutant_oobabooga import TextGenerationWebUI

from .fake_textgen import FakeTextGen, last_body

pytestmark = pytest.mark.anyio


async def collect(provider: TextGenerationWebUI, request: CompletionRequest) -> list[Any]:
    try:
        async with aclosing(provider.complete(request)) as stream:
            return [c async for c in stream]
    finally:
        await provider.aclose()


async def test_grammar_and_stop_go_in_the_fields_the_server_reads() -> None:
    with FakeTextGen() as server:
        request = CompletionRequest(prompt="p", system="s", grammar='root ::= "x"',
                                    stop=("<END>",), model="ignored", max_tokens=32)
        chunks = await collect(TextGenerationWebUI(server.url), request)
        body = last_body(server, "/v1/completions")
    assert "".join(c.text for c in chunks) == "Hello"
    assert chunks[-1].finish_reason == "stop" and chunks[-1].usage.completion_tokens == 2
    assert body["grammar_string"] == 'root ::= "x"' and body["stop"] == ["<END>"]
    assert "stopping_strings" not in body and "response_format" not in body
    assert "model" not in body and body["prompt"] == "s\n\np" and body["max_tokens"] == 32


async def test_cancelling_stops_generation_on_the_server() -> None:
    with FakeTextGen(pieces=("tok ",) * 200, delay=0.02) as server:
        provider = TextGenerationWebUI(server.url)
        got = []
        with anyio.move_on_after(0.3):
            async with aclosing(provider.complete(CompletionRequest(prompt="x"))) as stream:
                async for chunk in stream:
                    got.append(chunk)
        await provider.aclose()
        assert got and await anyio.to_thread.run_sync(server.stopped.wait, 5)
        assert await anyio.to_thread.run_sync(server.wait_for_disconnect)


async def test_models_listed_with_the_loaded_one_and_loaded_on_request() -> None:
    with FakeTextGen(admin_key="adm") as server:
        provider = TextGenerationWebUI(server.url, api_key="adm")
        models = await provider.list_models()
        await provider.load_model("qwen2.5-0.5b")
        after = await provider.list_models()
        with pytest.raises(ProviderError, match="failed to load the model 'nope'"):
            await provider.load_model("nope")
        await provider.aclose()
    assert [(m.name, m.loaded) for m in models] == [("gemma-3-270m", True),
                                                    ("qwen2.5-0.5b", False)]
    assert [m.name for m in after if m.loaded] == ["qwen2.5-0.5b"]


async def test_without_the_admin_key_the_public_model_list_is_used() -> None:
    with FakeTextGen(admin_key="adm") as server:
        provider = TextGenerationWebUI(server.url)
        models = await provider.list_models()
        with pytest.raises(ProviderError, match="ADJUTANT_OOBABOOGA_API_KEY"):
            await provider.load_model("qwen2.5-0.5b")
        await provider.aclose()
    assert [m.name for m in models] == ["gemma-3-270m"]


async def test_invalid_host_header_says_how_to_fix_it() -> None:
    def refuse(request: Any) -> FakeResponse:
        return FakeResponse.json(400, {"detail": "Invalid host header"})

    with FakeServer({("POST", "/v1/completions"): refuse}) as server, \
            pytest.raises(ProviderError, match="--listen"):
        await collect(TextGenerationWebUI(server.url), CompletionRequest(prompt="x"))


async def test_not_running_says_how_to_start_it() -> None:
    provider = TextGenerationWebUI("http://127.0.0.1:9", retries=0)
    with pytest.raises(ProviderError, match="--api"):
        await collect(provider, CompletionRequest(prompt="x"))


def test_configuration_from_the_environment() -> None:
    provider = TextGenerationWebUI.from_environment(
        {"ADJUTANT_OOBABOOGA_URL": "http://gpu-box:5000/", "ADJUTANT_OOBABOOGA_API_KEY": "k"})
    assert (provider.base_url, provider.api_key) == ("http://gpu-box:5000", "k")
    assert provider.capabilities.grammar and provider.capabilities.load_models


class TestConformance(ProviderConformance):
    @pytest.fixture
    def provider(self) -> Any:
        with FakeTextGen() as server:
            yield TextGenerationWebUI(server.url)
