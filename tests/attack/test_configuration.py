"""Issue 13, section 4: configuration that failed open.

The profile's tool allow-list was advisory (a granted plan ran tools it does not name,
and ``"tools": []`` still let ``search.grep`` run), and a workspace replaced by a
symlink to ``/`` between two sessions was followed. Each test drives the real
``adjutant`` command (a pseudo-terminal answering "grant", or ``mcp serve`` with the
MCP Python SDK) and checks the files, the output and the action log.
"""

from __future__ import annotations

import json
import shutil
import uuid
from pathlib import Path
from typing import Any

import pytest

from .helpers import ADJUTANT, MARKER, Attack, have, plan, refusal

needs_bwrap = pytest.mark.skipif(not have("bwrap"), reason="shell.exec needs bubblewrap")


def decisions(records: list[dict[str, Any]], tool: str) -> list[dict[str, Any]]:
    return [r for r in records if r["kind"] == "decision" and r["tool"] == tool]


def ran(records: list[dict[str, Any]], tool: str) -> bool:
    return any(r["kind"] in ("tool_call", "result") and r.get("tool") == tool
               for r in records)


# -- the tool allow-list ------------------------------------------------------------------

WRITE_AND_EXEC = plan(("fs.write", {"path": "written.txt", "content": "pwned\n"}),
                      ("shell.exec", {"argv": ["touch", "executed.txt"]}))


@needs_bwrap
def test_a_granted_plan_runs_only_what_the_allow_list_names(attack: Attack) -> None:
    attack.mode("execute-with-confirmation")
    attack.profile(tools=["fs.read"])
    attack.script(WRITE_AND_EXEC)
    shown = attack.run_granting("write a file and touch another")
    assert not (attack.work / "written.txt").exists()
    assert not (attack.work / "executed.txt").exists()
    assert 'allow-list of profile \'default\' ("tools": ["fs.read"])' in shown, shown
    records = attack.log()
    for tool in ("fs.write", "shell.exec"):
        assert not ran(records, tool)
        refusals = decisions(records, tool)
        assert refusals and all(d["decision"] == "deny" and d["policy"] == "allow-list"
                                for d in refusals), refusals
    # nothing ran: denied, or aborted by the error-rate guard once both were refused
    assert [r["status"] for r in records if r["kind"] == "outcome"][-1] in ("denied",
                                                                            "aborted")
    # and the planner's menu never offered them
    assert all(r["menu"] == ["fs.read"] for r in records if r["kind"] == "attempt")

    # the same plan, the same answers, with the allow-list naming both: both run (so
    # the refusal above was the allow-list's, not the bench failing to run anything)
    attack.profile(tools=["fs.*", "shell.exec"])
    attack.script(WRITE_AND_EXEC)
    attack.run_granting("write a file and touch another")
    assert (attack.work / "written.txt").read_text() == "pwned\n"
    assert (attack.work / "executed.txt").exists()


def test_an_empty_allow_list_runs_nothing_not_even_reads(attack: Attack) -> None:
    (attack.work / "notes.txt").write_text("hello needle\n")
    attack.mode("execute-with-confirmation")
    attack.profile(tools=[])
    attack.script(plan(("search.grep", {"pattern": "needle"})))
    done = attack.cli("run", "find the needle", "--json")
    outcome = json.loads(done.stdout)
    assert outcome["status"] == "denied", outcome
    assert "needle\n" not in done.stdout and "notes.txt" not in done.stdout
    assert '"tools": []' in outcome["error"] and "allow-list" in outcome["error"]
    records = attack.log()
    assert not ran(records, "search.grep")
    assert {d["policy"] for d in decisions(records, "search.grep")} == {"allow-list"}
    assert [r["menu"] for r in records if r["kind"] == "attempt"] == [[]]


def test_absent_tools_still_means_every_tool(attack: Attack) -> None:
    (attack.work / "notes.txt").write_text("hello needle\n")
    attack.mode("execute-with-confirmation")
    attack.script(plan(("search.grep", {"pattern": "needle"})))
    outcome = json.loads(attack.cli("run", "find the needle", "--json").stdout)
    assert outcome["status"] == "executed", outcome
    assert "notes.txt" in outcome["results"][0]["stdout"]


