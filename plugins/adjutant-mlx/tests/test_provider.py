"""The mlx-lm provider against its documented wire format and quirks."""

from __future__ import annotations

from contextlib import aclosing
from typing import Any

import httpx
import pytest

from adjutant.testing.conformance import ProviderConformance
from adjutant_hookspecs import CompletionRequest, ProviderError
from adjutant_mlx import MlxLm

from .fake_mlx import MODELS, FakeMlx

pytestmark = pytest.mark.anyio


async def collect(provider: MlxLm, request: CompletionRequest) -> list[Any]:
    try:
        async with aclosing(provider.complete(request)) as stream:
            return [c async for c in stream]
    finally:
        await provider.aclose()


async def test_chat_stream_with_keepalives_and_no_structured_output_sent() -> None:
    with FakeMlx() as server:
        request = CompletionRequest(prompt="p", json_schema={"type": "object"},
                                    grammar="root ::= x", temperature=0.2)
        chunks = await collect(MlxLm(server.url), request)
        body = server.requests[-1].json()
    assert "".join(c.text for c in chunks) == "Hello" and chunks[-1].finish_reason == "stop"
    assert "response_format" not in body and "grammar" not in body
    assert body["temperature"] == 0.2 and body["messages"][-1]["content"] == "p"
    assert not chunks[-1].warnings


async def test_empty_output_is_flagged() -> None:
    with FakeMlx(pieces=()) as server:
        chunks = await collect(MlxLm(server.url), CompletionRequest(prompt="p"))
    assert chunks[-1].finish_reason == "stop" and "mlx-lm returned no text" in \
        chunks[-1].warnings[0]


async def test_requests_carry_a_content_length() -> None:
    """The server answers 411 to a chunked body; ours always has a length."""
    with FakeMlx() as server:
        await collect(MlxLm(server.url), CompletionRequest(prompt="p"))
        assert server.requests[-1].headers["content-length"]

        async def chunked() -> Any:
            yield b'{"messages": []}'
        async with httpx.AsyncClient() as client:
            response = await client.post(f"{server.url}/v1/chat/completions",
                                         content=chunked())
        assert response.status_code == 411  # the fake is faithful to the quirk


async def test_model_switch_per_request() -> None:
    with FakeMlx() as server:
        provider = MlxLm(server.url)
        await provider.load_model(MODELS[1])
        with pytest.raises(ProviderError, match="does not know the model"):
            await provider.load_model("nope/nope")
        await collect(provider, CompletionRequest(prompt="p"))
        assert server.requests[-1].json()["model"] == MODELS[1]


async def test_an_unknown_model_error_string_is_shown() -> None:
    with FakeMlx() as server, pytest.raises(ProviderError, match="Failed to load model x"):
        await collect(MlxLm(server.url), CompletionRequest(prompt="p", model="x"))


async def test_not_running_says_how_to_start_it() -> None:
    with pytest.raises(ProviderError, match=r"mlx_lm\.server"):
        await collect(MlxLm("http://127.0.0.1:9", retries=0), CompletionRequest(prompt="p"))


class TestConformance(ProviderConformance):
    @pytest.fixture
    def provider(self) -> Any:
        with FakeMlx() as server:
            yield MlxLm(server.url)
