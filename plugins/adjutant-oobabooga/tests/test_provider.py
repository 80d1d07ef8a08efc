"""The text-generation-webui provider against its documented wire format."""

from __future__ import annotations

from contextlib import aclosing
from typing import Any

import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st

from adjutant.testing.conformance import ProviderConformance
from adjutant.testing.fakeserver import FakeResponse
from adjutant_hookspecs import CompletionChunk, CompletionRequest, ProviderError
from adjutant_oobabooga import TextGenerationWebUI

from .fake_textgen import FakeTextGen, last_body

pytestmark = pytest.mark.anyio
NO_ENV: dict[str, str] = {}


def textgen(url: str, **options: Any) -> TextGenerationWebUI:
    return TextGenerationWebUI(url, env=NO_ENV, **options)


async def collect(provider: TextGenerationWebUI,
                  request: CompletionRequest) -> list[CompletionChunk]:
    try:
        async with aclosing(provider.complete(request)) as stream:
            return [c async for c in stream]
    finally:
        await provider.aclose()


def completions(server: FakeTextGen) -> list[Any]:
    return [r for r in server.requests if r.path == "/v1/completions"]


async def test_streams_text_then_finish_with_usage() -> None:
    with FakeTextGen(pieces=("Hel", "lo", "!")) as server:
        chunks = await collect(textgen(server.url), CompletionRequest(prompt="hi"))
    assert [c.text for c in chunks] == ["Hel", "lo", "!", ""]
    assert chunks[-1].finish_reason == "stop" and chunks[-1].usage is not None
    assert (chunks[-1].usage.prompt_tokens, chunks[-1].usage.completion_tokens) == (5, 3)


async def test_length_finish_is_reported() -> None:
    with FakeTextGen(finish="length") as server:
        chunks = await collect(textgen(server.url), CompletionRequest(prompt="hi"))
    assert chunks[-1].finish_reason == "length"


async def test_grammar_and_stop_go_in_the_fields_the_server_reads() -> None:
    with FakeTextGen() as server:
        request = CompletionRequest(prompt="p", system="s", grammar='root ::= "x"',
                                    stop=("<END>", "\n\n"), model="ignored", max_tokens=32,
                                    temperature=0.3, json_schema={"type": "object"})
        await collect(textgen(server.url), request)
        body = last_body(server, "/v1/completions")
    assert body == {"prompt": "s\n\np", "stream": True, "max_tokens": 32, "temperature": 0.3,
                    "stream_options": {"include_usage": True}, "stop": ["<END>", "\n\n"],
                    "grammar_string": 'root ::= "x"'}


@given(st.lists(st.text(min_size=1, max_size=5), max_size=3), st.none() | st.text(max_size=30),
       st.booleans())
def test_body_never_uses_dropped_or_unsupported_fields(
        stop: list[str], grammar: str | None, chat: bool) -> None:
    provider = textgen("http://127.0.0.1:5000", chat=chat)
    body = provider.body(CompletionRequest(prompt="p", stop=tuple(stop), grammar=grammar,
                                           json_schema={"type": "object"}, model="m"))
    assert not {"stopping_strings", "response_format", "model"} & set(body)
    assert body.get("stop", []) == stop
    assert body.get("grammar_string") == (grammar or None)


async def test_an_error_inside_the_200_stream_is_raised() -> None:
    with FakeTextGen(fail_after=1) as server:
        with pytest.raises(ProviderError, match="failed mid-stream: CUDA out of memory"):
            await collect(textgen(server.url), CompletionRequest(prompt="x"))
        assert server.stopped.is_set(), "an abandoned generation is stopped on the server"


async def test_429_with_retry_after_then_503_then_success() -> None:
    limited = FakeResponse.json(429, {"error": {"message": "busy", "type": "server_error"}},
                                **{"Retry-After": "0.2"})
    loading = FakeResponse.json(503, {"detail": "Service Unavailable"})
    with FakeTextGen(refusals=[limited, loading]) as server:
        started = anyio.current_time()
        chunks = await collect(textgen(server.url), CompletionRequest(prompt="x"))
        assert len(completions(server)) == 3
    assert anyio.current_time() - started >= 0.2
    assert "".join(c.text for c in chunks) == "Hello"


async def test_cancelling_stops_generation_on_the_server() -> None:
    with FakeTextGen(pieces=("tok ",) * 200, delay=0.02) as server:
        provider = textgen(server.url)
        got = []
        with anyio.move_on_after(0.3):
            async with aclosing(provider.complete(CompletionRequest(prompt="x"))) as stream:
                async for chunk in stream:
                    got.append(chunk)
        await provider.aclose()
        assert got and await anyio.to_thread.run_sync(server.wait_for_disconnect)
        assert await anyio.to_thread.run_sync(server.stopped.wait, 5)
        assert [r.method for r in server.requests
                if r.path == "/v1/internal/stop-generation"] == ["POST"]


