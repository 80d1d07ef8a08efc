"""Roles: a chosen role's skill file joins the system prompt of that request and the
Context Stack; a missing, unreadable or escaping one blocks the request with what to
do, never a silent substitute."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from dockkit import Dock, read, run_input, say

pytestmark = pytest.mark.anyio


def with_role(prompt: str, role: str) -> dict[str, Any]:
    return run_input(prompt, forwardedProps={"clientSessionId": "tab-1", "role": role})


async def test_the_role_skill_joins_the_system_prompt_of_that_request(dock: Dock) -> None:
    skills = dock.harness.workspace / ".adjutant" / "skills"
    skills.mkdir(parents=True)
    (skills / "reviewer.md").write_text("Review diffs line by line. SKILL-MARK-1\n")
    github = dock.harness.workspace / ".github" / "skills"
    github.mkdir(parents=True)
    (github / "Planner_SKILL.md").write_text("Plan in small steps. SKILL-MARK-2\n")
    roles = (await dock.client.get("/api/roles")).json()["roles"]
    assert [r["role"] for r in roles] == ["planner", "reviewer"]
    dock.provider.queue(say("ok"), say("ok"), say("ok"))
    request = dock.client.build_request("POST", "/api/copilot/run",
                                        json=with_role("look", "reviewer"))
    stream = await read(await dock.client.send(request, stream=True))
    stack = [e["data"]["value"] for e in stream.envelopes
             if e["data"].get("name") == "adjutant.dock.context_stack"]
    assert stack[0]["skill"]["path"] == ".adjutant/skills/reviewer.md"
    assert "SKILL-MARK-1" in (dock.provider.requests[-1].system or "")
    request = dock.client.build_request("POST", "/api/copilot/run",
                                        json=with_role("plan", "Planner"))
    await read(await dock.client.send(request, stream=True))
    assert "SKILL-MARK-2" in (dock.provider.requests[-1].system or "")
    request = dock.client.build_request("POST", "/api/copilot/run", json=run_input("plain"))
    await read(await dock.client.send(request, stream=True))
    system = dock.provider.requests[-1].system or ""
    assert "SKILL-MARK" not in system  # for that request only


async def test_a_missing_or_bad_skill_blocks_the_request(dock: Dock) -> None:
    skills = dock.harness.workspace / ".adjutant" / "skills"
    skills.mkdir(parents=True)
    outside = dock.harness.workspace.parent / "elsewhere.md"
    outside.write_text("not a skill")
    os.symlink(outside, skills / "sneaky.md")
    (skills / "binary.md").write_bytes(b"\xff\xfe\x00")
    for role, expect in (("auditor", "create .adjutant/skills/auditor.md"),
                         ("../etc", "letters, digits"),
                         ("sneaky", "outside the workspace"),
                         ("binary", "not UTF-8")):
        answer = await dock.client.post("/api/copilot/run", json=with_role("go", role))
        assert answer.status_code == 422, role
        assert expect in answer.json()["error"], answer.json()
    assert dock.provider.requests == []  # nothing reached the model
    assert dock.server.hub.segments == {}


@pytest.mark.parametrize("linked", [".adjutant/skills", ".adjutant", ".github/skills"])
async def test_a_linked_skill_folder_never_sends_a_file_from_outside(dock: Dock,
                                                                     linked: str) -> None:
    """``ln -s ~/Documents .adjutant/skills``: the role was listed, shown with a
    workspace-looking path, and ``~/Documents/passwords.md`` went to the model. The
    file's real path is judged against the workspace's folders as written."""
    documents = dock.harness.workspace.parent / "Documents"
    (documents / "skills").mkdir(parents=True)
    for target in (documents, documents / "skills"):
        (target / "passwords.md").write_text("bank: PASSWORD-MARK\n")
        (target / "Passwords_SKILL.md").write_text("bank: PASSWORD-MARK\n")
    link = dock.harness.workspace / linked
    link.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(documents, link)  # .adjutant -> Documents holds skills/ too
    listed = (await dock.client.get("/api/roles")).json()["roles"]
    assert listed == [], listed
    answer = await dock.client.post("/api/copilot/run", json=with_role("go", "passwords"))
    assert answer.status_code == 422 and "outside" in answer.json()["error"], answer.json()
    assert dock.provider.requests == []


async def test_a_hard_link_to_a_protected_file_never_joins_the_prompt(tmp_path: Path) -> None:
    """A hard link to ``~/.ssh/id_rsa`` inside the skills folder sent the private key:
    the deny rules judge the file by inode, as for a tool's read. The home is the
    test's own: making and removing the real ``~/.ssh`` raced a sandboxed command in
    another worker (bwrap could not make its mount point once it was gone)."""
    from dockkit import start_dock

    home = tmp_path / "home"
    key = home / ".ssh" / "id_rsa"
    key.parent.mkdir(parents=True)
    key.write_text("-----BEGIN OPENSSH PRIVATE KEY-----\nKEY-MARK\n")
    async with start_dock(env={"HOME": str(home)}) as dock:
        skills = dock.harness.workspace / ".adjutant" / "skills"
        skills.mkdir(parents=True)
        try:
            os.link(key, skills / "keys.md")
        except OSError:
            pytest.skip("the workspace and the home are on different file systems")
        listed = (await dock.client.get("/api/roles")).json()["roles"]
        assert "keys" not in [r["role"] for r in listed], listed
        answer = await dock.client.post("/api/copilot/run", json=with_role("go", "keys"))
        assert answer.status_code == 422 and "hard link" in answer.json()["error"], \
            answer.json()
        assert dock.provider.requests == []


async def test_a_skill_linked_inside_its_folder_shows_its_real_path(dock: Dock) -> None:
    skills = dock.harness.workspace / ".adjutant" / "skills"
    skills.mkdir(parents=True)
    (skills / "base.md").write_text("Be brief. SKILL-MARK-3\n")
    os.symlink("base.md", skills / "brief.md")
    roles = {r["role"]: r["path"] for r in (await dock.client.get("/api/roles")).json()["roles"]}
    assert roles["brief"] == ".adjutant/skills/base.md"
