"""Scoped allows in the question itself, through the real guard and write-gate: a
question offers only what a grant can say; the server grants a scope only when that
very question offered it (a forged one is 409, nothing granted or run), logs it in the
answer's record before granting, and the grant then answers the next question for that
file, tool or folder only, until revoked."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from dockkit import Dock, plan, read, resume_input, run_input, start_dock

pytestmark = pytest.mark.anyio


async def ask(dock: Dock, prompt: str, *steps: tuple[str, dict[str, Any]]) -> Any:
    dock.provider.queue(plan(*steps))
    request = dock.client.build_request("POST", "/api/copilot/run", json=run_input(prompt))
    return await read(await dock.client.send(request, stream=True))


def question(stream: Any) -> dict[str, Any] | None:
    outcome = stream.envelopes[-1]["data"].get("outcome") or {}
    return outcome["interrupts"][0] if outcome.get("type") == "interrupt" else None


async def answer(dock: Dock, interrupt: dict[str, Any], action: str,
                 scope: dict[str, Any] | None = None) -> Any:
    body = resume_input(interrupt, action)
    if scope is not None:
        body["resume"][0]["payload"]["scope"] = scope
    return await dock.client.send(dock.client.build_request(
        "POST", "/api/copilot/run", json=body), stream=True)


async def test_a_write_offers_this_file_and_this_tool_and_a_forged_scope_is_409(
        dock: Dock) -> None:
    ws = dock.harness.workspace
    asked = question(await ask(dock, "write b", ("notes.write", {"path": "b.txt",
                                                                "text": "1\n"})))
    assert asked is not None
    scopes = asked["metadata"]["scopes"]
    target = f"file:{ws / 'b.txt'}"
    assert [(s["grant"], s["seconds"]) for s in scopes] == [
        (target, 28800), ("tool:notes.write", 900), ("tool:notes.write", 3600)]
    assert scopes[0]["label"] == "Allow changes to b.txt for this session (8 h)"
    for forged in ({"grant": f"file:{ws / 'other.txt'}", "seconds": 28800},  # not offered
                   {"grant": target, "seconds": 10 ** 9},  # offered, not for that long
                   {"grant": "write", "seconds": 900},  # the old, unread kind
                   "file"):
        refused = await answer(dock, asked, "grant", forged)  # type: ignore[arg-type]
        assert refused.status_code == 409, forged
        await refused.aclose()
    with_deny = await answer(dock, asked, "deny", scopes[0])  # a scope goes with grant only
    assert with_deny.status_code == 409
    await with_deny.aclose()
    assert dock.copilot.grants == [] and not (ws / "b.txt").exists()
    assert (await dock.client.get("/api/log?kind=dock_answer,grant")).json()["records"] == []

    await read(await answer(dock, asked, "grant", scopes[0]))
    assert (ws / "b.txt").read_text() == "1\n"
    log = (await dock.client.get("/api/log?kind=dock_answer,grant")).json()["records"]
    assert [r["kind"] for r in log] == ["dock_answer", "grant"]  # logged, then granted
    assert (log[0]["grant"], log[0]["seconds"]) == (target, 28800)
    state = (await dock.client.get("/api/state")).json()
    assert state["grants"] == [target] and target in state["grantsExpire"]

    # the same file again: no question (the guard's and the write-gate's answered)
    again = await ask(dock, "write b again", ("notes.write", {"path": "b.txt", "text": "2\n"}))
    assert question(again) is None and (ws / "b.txt").read_text() == "2\n"
    approvals = (await dock.client.get("/api/log?kind=approval")).json()["records"]
    assert approvals[-1]["grant"] == target
    # another file asks
    other = await ask(dock, "write c", ("notes.write", {"path": "c.txt", "text": "x\n"}))
    assert question(other) is not None
    await read(await answer(dock, question(other), "deny"))  # type: ignore[arg-type]
    # revoked from the chips: the next write to b asks again
    assert (await dock.client.post("/api/grants/revoke", json={"grant": target})
            ).status_code == 200
    revoked = await ask(dock, "write b once more",
                        ("notes.write", {"path": "b.txt", "text": "3\n"}))
    assert question(revoked) is not None and (ws / "b.txt").read_text() == "2\n"


async def test_a_read_outside_offers_its_folder_never_a_top_level_or_home(
        dock: Dock) -> None:
    ws = dock.harness.workspace
    outside = ws.parent / "elsewhere"
    outside.mkdir()
    (outside / "x.txt").write_text("far away\n")
    asked = question(await ask(dock, "read outside",
                               ("notes.read", {"path": str(outside / "x.txt")})))
    assert asked is not None
    scopes = asked["metadata"]["scopes"]
    assert [(s["grant"], s["seconds"]) for s in scopes] == [
        (f"cage:{outside}", 900), (f"cage:{outside}", 3600), (f"cage:{outside}", 28800)]
    assert scopes[0]["label"] == f"Allow reads in {outside} for 15 min"
    forged = await answer(dock, asked, "grant", {"grant": f"cage:{ws.parent}",
                                                 "seconds": 900})
    assert forged.status_code == 409 and dock.copilot.grants == []
    await forged.aclose()
    done = await read(await answer(dock, asked, "grant", scopes[0]))
    assert done.envelopes[-1]["data"]["result"]["status"] == "executed"
    assert dock.copilot.grants == [f"cage:{outside}"]
    again = await ask(dock, "read outside again",
                      ("notes.read", {"path": str(outside / "x.txt")}))
    assert question(again) is None  # the folder is a working folder now

    asked = question(await ask(dock, "read far", ("notes.read", {"path": "/etc/hostname"})))
    assert asked is not None and asked["metadata"]["scopes"] == []  # /etc: top level


async def test_the_home_folder_and_a_folder_holding_it_are_never_offered(
        tmp_path: Path) -> None:
    home = tmp_path / "people" / "me"
    (home / "projects").mkdir(parents=True)
    for where in (home, home / "projects", tmp_path / "people"):
        (where / "x.txt").write_text("x\n")
    async with start_dock(env={"HOME": str(home)}) as dock:
        offered = {}
        for where in (home, home / "projects", tmp_path / "people"):
            asked = question(await ask(dock, "read", ("notes.read",
                                                      {"path": str(where / "x.txt")})))
            assert asked is not None, where
            offered[where] = {s["grant"] for s in asked["metadata"]["scopes"]}
            await read(await answer(dock, asked, "deny"))
        assert offered == {home: set(), tmp_path / "people": set(),
                           home / "projects": {f"cage:{home / 'projects'}"}}


async def test_a_write_another_policy_asks_about_offers_no_scope(dock: Dock) -> None:
    """A hard link: the guard asks about it, so a grant would not answer the next
    question: none is offered."""
    import os

    ws = dock.harness.workspace
    (ws / "one.txt").write_text("x\n")
    os.link(ws / "one.txt", ws / "two.txt")
    asked = question(await ask(dock, "write two",
                               ("notes.write", {"path": "two.txt", "text": "y\n"})))
    assert asked is not None and asked["metadata"]["scopes"] == []