def test_a_malformed_allow_list_entry_refuses_the_profile(attack: Attack) -> None:
    attack.mode("execute-with-confirmation")
    attack.profile(tools=["fs.read", "FS WRITE"])
    attack.script(WRITE_AND_EXEC)
    done = attack.cli("run", "write a file")
    assert done.returncode != 0
    assert "'FS WRITE' is not a tool name or glob" in done.stderr and "$.tools" in done.stderr
    assert not (attack.work / "written.txt").exists()


def test_a_replayed_step_is_held_to_todays_allow_list(attack: Attack) -> None:
    (attack.work / "a.txt").write_text("replayed\n")
    attack.mode("execute-with-confirmation")
    attack.script(plan(("fs.read", {"path": "a.txt"})))
    first = json.loads(attack.cli("run", "read a.txt", "--json").stdout)
    assert first["status"] == "executed", first
    attack.profile(tools=["search.*"])
    done = attack.cli("replay", first["run_id"], "--json")
    again = json.loads(done.stdout)
    assert again["status"] == "denied", again
    assert "replayed" not in done.stdout
    assert "fs.read is not in the tool allow-list" in again["results"][0]["stderr"]


@pytest.mark.anyio
async def test_mcp_serve_lists_and_runs_only_allowed_tools(attack: Attack) -> None:
    from mcp import Client

    (attack.work / "a.txt").write_text("hello from a.txt\n")
    attack.mode("execute-with-confirmation")
    attack.profile(tools=["fs.read"])
    async with Client(serve(attack)) as client:
        assert [t.name for t in (await client.list_tools()).tools] == ["fs.read"]
        read = await client.call_tool("fs.read", {"path": "a.txt"})
        assert not read.is_error
        refused = {}
        for tool, args in (("fs.write", {"path": "b.txt", "content": "no"}),
                           ("shell.exec", {"argv": ["touch", "c.txt"]}),
                           ("search.grep", {"pattern": "hello"})):
            # a refusal the calling model reads (isError), not "no such tool"
            refused[tool] = refusal(await client.call_tool(tool, args))
    for tool, reason in refused.items():
        assert f"{tool} is not in the tool allow-list" in reason, (tool, reason)
    assert not (attack.work / "b.txt").exists() and not (attack.work / "c.txt").exists()
    records = attack.log()
    for tool in refused:
        assert not ran(records, tool)
        assert {d["policy"] for d in decisions(records, tool)} == {"allow-list"}

    attack.profile(tools=[])
    async with Client(serve(attack)) as client:
        assert (await client.list_tools()).tools == []
        reason = refusal(await client.call_tool("fs.read", {"path": "a.txt"}))
    assert "allow-list" in reason and '"tools": []' in reason


def serve(attack: Attack) -> Any:
    from mcp import StdioServerParameters

    # the SDK starts it in a new session: no controlling terminal to approve on
    return StdioServerParameters(command=ADJUTANT, args=["mcp", "serve"], env=attack.env,
                                 cwd=str(attack.work))


# -- pinned cage roots --------------------------------------------------------------------

def swap_for_root(path: Path) -> None:
    """What the attacker does between two sessions: the workspace becomes a link to /."""
    shutil.rmtree(path)
    path.symlink_to("/")


def test_a_workspace_swapped_for_a_link_to_root_is_refused(attack: Attack) -> None:
    (attack.work / "a.txt").write_text("first session\n")
    attack.mode("execute-with-confirmation")
    attack.script(plan(("fs.read", {"path": "a.txt"})))
    first = json.loads(attack.cli("run", "read a.txt", "--json").stdout)
    assert first["status"] == "executed", first
    assert "pinned" in attack.cli("status").stdout

    swap_for_root(attack.work)
    hostname = Path("/etc/hostname").read_text() if Path("/etc/hostname").exists() else None
    escape = f"tmp/adjutant-escape-{uuid.uuid4().hex}"
    attack.script(plan(("fs.read", {"path": "etc/hostname"}),
                       ("fs.write", {"path": escape, "content": MARKER})))
    shown = attack.run_granting("read the hostname and leave a file")
    assert not Path("/", escape).exists()
    assert hostname is None or hostname.strip() not in shown.replace("\r", "")
    message = [line for line in shown.splitlines() if "refusing to work" in line]
    assert len(message) == 1, shown
    assert f"the workspace {attack.work} is not the directory pinned" in message[0]
    assert "now a symlink to /," in message[0]
    assert f"adjutant workspace trust {attack.work}" in message[0]
    records = attack.log()
    second = [r for r in records if r["kind"] in ("tool_call", "result", "context", "plan")
              and r.get("run_id") != first["run_id"]]
    assert second == []  # nothing read, not even the context, no model plan acted on

    # the same refusal for every entry point, and status says why
    done = attack.cli("run", "read the hostname", "--non-interactive")
    assert done.returncode != 0 and "refusing to work" in done.stderr
    assert "CHANGED since pinned" in attack.cli("status").stdout
    assert attack.cli("workspace").returncode == 4

    # the user looks, decides, and re-pins it explicitly
    trusted = attack.cli("workspace", "trust", str(attack.work))
    assert trusted.returncode == 0 and f"pinned {attack.work} (resolved to /)" in trusted.stdout
    assert attack.cli("workspace").returncode == 0
    assert [r["kind"] for r in attack.log()].count("cage_trusted") == 1


