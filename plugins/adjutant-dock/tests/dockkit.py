"""Test kit: start a dock on a harness kernel and read its SSE streams."""

from __future__ import annotations

import contextlib
import shutil
import uuid
from collections.abc import AsyncIterator
from typing import Any

import anyio
import attrs
import httpx
import msgspec
import pytest
from ag_ui.core import Event as AgUiEvent
from pydantic import TypeAdapter

import adjutant_guard
import adjutant_write_gate
from adjutant.testing import FakeRead, FakeWrite, Harness, MemoryKeyValueStore, fake_tools
from adjutant_dock._serve import DockServer
from adjutant_hookspecs import Plan, Response, ToolCall

AGUI = TypeAdapter(AgUiEvent)
ENVELOPE = {"id", "seq", "runId", "threadId", "clientSessionId", "timestamp", "event", "data"}


#: Debian's chromium, which the browser tests drive (Playwright, no browser download).
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None, reason="needs Debian's chromium (apt-get install chromium)")


@attrs.define
class Dock:
    harness: Harness
    server: DockServer
    client: httpx.AsyncClient

    @property
    def provider(self) -> Any:
        return self.harness.provider

    @property
    def copilot(self) -> Any:
        return self.server.hub.copilot


@contextlib.asynccontextmanager
async def start_dock(*, mode: str | None = "execute-with-confirmation", ping_s: float = 15.0,
                     kv: MemoryKeyValueStore | None = None, home: Any = None,
                     plugins: tuple[Any, ...] = (), profile: Any = None,
                     env: dict[str, str] | None = None, **hub: Any) -> AsyncIterator[Dock]:
    tools = fake_tools(FakeRead("notes.read"), FakeWrite("notes.write"))
    async with Harness(adjutant_guard, adjutant_write_gate, tools, *plugins, kv=kv,
                       home=home, profile=profile, env=env) as h:
        server = DockServer(h.kernel, port=0, ping_s=ping_s, **hub)
        if mode is not None:
            await server.hub.copilot.set_mode(mode, channel="user")
        started = anyio.Event()
        async with anyio.create_task_group() as tg:
            tg.start_soon(lambda: server.serve(ready=started.set))
            await started.wait()
            async with httpx.AsyncClient(base_url=server.base, timeout=10, headers={
                    "Authorization": f"Bearer {server.token}"}) as client:
                yield Dock(h, server, client)
            tg.cancel_scope.cancel()


def run_input(prompt: str, *, thread: str = "t1", session: str = "tab-1",
              run_id: str | None = None, **extra: Any) -> dict[str, Any]:
    return {"threadId": thread, "runId": run_id or uuid.uuid4().hex,
            "messages": [{"id": "m1", "role": "user", "content": prompt}],
            "forwardedProps": {"clientSessionId": session}, **extra}


def resume_input(interrupt: dict[str, Any], action: str, *, thread: str = "t1",
                 args: dict[str, Any] | None = None, packet: str | None = None,
                 session: str = "tab-1") -> dict[str, Any]:
    payload: dict[str, Any] = {"action": action,
                               "packetId": packet or interrupt["metadata"]["packetId"]}
    if args is not None:
        payload["args"] = args
    return {"threadId": thread, "runId": uuid.uuid4().hex, "messages": [],
            "forwardedProps": {"clientSessionId": session},
            "resume": [{"interruptId": interrupt["id"], "status": "resolved",
                        "payload": payload}]}


@attrs.define
class Stream:
    frames: list[dict[str, Any]] = attrs.Factory(list)  # {"id": str, "env": dict}
    pings: int = 0

    @property
    def envelopes(self) -> list[dict[str, Any]]:
        return [f["env"] for f in self.frames]

    @property
    def types(self) -> list[str]:
        return [e["data"]["type"] for e in self.envelopes]


async def read(response: httpx.Response, *, stop_after: int | None = None) -> Stream:
    """Read SSE frames until the server ends the stream (or ``stop_after`` frames);
    every envelope is checked: its fields, ``id:`` = seq, the data an AG-UI event."""
    out = Stream()
    current: dict[str, str] = {}
    async for line in response.aiter_lines():
        if line.startswith(":"):
            out.pings += 1
            continue
        if line == "":
            if "data" in current:
                env = msgspec.json.decode(current["data"])
                check(env, current.get("id"))
                out.frames.append({"id": current.get("id"), "env": env})
                if stop_after is not None and len(out.frames) >= stop_after:
                    break
            current = {}
            continue
        key, _, value = line.partition(":")
        current[key] = value[1:] if value.startswith(" ") else value
    return out


def check(env: dict[str, Any], sse_id: str | None) -> None:
    assert set(env) == ENVELOPE, env
    assert sse_id == str(env["seq"])
    parsed = AGUI.validate_python(env["data"])
    assert parsed.model_dump(by_alias=True, exclude_none=True, mode="json") == env["data"]


def plan(*steps: tuple[str, dict[str, Any]]) -> Plan:
    return Plan(steps=tuple(ToolCall(tool=t, args=a) for t, a in steps))


def say(text: str) -> Response:
    """A model reply that answers in words (streamed word by word)."""
    return Response(text=text)
