"""The fit check before a GGUF is loaded: the real shipped model's size and KV cache
(from its own metadata) against the memory said to be available."""

from __future__ import annotations

from contextlib import aclosing

import pytest

from adjutant_hookspecs import CompletionRequest, ProviderError
from adjutant_llamacpp import LlamaCpp
from adjutant_llamacpp._fit import judge, kv_cache_bytes
from adjutant_llamacpp._models import DEFAULT_MODEL, preset_path

pytestmark = pytest.mark.anyio
QWEN = {"general.architecture": "qwen2", "qwen2.block_count": "24",
        "qwen2.attention.head_count": "14", "qwen2.attention.head_count_kv": "2",
        "qwen2.embedding_length": "896"}


def test_the_kv_cache_comes_from_the_metadata() -> None:
    # 24 layers x 2 KV heads x (64 + 64) values x 2 bytes, per token
    assert kv_cache_bytes(QWEN, 4096) == 4096 * 24 * 2 * 128 * 2
    assert kv_cache_bytes({"general.architecture": "x"}, 4096) == 0  # unknown: 0


def test_green_yellow_red() -> None:
    mb = 2**20
    assert judge(500 * mb, 50 * mb, 4000 * mb).verdict == "green"
    assert judge(500 * mb, 50 * mb, 700 * mb).verdict == "yellow"
    assert judge(500 * mb, 50 * mb, 400 * mb).verdict == "red"


async def test_a_model_that_does_not_fit_is_refused_before_it_loads() -> None:
    provider = LlamaCpp(context_size=32768, memory=lambda: 300 * 2**20)
    request = CompletionRequest(prompt="hi", max_tokens=1)

    async def ask() -> None:
        async with aclosing(provider.complete(request)) as stream:
            async for _ in stream:
                pass

    with pytest.raises(ProviderError) as refused:
        await ask()
    assert "does not fit" in str(refused.value) and "300 MB is available" in str(refused.value)
    assert "smaller model" in (refused.value.hint or "")
    assert not provider._models  # nothing was loaded


async def test_a_tight_fit_loads_and_says_it_may_be_slow() -> None:
    size = preset_path(DEFAULT_MODEL).stat().st_size
    provider = LlamaCpp(context_size=512, memory=lambda: int(size * 1.3))
    request = CompletionRequest(prompt="The capital of France is", max_tokens=2)
    try:
        async with aclosing(provider.complete(request)) as stream:
            chunks = [c async for c in stream]
    finally:
        await provider.aclose()
    warned = [w for c in chunks for w in c.warnings]
    assert len(warned) == 1 and "may be slow" in warned[0]
    assert chunks[-1].finish_reason in ("stop", "length")


def test_the_fit_metadata_is_read_once_per_model_file(tmp_path, monkeypatch) -> None:
    """The vocabulary is loaded for the metadata only the first time; a damaged kept
    copy is read from the model again."""
    import adjutant_llamacpp._provider as provider_module

    monkeypatch.setattr(provider_module, "cache_dir", lambda: tmp_path)
    path = str(preset_path(DEFAULT_MODEL))
    loads: list[bool] = []

    def llama(**kwargs: object) -> object:
        from llama_cpp import Llama

        loads.append(bool(kwargs.get("vocab_only")))
        return Llama(**kwargs)

    first = provider_module._fit_metadata(path, llama)
    assert kv_cache_bytes(first, 4096) == kv_cache_bytes(QWEN, 4096)
    assert not any(k.startswith("tokenizer.") for k in first)  # only what the check needs
    assert provider_module._fit_metadata(path, llama) == first and loads == [True]
    kept = next((tmp_path / "fit").glob("*.json"))
    kept.write_text("{not json")
    assert provider_module._fit_metadata(path, llama) == first and loads == [True, True]


async def test_prepare_loads_without_making_the_model_the_default() -> None:
    """`prepare` (called by the operator while it gathers a request's context) keeps
    the model loaded for the request, and changes nothing else; a model that does not
    fit is refused there too, before anything loads."""
    provider = LlamaCpp(model_path=str(preset_path(DEFAULT_MODEL)))
    try:
        await provider.prepare(DEFAULT_MODEL)
        assert len(provider._models) == 1
        assert provider.model_path == str(preset_path(DEFAULT_MODEL))  # unchanged
    finally:
        await provider.aclose()
    small = LlamaCpp(context_size=32768, memory=lambda: 300 * 2**20)
    with pytest.raises(ProviderError):
        await small.prepare(None)
    assert not small._models
