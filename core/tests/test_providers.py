"""The shared OpenAI-compatible client against a real loopback server (`FakeServer`)
speaking the documented quirks of each server's wire format."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from adjutant.providers import OpenAICompatible, ndjson_lines, sse_data
from adjutant.testing.conformance import ProviderConformance
from adjutant.testing.fakeserver import FakeRequest, FakeResponse, FakeServer, sse, sse_json
from adjutant_hookspecs import CompletionChunk, CompletionRequest, ProviderError

pytestmark = pytest.mark.anyio

ROUTE = ("POST", "/v1/completions")


def text_events(*pieces: str, sep: str = "\n", finish: str = "stop") -> list[bytes | float]:
    events: list[bytes | float] = [b": ping - 2026-11-22 10:00:00\n\n"]
    events += [sse_json({"choices": [{"text": p, "finish_reason": None}]}, sep) for p in pieces]
    events.append(sse_json({"choices": [{"text": "", "finish_reason": finish}]}, sep))
    events.append(sse_json({"choices": [], "usage": {"prompt_tokens": 7,
                                                     "completion_tokens": len(pieces)}}, sep))
    events.append(sse("[DONE]", sep))
    return events


async def collect(provider: Any, prompt: str = "hi") -> list[CompletionChunk]:
    try:
        return [c async for c in provider.complete(CompletionRequest(prompt=prompt))]
    finally:
        await provider.aclose()


def stream(body: list[bytes | float]) -> FakeResponse:
    return FakeResponse(200, body, content_type="text/event-stream")


@pytest.mark.parametrize("sep", ["\n", "\r\n"])
async def test_streams_text_then_finish_with_usage(sep: str) -> None:
    with FakeServer({ROUTE: lambda r: stream(text_events("Hel", "lo", sep=sep))}) as server:
        chunks = await collect(OpenAICompatible(server.url, chat=False))
        body = server.requests[0].json()
    assert "".join(c.text for c in chunks) == "Hello"
    assert chunks[-1].finish_reason == "stop"
    assert chunks[-1].usage is not None and chunks[-1].usage.prompt_tokens == 7
    assert body["prompt"] == "hi" and body["stream"] is True


async def test_done_without_a_blank_line_is_honoured() -> None:
    """llama.cpp's `[DONE]` can arrive without its blank line: the buffer is flushed."""
    events = [*text_events("ok")[:-1], b"data: [DONE]"]
    with FakeServer({ROUTE: lambda r: stream(events)}) as server:
        chunks = await collect(OpenAICompatible(server.url, chat=False))
    assert [c.text for c in chunks] == ["ok", ""] and chunks[-1].finish_reason == "stop"


@pytest.mark.parametrize("error", [
    {"error": {"code": "server_error", "message": "upstream died"}},   # OpenRouter
    {"error": {"message": "context overflow", "type": "server_error"}},  # llama.cpp
    {"choices": [{"delta": {}, "finish_reason": "error"}], "error": {"code": 502,
                                                                    "message": "down"}},
])
async def test_an_error_inside_a_200_stream_is_raised(error: dict[str, Any]) -> None:
    events = [*text_events("partial")[:2], sse_json(error)]
    with FakeServer({ROUTE: lambda r: stream(events)}) as server:
        provider = OpenAICompatible(server.url, chat=False, retries=0)
        with pytest.raises(ProviderError, match="failed mid-stream"):
            await collect(provider)


async def test_old_llamacpp_error_lines_are_errors() -> None:
    events = [b'error: {"code": 500, "message": "boom", "type": "server_error"}\n\n']
    with FakeServer({ROUTE: lambda r: stream(events)}) as server, \
            pytest.raises(ProviderError, match="boom"):
        await collect(OpenAICompatible(server.url, chat=False, retries=0))


async def test_a_stream_cut_without_finish_is_an_error() -> None:
    events = text_events("partial")[:2]
    with FakeServer({ROUTE: lambda r: stream(events)}) as server, \
            pytest.raises(ProviderError, match="without finishing"):
        await collect(OpenAICompatible(server.url, chat=False))


async def test_429_with_retry_after_then_success() -> None:
    calls: list[int] = []

    def handler(request: FakeRequest) -> FakeResponse:
        calls.append(1)
        if len(calls) == 1:
            return FakeResponse.json(429, {"error": {"code": 429, "message": "slow down"}},
                                     **{"Retry-After": "0.05"})
        if len(calls) == 2:
            return FakeResponse.json(503, {"error": {"message": "Loading model",
                                                     "type": "unavailable_error"}})
        return stream(text_events("fine"))

    with FakeServer({ROUTE: handler}) as server:
        chunks = await collect(OpenAICompatible(server.url, chat=False))
    assert len(calls) == 3 and chunks[0].text == "fine"


