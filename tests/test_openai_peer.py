"""The shared OpenAI-compatible client against a real peer: llama-cpp-python's own
server (`python -m llama_cpp.server`) serving the shipped Gemma model. Base models
have no chat template, so the completions route is the one that works here."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import aclosing
from typing import Any

import pytest

pytest.importorskip("llama_cpp.server.app")
llamacpp = pytest.importorskip("adjutant_llamacpp")

from adjutant.providers import OpenAICompatible  # noqa: E402
from adjutant_hookspecs import CompletionRequest, ProviderError  # noqa: E402


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    port = free_port()
    model = str(llamacpp.default_model_path())
    process = subprocess.Popen(
        [sys.executable, "-m", "llama_cpp.server", "--model", model, "--host", "127.0.0.1",
         "--port", str(port), "--n_ctx", "1024", "--interrupt_requests", "false"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                if process.poll() is not None:
                    pytest.fail("llama_cpp.server exited at start")
                time.sleep(0.2)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=10)


@pytest.mark.anyio
async def test_streams_from_the_real_server(server: str) -> None:
    provider = OpenAICompatible(server, chat=False)
    request = CompletionRequest(prompt="The capital of France is", max_tokens=8,
                                temperature=0.0)
    try:
        async with aclosing(provider.complete(request)) as stream:
            chunks = [c async for c in stream]
        models = await provider.list_models()
    finally:
        await provider.aclose()
    assert "".join(c.text for c in chunks).strip()
    assert chunks[-1].finish_reason in ("stop", "length")
    assert len(models) == 1


@pytest.mark.anyio
async def test_cancel_mid_stream_then_the_server_serves_again(server: str) -> None:
    import anyio

    provider = OpenAICompatible(server, chat=False)
    got: list[Any] = []
    try:
        with anyio.CancelScope() as scope:  # cancelled mid-stream, after a few tokens
            request = CompletionRequest(prompt="Count: 1, 2, 3,", max_tokens=300)
            async with aclosing(provider.complete(request)) as stream:
                async for chunk in stream:
                    got.append(chunk)
                    if len(got) == 3:
                        scope.cancel()
        again = CompletionRequest(prompt="Hello", max_tokens=4, temperature=0.0)
        async with aclosing(provider.complete(again)) as stream:
            after = [c async for c in stream]
    finally:
        await provider.aclose()
    assert got and got[-1].finish_reason is None
    assert after[-1].finish_reason is not None


@pytest.mark.anyio
async def test_an_unknown_route_is_a_clear_error(server: str) -> None:
    provider = OpenAICompatible(server, chat=False)
    provider.prefix = "/v9"
    try:
        with pytest.raises(ProviderError, match="HTTP 404"):
            await drain(provider, CompletionRequest(prompt="x"))
    finally:
        await provider.aclose()


async def drain(provider: OpenAICompatible, request: CompletionRequest) -> None:
    async with aclosing(provider.complete(request)) as stream:
        async for _ in stream:
            pass
