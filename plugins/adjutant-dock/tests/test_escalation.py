"""The router's question in the dock: a request the router would send off this
machine is asked in the chat like a step (an AG-UI interrupt naming the preset, that
it leaves the machine, the most it may cost); no is the default, and a question
nobody answers keeps the request here."""

from __future__ import annotations

from typing import Any

import pytest
from dockkit import read, resume_input, run_input, start_dock

from adjutant.kernel._settings import ModelPreset, Profile, RouterSettings
from adjutant.scripted import ScriptedProvider
from adjutant_hookspecs import ProviderCapabilities, Response, hookimpl

pytestmark = pytest.mark.anyio

LONG = "summarize this: " + "lorem ipsum " * 200  # ~600 tokens: the router escalates
STRONG = ModelPreset(provider="remote", model="big/model", prompt_cost_per_mtok=2.0,
                     completion_cost_per_mtok=8.0, max_tokens=100)


class Remote(ScriptedProvider):
    """A hosted API as the router sees one (remote)."""

    capabilities = ProviderCapabilities(remote=True)


class RemotePlugin:
    def __init__(self, provider: Remote) -> None:
        self.provider = provider

    @hookimpl
    def register_providers(self, register: Any) -> None:
        register(self.provider)


def profile() -> Profile:
    return Profile(model=ModelPreset(provider="scripted", model="small"),
                   models={"strong": STRONG},
                   router=RouterSettings(escalate_to="strong", long_tokens=200))


async def ask(dock: Any, body: dict[str, Any]) -> Any:
    request = dock.client.build_request("POST", "/api/copilot/run", json=body)
    return await read(await dock.client.send(request, stream=True))


@pytest.mark.parametrize("yes", [False, True], ids=["no", "yes"])
async def test_the_dock_asks_before_a_request_leaves_the_machine(yes: bool) -> None:
    remote = Remote(Response(text="from the strong preset"), name="remote")
    async with start_dock(plugins=(RemotePlugin(remote),), profile=profile()) as dock:
        dock.provider.queue(Response(text="answered here"))
        first = await ask(dock, run_input(LONG))
        final = first.envelopes[-1]["data"]
        [interrupt] = final["outcome"]["interrupts"]
        assert interrupt["reason"] == "model_escalation"
        assert interrupt["message"] == "Send this request to strong (remote:big/model)?"
        said = interrupt["metadata"]["escalation"]
        assert (said["preset"], said["leavesMachine"]) == ("strong", True)
        assert said["cost"] > 0 and said["tokens"] > 600
        assert not remote.requests  # nothing left before the answer
        bad = await dock.client.post("/api/copilot/run",
                                     json=resume_input(interrupt, "grant"))
        assert bad.status_code == 400  # a step's answer is not this question's
        done = await ask(dock, resume_input(interrupt, "allow" if yes else "deny"))
        text = done.envelopes[-1]["data"]["result"]["text"]
        assert text == ("from the strong preset" if yes else "answered here")
        assert bool(remote.requests) is yes
        [answer] = (await dock.client.get("/api/log?kind=dock_answer")).json()["records"]
        assert (answer["scope"], answer["action"]) == ("escalation", "allow" if yes else "deny")
        route = (await dock.client.get("/api/log?kind=route")).json()["records"][-1]
        assert route["asked"] is True and (route["declined"] is None) is yes
        await dock.server.hub.written()
        [request] = (await dock.client.get("/api/sessions")).json()["requests"]
        assert request["answers"] == ["sent off this machine" if yes else "denied"]


async def test_a_question_nobody_answers_keeps_the_request_here() -> None:
    remote = Remote(Response(text="from the strong preset"), name="remote")
    async with start_dock(plugins=(RemotePlugin(remote),), profile=profile(),
                          approval_timeout_s=0.3) as dock:
        dock.provider.queue(Response(text="answered here"))
        first = await ask(dock, run_input(LONG))
        assert first.envelopes[-1]["data"]["outcome"]["type"] == "interrupt"
        await dock.server.hub.drained()
        assert not remote.requests
        route = (await dock.client.get("/api/log?kind=route")).json()["records"][-1]
        assert route["preset"] == "default" and route["declined"]


async def test_an_answer_to_another_question_sends_nothing() -> None:
    """A yes must name what was shown (its packetId: the preset, the reason and the most
    it may cost); a yes carrying any other is refused and the request stays put until
    this question is answered."""
    remote = Remote(Response(text="from the strong preset"), name="remote")
    async with start_dock(plugins=(RemotePlugin(remote),), profile=profile()) as dock:
        first = await ask(dock, run_input(LONG))
        [interrupt] = first.envelopes[-1]["data"]["outcome"]["interrupts"]
        assert interrupt["metadata"]["escalation"]["reason"].startswith("long: ~")
        stale = await dock.client.post("/api/copilot/run", json=resume_input(
            interrupt, "allow", packet="0" * 16))
        assert stale.status_code == 409 and "not the one waiting" in stale.text
        assert not remote.requests
        assert (await dock.client.get("/api/log?kind=dock_answer")).json()["records"] == []
        done = await ask(dock, resume_input(interrupt, "allow"))  # the question still waits
        assert done.envelopes[-1]["data"]["result"]["text"] == "from the strong preset"
        assert len(remote.requests) == 1
