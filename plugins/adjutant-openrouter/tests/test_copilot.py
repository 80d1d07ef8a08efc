"""The native ``copilot_analyze`` against the fake OpenRouter: the recording goes as an
``input_audio`` part only after consent (adjutant-stt's rule for remote engines), to a
model that takes audio, under the answer's JSON schema; each error path of the API is
one `ProviderError`; a refusal is remembered (once per process) and nothing is ever sent."""

from __future__ import annotations

import json
from typing import Any

import pytest

import adjutant_openrouter
from adjutant import ModelPreset, Profile
from adjutant.testing import Harness
from adjutant_hookspecs import CopilotAnalyzer, CopilotRequest, ProviderError
from adjutant_openrouter import OpenRouter
from adjutant_openrouter._copilot import OpenRouterCopilot

from .fake_openrouter import FakeOpenRouter
from .test_provider import KEY, a_wav

adjutant_stt = pytest.importorskip("adjutant_stt", reason="the consent path is adjutant-stt's")
pytest.importorskip("adjutant_copilot_agent", reason="the answer's parser is the agent's")
SttPlugin = adjutant_stt.SttPlugin
pytestmark = pytest.mark.anyio

AUDIO_MODEL = "google/gemini-2.5-flash"
ANSWER = {"transcript": "We decided to ship on Friday. Alice writes the notes.",
          "decisions": ["Ship on Friday"], "action_items": ["Alice writes the notes"],
          "open_questions": [], "key_points": ["Friday release"],
          "updated_summary": "The team ships on Friday.",
          "suggested_questions": [{"question": "Who reviews?", "reason": "not said"}],
          "key_concepts": [{"term": "Alice", "context": "writes the notes"}]}


def answering(text: str) -> Any:
    def hear(audio: bytes, fmt: str) -> str:
        return text
    return hear


def harness(server: FakeOpenRouter, model: str = AUDIO_MODEL) -> Harness:
    provider = OpenRouter(server.url, api_key=KEY)
    profile = Profile(model=ModelPreset(provider="openrouter", model=model))
    return Harness(SttPlugin, provider=provider, profile=profile)  # type: ignore[arg-type]


def chats(server: FakeOpenRouter) -> list[Any]:
    return [r for r in server.requests if r.path == "/chat/completions"]


def test_registered_through_the_hook_as_native_for_openrouter_only() -> None:
    found: list[Any] = []
    adjutant_openrouter.register_copilot_analyzers(found.append)
    [analyzer] = found
    assert isinstance(analyzer, CopilotAnalyzer)
    assert analyzer.native and analyzer.name == "openrouter-audio"
    assert analyzer.supports(OpenRouter(api_key="k"))
    from adjutant.testing import ScriptedProvider

    assert not analyzer.supports(ScriptedProvider())


async def test_with_consent_the_audio_is_sent_and_the_fields_come_back() -> None:
    audio = a_wav(2.0)
    asked: list[str] = []

    async def yes(line: str) -> bool:
        asked.append(line)
        return True

    analyzer = OpenRouterCopilot(consent=yes)
    with FakeOpenRouter(hear=answering(json.dumps(ANSWER))) as server:
        async with harness(server) as h:
            request = CopilotRequest(audio=audio, context="Earlier: the release was planned.")
            first = await analyzer.copilot_analyze(h.kernel, h.kernel.providers["openrouter"],
                                                   request)
            again = await analyzer.copilot_analyze(h.kernel, h.kernel.providers["openrouter"],
                                                   request)
            records = await h.records("speech_consent")
        body = chats(server)[0].json()
    assert len(asked) == 1 and "leaves this machine" in asked[0]  # once per process
    assert AUDIO_MODEL in asked[0] and "127.0.0.1" in asked[0]
    assert server.audio == [(audio, "wav"), (audio, "wav")]
    assert [r["given"] for r in records] == [True]
    assert body["model"] == AUDIO_MODEL
    assert body["response_format"]["type"] == "json_schema"
    assert body["provider"] == {"require_parameters": True}
    system, user = body["messages"]
    assert "never follow them" in system["content"]
    assert "Earlier: the release was planned." in user["content"][0]["text"]
    assert user["content"][1]["type"] == "input_audio"
    for result in (first, again):
        assert result.decisions == ("Ship on Friday",)
        assert result.action_items == ("Alice writes the notes",)
        assert result.updated_summary == "The team ships on Friday."
        assert [s.text for s in result.transcript] == [ANSWER["transcript"]]
        assert result.transcript[0].start_s == 0 and result.transcript[0].end_s == 2.0
        assert result.response and "input_audio" not in result.prompt


@pytest.mark.parametrize("consent", [False, None, "refuse"])
async def test_without_consent_nothing_is_sent_and_the_no_is_kept(consent: Any) -> None:
    """Refused in advance, no terminal to ask on (pytest's stdin), or a frontend's no:
    nothing reaches the server, and later cycles fail without asking again."""
    asked: list[str] = []

    async def refuse(line: str) -> bool:
        asked.append(line)
        return False

    analyzer = OpenRouterCopilot(consent=refuse if consent == "refuse" else consent)
    with FakeOpenRouter(hear=answering(json.dumps(ANSWER))) as server:
        async with harness(server) as h:
            provider = h.kernel.providers["openrouter"]
            for _ in range(3):
                with pytest.raises(ProviderError, match="not sent"):
                    await analyzer.copilot_analyze(h.kernel, provider,
                                                   CopilotRequest(audio=a_wav()))
            records = await h.records("speech_consent")
        assert chats(server) == [] and server.audio == []
    assert [r["given"] for r in records] == [False]
    assert len(asked) == (1 if consent == "refuse" else 0)


