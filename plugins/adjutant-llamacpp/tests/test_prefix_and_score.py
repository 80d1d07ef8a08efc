"""The static prefix kept evaluated (in memory and on disk), chat templates, and the
scoring of continuations, with the real default model (short prompts: cheap)."""

from __future__ import annotations

import json
from contextlib import aclosing
from pathlib import Path
from typing import Any

import pytest

from adjutant_hookspecs import CompletionRequest
from adjutant_llamacpp import DEFAULT_MODEL, PRESETS, LlamaCpp

pytestmark = pytest.mark.anyio

SYSTEM = ("You are a terse assistant. Answer with one word. " * 12).strip()


async def text_of(provider: LlamaCpp, request: CompletionRequest) -> str:
    async with aclosing(provider.complete(request)) as stream:
        return "".join([c.text async for c in stream])


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh prefix cache; the assembled models stay where they are."""
    from adjutant_llamacpp import _models

    models = _models.cache_dir()
    monkeypatch.setattr("adjutant_llamacpp._provider.cache_dir", lambda: tmp_path)
    monkeypatch.setattr(_models, "cache_dir", lambda: models)
    return tmp_path


async def test_the_static_prefix_is_kept_on_disk_for_the_next_process(cache: Path) -> None:
    request = CompletionRequest(system=SYSTEM, prompt="Colour of the sky?", max_tokens=4,
                                temperature=0.0)
    first = LlamaCpp(context_size=1024)
    try:
        answer = await text_of(first, request)
    finally:
        await first.aclose()
    files = list((cache / "prefixes").glob("*.session"))
    assert len(files) == 1 and files[0].stat().st_size > 0
    second = LlamaCpp(context_size=1024)  # a new process, as far as llama.cpp knows
    try:
        assert await text_of(second, request) == answer
        # a damaged file is deleted and the prefix evaluated again, same answer
        files[0].write_bytes(b"not a session")
        await second.aclose()
        assert await text_of(second, request) == answer
    finally:
        await second.aclose()


async def test_an_instruct_model_is_prompted_through_its_chat_template() -> None:
    provider = LlamaCpp(context_size=512)
    try:
        llama = provider._llama(DEFAULT_MODEL)
        tokens, prefix = provider._tokens(llama, CompletionRequest(system="SYS", prompt="hi"))
        text = llama.detokenize(tokens, special=True).decode()
        if PRESETS[DEFAULT_MODEL].name.startswith("qwen"):
            assert text == ("<|im_start|>system\nSYS<|im_end|>\n<|im_start|>user\nhi"
                            "<|im_end|>\n<|im_start|>assistant\n")
            assert llama.detokenize(tokens[:prefix], special=True).decode().endswith(
                "<|im_start|>user\n")
        raw = LlamaCpp(raw=True)
        tokens, _ = raw._tokens(llama, CompletionRequest(system="SYS", prompt="hi"))
        assert llama.detokenize(tokens).decode().endswith("SYS\n\nhi")
    finally:
        await provider.aclose()


async def test_scores_rank_continuations_by_the_models_own_likelihood(cache: Path) -> None:
    provider = LlamaCpp(context_size=512)
    try:
        request = CompletionRequest(system="Answer with a colour.",
                                    prompt="What colour is a ripe banana?")
        options = ["yellow", "purple", "yellowish green"]
        scores: Any = await provider.score(request, options)
        assert len(scores) == 3 and all(s <= 0 for s in scores)
        assert scores[0] > scores[1]
        # the context holds the prompt again: a completion afterwards is unaffected
        assert (await text_of(provider, CompletionRequest(
            system="Answer with a colour.", prompt="What colour is a ripe banana?",
            max_tokens=3, temperature=0.0))).strip()
    finally:
        await provider.aclose()


async def test_scores_are_kept_on_disk_for_the_next_process(cache: Path) -> None:
    request = CompletionRequest(system=SYSTEM, prompt="What colour is a ripe banana?")
    options = ["yellow", "purple"]
    first = LlamaCpp(context_size=1024)
    try:
        scores = await first.score(request, options)
        assert first.timings["score_prompt_tokens"] > 0
    finally:
        await first.aclose()
    (kept,) = (cache / "scores").glob("*.json")
    second = LlamaCpp(context_size=1024)  # a new process: nothing evaluated
    try:
        assert await second.score(request, options) == scores
        assert second.timings["score_prompt_tokens"] == 0
        # other options are other scores, never the kept ones
        assert len(await second.score(request, ["yellow", "purple", "red"])) == 3
        # a damaged file is scored again (the same up to rounding: the prompt's
        # state was evaluated in other batches) and kept whole again
        kept.write_text("[1.0, ")
        again = await second.score(request, options)
        assert again == pytest.approx(scores, abs=0.05)
        assert json.loads(kept.read_text()) == again
    finally:
        await second.aclose()