@pytest.mark.anyio
async def test_mcp_serve_refuses_calls_in_a_swapped_workspace(attack: Attack) -> None:
    from mcp import Client

    (attack.work / "a.txt").write_text("first session\n")
    attack.mode("execute-with-confirmation")
    async with Client(serve(attack)) as client:
        assert not (await client.call_tool("fs.read", {"path": "a.txt"})).is_error
    swap_for_root(attack.work)
    async with Client(serve(attack)) as client:
        reason = refusal(await client.call_tool("fs.read", {"path": "etc/hostname"}))
    assert "fs.read was not run" in reason
    assert "is not the directory pinned" in reason
    assert not [r for r in attack.log() if r["kind"] == "tool_call"
                and r["args"] == {"path": "etc/hostname"}]


def test_a_symlinked_workspace_is_pinned_at_its_target(attack: Attack) -> None:
    real, other = attack.root / "real-project", attack.root / "other"
    real.mkdir()
    other.mkdir()
    (real / "a.txt").write_text("real\n")
    (other / "a.txt").write_text("other\n")
    link = attack.root / "project"
    link.symlink_to(real)
    attack.use_workspace(link)
    assert f"a symlink to {real}" in attack.cli("status").stdout
    attack.mode("execute-with-confirmation")
    attack.script(plan(("fs.read", {"path": "a.txt"})), plan(("fs.read", {"path": "a.txt"})))
    first = json.loads(attack.cli("run", "read a.txt", "--json").stdout)
    assert first["results"][0]["stdout"] == "real\n"
    assert f"resolved to {real}" in attack.cli("status").stdout

    link.unlink()
    link.symlink_to(other)  # re-pointed between sessions
    done = attack.cli("run", "read a.txt", "--json")
    assert done.returncode != 0 and "other\n" not in done.stdout
    assert "is not the directory pinned" in done.stderr and str(other) in done.stderr


def test_chat_holds_to_the_allow_list_and_the_pin(attack: Attack) -> None:
    """`adjutant chat` on a real terminal: a refused tool, then a workspace swapped while
    the session is open; the session goes on and says why each time."""
    import pexpect

    (attack.work / "a.txt").write_text("first\n")
    attack.mode("execute-with-confirmation")
    attack.profile(tools=["fs.read"])
    attack.script(plan(("fs.write", {"path": "w.txt", "content": "x"})),
                  plan(("fs.read", {"path": "a.txt"})),
                  plan(("fs.read", {"path": "etc/hostname"})))
    child = attack.spawn("chat", timeout=30)
    try:
        prompt = "execute-with-confirmation> "
        child.expect_exact(prompt)
        child.sendline("write a file")  # (naming no file: no context question)
        child.expect_exact(prompt)
        assert "fs.write is not in the tool allow-list" in str(child.before)
        child.sendline("read the note")
        child.expect_exact(prompt)
        assert "first" in str(child.before)
        swap_for_root(attack.work)
        child.sendline("read the hostname")
        child.expect_exact(prompt)
        shown = str(child.before)
        assert "refusing to work" in shown and "adjutant workspace trust" in shown
        child.sendline("/quit")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert not (attack.root / "work" / "w.txt").exists()
    records = attack.log()
    assert not ran(records, "fs.write")
    assert not [r for r in records if r["kind"] == "tool_call"
                and r["args"] == {"path": "etc/hostname"}]