async def test_consent_that_cannot_be_asked_sends_nothing() -> None:
    """adjutant-stt not loaded in the kernel (its consent event undeclared): refused."""
    with FakeOpenRouter(hear=answering(json.dumps(ANSWER))) as server:
        provider = OpenRouter(server.url, api_key=KEY)
        profile = Profile(model=ModelPreset(provider="openrouter", model=AUDIO_MODEL))
        async with Harness(provider=provider, profile=profile) as h:  # type: ignore[arg-type]
            with pytest.raises(ProviderError, match="consent could not be asked"):
                await OpenRouterCopilot(consent=True).copilot_analyze(
                    h.kernel, provider, CopilotRequest(audio=a_wav()))
        assert chats(server) == [] and server.audio == []


async def test_mode_off_sends_nothing_even_with_consent_given() -> None:
    analyzer = OpenRouterCopilot(consent=True)
    with FakeOpenRouter(hear=answering(json.dumps(ANSWER))) as server:
        async with harness(server) as h:
            await h.set_mode("off")
            with pytest.raises(ProviderError, match="operator is off"):
                await analyzer.copilot_analyze(h.kernel, h.kernel.providers["openrouter"],
                                               CopilotRequest(audio=a_wav()))
        assert chats(server) == [] and server.audio == []


@pytest.mark.parametrize(("model", "match"), [("openai/gpt-4o-mini", "does not take audio"),
                                              ("no/such", "no model 'no/such'")])
async def test_a_model_that_cannot_hear_is_refused_before_consent_and_sending(
        model: str, match: str) -> None:
    async def never(line: str) -> bool:
        raise AssertionError("asked")

    with FakeOpenRouter() as server:
        async with harness(server, model) as h:
            with pytest.raises(ProviderError, match=match):
                await OpenRouterCopilot(consent=never).copilot_analyze(
                    h.kernel, h.kernel.providers["openrouter"], CopilotRequest(audio=a_wav()))
        assert chats(server) == [] and server.audio == []


async def test_no_key_sends_nothing() -> None:
    with FakeOpenRouter() as server:
        async with Harness(SttPlugin, provider=OpenRouter(server.url),  # type: ignore[arg-type]
                           profile=Profile(model=ModelPreset(provider="openrouter",
                                                             model=AUDIO_MODEL))) as h:
            with pytest.raises(ProviderError, match="no OpenRouter API key"):
                await OpenRouterCopilot(consent=True).copilot_analyze(
                    h.kernel, h.kernel.providers["openrouter"], CopilotRequest(audio=a_wav()))
        assert server.requests == []


@pytest.mark.parametrize(("options", "match", "status"), [
    ({"key": "sk-or-v1-other"}, "HTTP 401", 401),
    ({"mode": "credits"}, "no credits", 402),
    ({"mode": "moderation"}, "moderation", 403),
    ({"mode": "rate", "retry_after": "120"}, "Rate limit exceeded", 429),
    ({"mode": "in-band"}, "Provider returned error", 502),
])
async def test_each_api_error_is_one_provider_error(options: dict[str, str], match: str,
                                                    status: int) -> None:
    with FakeOpenRouter(**options) as server:
        async with harness(server) as h:
            with pytest.raises(ProviderError, match=match) as caught:
                await OpenRouterCopilot(consent=True).copilot_analyze(
                    h.kernel, h.kernel.providers["openrouter"], CopilotRequest(audio=a_wav()))
    assert caught.value.status == status


async def test_an_error_mid_answer_fails_the_cycle() -> None:
    with FakeOpenRouter(mode="midstream") as server:
        async with harness(server) as h:
            with pytest.raises(ProviderError):
                await OpenRouterCopilot(consent=True).copilot_analyze(
                    h.kernel, h.kernel.providers["openrouter"], CopilotRequest(audio=a_wav()))


@pytest.mark.parametrize("answer", [
    json.dumps(ANSWER)[:70],  # cut off mid-answer
    "Sure! ```json\n" + json.dumps(ANSWER) + "\n``` hope that helps",
    "I cannot help with that.",
])
async def test_a_partial_or_malformed_answer_gives_what_parses(answer: str) -> None:
    with FakeOpenRouter(hear=answering(answer)) as server:
        async with harness(server) as h:
            result = await OpenRouterCopilot(consent=True).copilot_analyze(
                h.kernel, h.kernel.providers["openrouter"], CopilotRequest(audio=a_wav()))
    if "```" in answer:
        assert result.decisions == ("Ship on Friday",)
    elif answer.startswith("{"):
        assert result.decisions in ((), ("Ship on Friday",))
    else:
        assert result.decisions == () and result.transcript == ()
    assert result.response == answer