async def test_retry_after_beyond_the_limit_is_reported_not_waited() -> None:
    def handler(request: FakeRequest) -> FakeResponse:
        return FakeResponse.json(429, {"error": {"code": 429, "message": "rate"}},
                                 **{"Retry-After": "3600"})

    with FakeServer({ROUTE: handler}) as server:
        with pytest.raises(ProviderError) as caught:
            await collect(OpenAICompatible(server.url, chat=False))
        assert len(server.requests) == 1
    assert caught.value.status == 429 and "wait 3600 s" in str(caught.value)


@pytest.mark.parametrize(("status", "hint"), [(401, "API key"), (404, "model name"),
                                              (500, "running")])
async def test_http_errors_say_what_to_do(status: int, hint: str) -> None:
    with FakeServer({ROUTE: lambda r: FakeResponse.json(status, {"detail": "nope"})}) as server, \
            pytest.raises(ProviderError, match=hint) as caught:
        await collect(OpenAICompatible(server.url, chat=False))
    assert caught.value.status == status and "nope" in caught.value.message


async def test_a_dead_backend_says_how_to_start_it() -> None:
    provider = OpenAICompatible("http://127.0.0.1:9", chat=False, retries=1)
    with pytest.raises(ProviderError, match="not reachable") as caught:
        await collect(provider)
    assert caught.value.retryable


async def test_cancelling_mid_stream_closes_the_connection() -> None:
    import anyio

    events = text_events("tok")
    slow: list[bytes | float] = [events[0], *[0.05, events[1]] * 200]

    with FakeServer({ROUTE: lambda r: stream(slow)}) as server:
        provider = OpenAICompatible(server.url, chat=False)
        got = []
        with anyio.move_on_after(0.3):
            async for chunk in provider.complete(CompletionRequest(prompt="x")):
                got.append(chunk)
        assert got, "some tokens arrived before the cancel"
        assert await anyio.to_thread.run_sync(server.wait_for_disconnect)
        await provider.aclose()


async def test_chat_body_and_json_schema_when_claimed() -> None:
    from adjutant_hookspecs import ProviderCapabilities

    class Claims(OpenAICompatible):
        capabilities = ProviderCapabilities(json_schema=True)

    route = ("POST", "/v1/chat/completions")
    events = [sse_json({"choices": [{"delta": {"content": "{}"}, "finish_reason": "stop"}]}),
              sse("[DONE]")]
    with FakeServer({route: lambda r: stream(events)}) as server:
        request = CompletionRequest(prompt="p", system="s", stop=("<END>",),
                                    json_schema={"type": "object"}, model="m")
        provider = Claims(server.url)
        chunks = [c async for c in provider.complete(request)]
        await provider.aclose()
        body = server.requests[0].json()
    assert chunks[0].text == "{}"
    assert body["messages"] == [{"role": "system", "content": "s"},
                                {"role": "user", "content": "p"}]
    assert body["stop"] == ["<END>"] and body["model"] == "m"
    assert body["response_format"]["json_schema"]["schema"] == {"type": "object"}


async def test_list_models() -> None:
    models = {"object": "list", "data": [{"id": "a", "context_length": 8192}, {"id": "b"}]}
    with FakeServer({("GET", "/v1/models"): lambda r: FakeResponse.json(200, models)}) as s:
        provider = OpenAICompatible(s.url)
        found = await provider.list_models()
        await provider.aclose()
    assert [(m.name, m.context_size) for m in found] == [("a", 8192), ("b", None)]


class TestConformance(ProviderConformance):
    @pytest.fixture
    def provider(self) -> Any:
        with FakeServer({ROUTE: lambda r: stream(text_events("a", " b"))}) as server:
            yield OpenAICompatible(server.url, chat=False)


# -- framing, property-tested ------------------------------------------------------------


async def _frames(parts: list[bytes], parser: Any) -> list[str]:
    async def source() -> Any:
        for part in parts:
            yield part
    return [d async for d in parser(source())]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(alphabet=st.characters(blacklist_characters="\r\n",
                                               blacklist_categories=("Cs",)),
                        min_size=1, max_size=20), max_size=8),
       st.sampled_from(["\n", "\r\n"]), st.integers(1, 7))
async def test_sse_framing_survives_any_split(payloads: list[str], sep: str, size: int) -> None:
    payloads = [p for p in payloads if p.strip() != "[DONE]"]
    wire = b"".join(b": comment" + sep.encode() + sse(json.dumps(p), sep) for p in payloads)
    wire += b"data: [DONE]"
    parts = [wire[i:i + size] for i in range(0, len(wire), size)]
    assert [json.loads(d) for d in await _frames(parts, sse_data)] == payloads


async def test_ndjson_lines_with_and_without_final_newline() -> None:
    parts = [b'{"a":1}\n{"b"', b':2}\n\n{"c":3}']
    assert await _frames(parts, ndjson_lines) == ['{"a":1}', '{"b":2}', '{"c":3}']