async def test_a_finished_stream_does_not_call_stop_generation() -> None:
    with FakeTextGen() as server:
        await collect(textgen(server.url), CompletionRequest(prompt="x"))
        assert not server.stopped.is_set() and server.disconnects == 0


async def test_models_listed_with_the_loaded_one_and_loaded_on_request() -> None:
    with FakeTextGen(admin_key="adm") as server:
        provider = textgen(server.url, api_key="adm")
        try:
            models = await provider.list_models()
            await provider.load_model("qwen2.5-0.5b")
            after = await provider.list_models()
            with pytest.raises(ProviderError, match=r"failed to load the model 'nope' "
                                                    r"\(Failed to load the model\.\)") as e:
                await provider.load_model("nope")
        finally:
            await provider.aclose()
        loads = [r for r in server.requests if r.path.startswith("/v1/internal/model/load")]
    assert [(m.name, m.loaded) for m in models] == [("gemma-3-270m", True),
                                                    ("qwen2.5-0.5b", False)]
    assert [m.name for m in after if m.loaded] == ["qwen2.5-0.5b"]
    assert e.value.status == 500 and not e.value.retryable
    assert [(r.path, r.json()) for r in loads] == [
        ("/v1/internal/model/load", {"model_name": "qwen2.5-0.5b"}),
        ("/v1/internal/model/load", {"model_name": "nope"})]


async def test_without_the_admin_key_the_public_model_list_is_used() -> None:
    with FakeTextGen(admin_key="adm") as server:
        provider = textgen(server.url)
        try:
            models = await provider.list_models()
            with pytest.raises(ProviderError, match="ADJUTANT_OOBABOOGA_API_KEY") as caught:
                await provider.load_model("qwen2.5-0.5b")
        finally:
            await provider.aclose()
    assert [(m.name, m.loaded) for m in models] == [("gemma-3-270m", None),
                                                    ("qwen2.5-0.5b", None)]
    assert caught.value.status == 401


async def test_a_wrong_api_key_says_which_variable_to_set() -> None:
    with FakeTextGen(api_key="secret") as server, \
            pytest.raises(ProviderError, match="ADJUTANT_OOBABOOGA_API_KEY") as caught:
        await collect(textgen(server.url, api_key="wrong"), CompletionRequest(prompt="x"))
    assert caught.value.status == 401 and "Unauthorized" in caught.value.message


async def test_the_api_key_is_sent_as_a_bearer_token() -> None:
    with FakeTextGen(api_key="secret") as server:
        provider = TextGenerationWebUI(server.url, env={"ADJUTANT_OOBABOOGA_API_KEY": "secret"})
        chunks = await collect(provider, CompletionRequest(prompt="x"))
        assert completions(server)[-1].headers["authorization"] == "Bearer secret"
    assert chunks[-1].finish_reason == "stop"


async def test_invalid_host_header_says_how_to_fix_it() -> None:
    with FakeTextGen(hosts=("localhost",)) as server, \
            pytest.raises(ProviderError, match="--listen") as caught:
        await collect(textgen(server.url), CompletionRequest(prompt="x"))
    assert caught.value.status == 400 and "Invalid host header" in caught.value.message


async def test_not_running_says_how_to_start_it() -> None:
    provider = textgen("http://127.0.0.1:9", retries=0)
    with pytest.raises(ProviderError, match=r"not reachable.*--api \(port 5000\)") as caught:
        await collect(provider, CompletionRequest(prompt="x"))
    assert caught.value.retryable


def test_configuration_from_the_environment() -> None:
    provider = TextGenerationWebUI(env={"ADJUTANT_OOBABOOGA_URL": "http://gpu-box:5000/",
                                        "ADJUTANT_OOBABOOGA_API_KEY": "k"})
    assert (provider.base_url, provider.api_key, provider.chat) == ("http://gpu-box:5000", "k",
                                                                    False)
    default = TextGenerationWebUI(env={})
    assert (default.base_url, default.api_key) == ("http://127.0.0.1:5000", None)
    assert TextGenerationWebUI("http://h:1", api_key="x",
                               env={"ADJUTANT_OOBABOOGA_API_KEY": "k"}).api_key == "x"
    caps = default.capabilities
    assert (caps.grammar, caps.json_schema, caps.list_models, caps.load_models) == (
        True, False, True, True)


class TestConformance(ProviderConformance):
    @pytest.fixture
    def provider(self) -> Any:
        with FakeTextGen() as server:
            yield textgen(server.url)
