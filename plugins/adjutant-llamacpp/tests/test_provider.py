"""The embedded provider with the real shipped model (Gemma 3 270M)."""

from __future__ import annotations

import json
from contextlib import aclosing
from typing import Any

import pytest

from adjutant.operator.planner import Planner
from adjutant.testing.conformance import ProviderConformance
from adjutant_hookspecs import (
    CompletionRequest,
    ProviderError,
    Reply,
    ToolDeclaration,
    ToolSafety,
    decode,
)
from adjutant_llamacpp import LlamaCpp

pytestmark = pytest.mark.anyio

#: One provider for the module: loading the model once keeps the suite fast.
PROVIDER = LlamaCpp(context_size=2048)
READ = ToolDeclaration(
    name="fs.read", version="1", description="Read a text file.",
    args_schema={"type": "object", "properties": {"path": {"type": "string"}},
                 "required": ["path"], "additionalProperties": False,
                 "x-adjutant-requests": ["show me notes.txt"]},
    safety=ToolSafety(), examples=({"path": "notes.txt"},))


@pytest.fixture(autouse=True, scope="module")
def _free_the_model() -> Any:
    """Close the module's model before interpreter exit (llama.cpp's finaliser fails
    if it runs after its library was unloaded)."""
    yield
    import anyio

    anyio.run(PROVIDER.aclose)


async def test_streams_tokens_and_finishes() -> None:
    request = CompletionRequest(prompt="The capital of France is", max_tokens=8,
                                temperature=0.0)
    async with aclosing(PROVIDER.complete(request)) as stream:
        chunks = [c async for c in stream]
    assert "".join(c.text for c in chunks).strip()
    assert chunks[-1].finish_reason in ("stop", "length")
    assert chunks[-1].usage is not None and chunks[-1].usage.completion_tokens


async def test_the_reply_grammar_always_decodes() -> None:
    """With the planner's grammar the base model can only write a valid reply."""
    planner = Planner({"fs.read": READ})
    for request in ("show me notes.txt", "what is in README.md?"):
        prompt = planner.prompt(request, ["fs.read"], system="Answer with JSON.")
        text = ""
        completion = CompletionRequest(prompt=prompt, grammar=planner.grammar(["fs.read"]),
                                       stop=("<END>",), max_tokens=96, temperature=0.0)
        async with aclosing(PROVIDER.complete(completion)) as stream:
            async for chunk in stream:
                text += chunk.text
        reply = decode(text.removesuffix("<END>").encode(), Reply)  # type: ignore[arg-type]
        assert reply is not None


async def test_an_answer_opens_with_a_word_never_a_brace() -> None:
    """A prompt that leads the model to answer "{" (a plan begun inside the answer; a
    request had failed three times over on it) gets an answer opening otherwise."""
    from adjutant.operator.planner import reply_grammar

    prompt = ('Request: open a brace\nAnswer: {"type":"response","text":"{"}\n'
              'Request: open a bracket\nAnswer: {"type":"response","text":"["}\n'
              'Request: open a brace again\nAnswer: ')
    completion = CompletionRequest(prompt=prompt, grammar=reply_grammar({}),
                                   stop=("\n",), max_tokens=24, temperature=0.0)
    text = ""
    async with aclosing(PROVIDER.complete(completion)) as stream:
        async for chunk in stream:
            text += chunk.text
    answer = json.loads(text)["text"]
    assert answer and answer[0] not in "{[ " and answer[0].isprintable(), text


async def test_cancel_mid_stream_then_serve_again() -> None:
    import anyio

    request = CompletionRequest(prompt="Count: one, two, three,", max_tokens=200,
                                temperature=0.0)
    got: list[Any] = []
    with anyio.CancelScope() as scope:  # cancelled mid-stream, after a few tokens
        async with aclosing(PROVIDER.complete(request)) as stream:
            async for chunk in stream:
                got.append(chunk)
                if len(got) == 3:
                    scope.cancel()
    assert got and got[-1].finish_reason is None, "interrupted before the end"
    again = CompletionRequest(prompt="Hello", max_tokens=4, temperature=0.0)
    async with aclosing(PROVIDER.complete(again)) as stream:
        chunks = [c async for c in stream]
    assert chunks[-1].finish_reason is not None


async def test_a_missing_model_file_says_what_to_do(tmp_path: Any) -> None:
    request = CompletionRequest(prompt="x", model=str(tmp_path / "none.gguf"))
    with pytest.raises(ProviderError, match="no GGUF model file"):
        await drain(PROVIDER, request)


async def test_a_missing_default_model_file_says_what_to_do(tmp_path: Any,
                                                          monkeypatch: Any) -> None:
    """ADJUTANT_LLAMACPP_MODEL naming no file: the error says which and what to do
    (it had been a bare FileNotFoundError)."""
    monkeypatch.setenv("ADJUTANT_LLAMACPP_MODEL", str(tmp_path / "gone.gguf"))
    with pytest.raises(ProviderError, match=r"no GGUF model file.*gone\.gguf") as raised:
        await drain(LlamaCpp(), CompletionRequest(prompt="x"))
    assert "ADJUTANT_LLAMACPP_MODEL" in (raised.value.hint or "")


async def test_not_a_gguf_file(tmp_path: Any) -> None:
    bogus = tmp_path / "bogus.gguf"
    bogus.write_bytes(b"not a model")
    provider = LlamaCpp(str(bogus))
    with pytest.raises(ProviderError, match="could not load"):
        await drain(provider, CompletionRequest(prompt="x"))


async def drain(provider: LlamaCpp, request: CompletionRequest) -> None:
    async with aclosing(provider.complete(request)) as stream:
        async for _ in stream:
            pass


class TestConformance(ProviderConformance):
    @pytest.fixture
    def provider(self) -> LlamaCpp:
        return LlamaCpp(context_size=1024)

    @pytest.fixture
    def completion_request(self) -> CompletionRequest:
        return CompletionRequest(prompt="Say hello.", max_tokens=4, temperature=0.0)
