"""The `adjutant` command as a user drives it: a real pseudo-terminal (pexpect), the
real installed plugins (files pack, guard, write-gate, LMDB log), and a scripted model
whose replies come from a file (`adjutant.testing.scriptfile`)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from adjutant.testing import on_terminal

pexpect = pytest.importorskip("pexpect")
pytest.importorskip("adjutant_files")
ADJUTANT = str(Path(sys.executable).with_name("adjutant"))


@pytest.fixture
def user(tmp_path: Path) -> dict[str, Any]:
    """A home, a project workspace, a script file and a plugin dir exposing the
    scripted provider through a real entry point."""
    home, work, plugins = tmp_path / "home", tmp_path / "work", tmp_path / "plugins"
    for d in (home / "profiles", work, plugins / "scripted_cli-0.dist-info"):
        d.mkdir(parents=True)
    (plugins / "scripted_cli-0.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: scripted-cli\nVersion: 0\n")
    (plugins / "scripted_cli-0.dist-info" / "entry_points.txt").write_text(
        "[adjutant]\nscripted = adjutant.testing.scriptfile\n")
    (home / "profiles" / "default.json").write_text(json.dumps(
        {"model": {"provider": "script-file", "model": "script"}}))
    script = tmp_path / "script.json"
    env = {**os.environ, "ADJUTANT_HOME": str(home), "ADJUTANT_WORKSPACE": str(work),
           "ADJUTANT_SCRIPT": str(script), "PYTHONPATH": str(plugins), "NO_COLOR": "1",
           "XDG_CACHE_HOME": str(tmp_path / "cache"), "TERM": "dumb"}
    return {"env": env, "work": work, "script": script}


def script(user: dict[str, Any], *replies: Any) -> None:
    user["script"].write_text(json.dumps(list(replies)))
    Path(f"{user['script']}.pos").unlink(missing_ok=True)


def plan(*steps: tuple[str, dict[str, Any]]) -> str:
    return json.dumps({"type": "plan", "steps": [{"tool": t, "args": a} for t, a in steps]})


def adjutant(user: dict[str, Any], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([ADJUTANT, *args], env=user["env"], cwd=user["work"],
                          capture_output=True, text=True, timeout=120, check=False)


def spawn(user: dict[str, Any], *args: str) -> Any:
    return on_terminal(ADJUTANT, list(args), env=user["env"], cwd=str(user["work"]),
                       encoding="utf-8", timeout=60)


def two_writes_at_the_plan_question(user: dict[str, Any], a: str, b: str) -> Any:
    """`run` of a plan writing a.txt and b.txt, in confirm mode, at the plan question."""
    assert adjutant(user, "mode", "execute-with-confirmation").returncode == 0
    script(user, plan(("fs.write", {"path": "a.txt", "content": a}),
                      ("fs.write", {"path": "b.txt", "content": b})))
    child = spawn(user, "run", "write two files")
    child.expect(r"\[x\] execute the plan, \[s\] step by step, \[d\] deny: ")
    return child


def test_approval_flow_with_an_edited_argument_and_a_denied_step(user: dict[str, Any]) -> None:
    child = two_writes_at_the_plan_question(user, "draft\n", "no\n")
    child.sendline("s")
    child.expect(r"step 1: Create a.txt \(1 line\)")  # plain words first
    child.expect("tool: fs.write")
    child.expect(r"\+draft")  # the dry-run preview is a unified diff
    child.expect(r"\[g\] grant, \[d\] deny, \[e\] edit arguments: ")
    child.sendline("e")
    child.expect("new arguments")
    child.sendcontrol("u")  # clear what is offered, type it all anew
    child.sendline('{"path": "a.txt", "content": "final\\n"}')
    child.expect(r"\+final")  # the edit is previewed again before it is granted
    child.expect("edit arguments: ")
    child.sendline("g")
    child.expect(r"step 2: Create b.txt \(1 line\)")
    child.expect("edit arguments: ")
    child.sendline("d")
    child.expect(pexpect.EOF)
    child.close()
    assert (user["work"] / "a.txt").read_text() == "final\n"
    assert not (user["work"] / "b.txt").exists()
    assert child.exitstatus == 4  # a step was denied


def test_a_bad_edit_is_asked_again(user: dict[str, Any]) -> None:
    assert adjutant(user, "mode", "execute-with-confirmation").returncode == 0
    script(user, plan(("fs.write", {"path": "a.txt", "content": "x\n"})))
    child = spawn(user, "run", "write a file")
    child.expect("edit arguments: ")
    child.sendline("e")
    child.expect("new arguments")
    child.sendline("{not json")
    child.expect("not JSON")
    child.expect("edit arguments: ")
    child.sendline("d")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 4 and not (user["work"] / "a.txt").exists()


def test_an_edit_starts_from_the_current_arguments(user: dict[str, Any]) -> None:
    """The arguments are offered as they are, to change in place (readline); an edit
    that changes nothing asks again rather than previewing the same step twice."""
    assert adjutant(user, "mode", "execute-with-confirmation").returncode == 0
    script(user, plan(("fs.write", {"path": "a.txt", "content": "draft\n"})))
    child = spawn(user, "run", "write a file")
    child.expect("edit arguments: ")
    child.sendline("e")
    child.expect(re.escape('new arguments (JSON): {"path": "a.txt", "content": "draft\\n"}'))
    child.sendline("")  # taken as offered: nothing changed
    child.expect("arguments unchanged; asked again")
    child.expect("edit arguments: ")
    child.sendline("e")
    child.expect("new arguments")
    # end of line, then replace the last word: draft\n"} -> final\n"}
    child.sendcontrol("e")
    child.send("\x7f" * len('draft\\n"}') + 'final\\n"}\r')
    child.expect(r"\+final")  # previewed again, with the edited content
    child.expect("edit arguments: ")
    child.sendline("g")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert (user["work"] / "a.txt").read_text() == "final\n"


def test_a_write_step_says_once_who_requires_the_approval(user: dict[str, Any]) -> None:
    """The mode, the guard and the write-gate each say "this writes, approve it": one
    line names them; a note that says more (outside the cage) is still shown."""
    assert adjutant(user, "mode", "execute-with-confirmation").returncode == 0
    script(user, plan(("fs.write", {"path": "a.txt", "content": "x\n"})))
    child = spawn(user, "run", "write a file")
    child.expect("edit arguments: ")
    shown = str(child.before)
    child.sendline("d")
    child.expect(pexpect.EOF)
    child.close()
    assert "approval required by: mode, guard, write-gate" in shown, shown
    assert "note:" not in shown, shown
    assert shown.count("needs your") == 0 and "confirm it" not in shown


def test_a_denied_plan_runs_nothing_and_the_log_says_denied(user: dict[str, Any]) -> None:
    child = two_writes_at_the_plan_question(user, "x\n", "y\n")
    child.sendline("d")
    child.expect("denied: plan denied")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 4 and not (user["work"] / "a.txt").exists()
    status = json.loads(adjutant(user, "status", "--json").stdout)
    assert status["last_tasks"][-1]["outcome"] == "denied"


def test_ctrl_c_interrupts_generation_and_the_session_goes_on(user: dict[str, Any]) -> None:
    slow = {"text": " ".join(["word"] * 200), "delay": 0.05}
    script(user, slow, json.dumps({"type": "response", "text": "still here"}))
    child = spawn(user, "chat")
    child.expect("> ")
    child.sendline("tell me a long story")
    child.expect("word")
    child.sendintr()
    child.expect("interrupted; the session goes on")
    child.expect("> ")
    child.sendline("are you there?")
    child.expect("still here")
    child.expect("> ")
    child.sendline("/quit")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def test_chat_status_is_what_adjutant_status_shows(user: dict[str, Any]) -> None:
    child = spawn(user, "chat")
    child.expect("> ")
    child.sendline("/status")
    child.expect("> ")
    shown = str(child.before).replace("\r\n", "\n")
    child.sendline("/quit")
    child.expect(pexpect.EOF)
    status = adjutant(user, "status").stdout
    assert "{" not in shown, shown  # no raw JSON
    for line in status.splitlines():
        if not line.startswith("cwd "):  # the memory figure differs between processes
            assert line in shown, (line, shown)
    assert "[propose] preset default (script-file:script)" in shown
    assert "policy guard (" in shown


def test_chat_includes_a_file_for_the_session_once_agreed(user: dict[str, Any]) -> None:
    (user["work"] / "notes.txt").write_text("hello\n")
    answer = json.dumps({"type": "response", "text": "it says hello"})
    script(user, answer, answer, answer)
    child = spawn(user, "chat")
    child.expect("> ")
    child.sendline("summarize notes.txt")
    child.expect(re.escape("Include this file in the context (notes.txt)?\r\n"
                           "[y]es, [s] yes for this session, [N]o: "))
    child.sendline("s")
    child.expect("context: .*selected_files")
    child.expect("it says hello")
    child.expect("> ")
    child.sendline("and what does notes.txt say now?")
    index = child.expect([r"including notes.txt \(allowed for this session\)", "Include this"])
    assert index == 0, "asked again after yes-for-this-session"
    child.expect("context: .*selected_files")
    child.expect("> ")
    child.sendline("/quit")
    child.expect(pexpect.EOF)
    child.close()
    prompts = [r for r in _log(user) if r["kind"] == "prompt"]
    assert [p["include"] for p in prompts] == [["notes.txt"], ["notes.txt"]]


def _log(user: dict[str, Any]) -> list[dict[str, Any]]:
    out = adjutant(user, "log", "tail", "-n", "1000", "--json").stdout
    return [json.loads(line)["body"] for line in out.splitlines() if line.strip()]


def test_chat_quick_actions_plan_and_mode(user: dict[str, Any]) -> None:
    script(user, plan(("fs.read", {"path": "notes.txt"})))
    (user["work"] / "notes.txt").write_text("hello\n")
    child = spawn(user, "chat")
    child.expect("> ")
    child.sendline("/summarize")
    child.expect(r"1\. fs.read")
    child.expect("> ")
    child.sendline("/plan")
    child.expect('"tool": "fs.read"')
    child.expect("> ")
    child.sendline("/mode execute-auto")
    child.expect(r"\[auto\]")
    child.expect("> ")
    child.sendeof()
    child.expect(pexpect.EOF)


@pytest.mark.parametrize("args", [["run"], ["mode", "bogus"], ["tools", "frobnicate"],
                                  ["no-such-command"]])
def test_bad_usage_exits_2(user: dict[str, Any], args: list[str]) -> None:
    done = adjutant(user, *args)
    assert done.returncode == 2, done.stderr
    assert "usage:" in done.stderr


def test_a_model_that_never_plans_exits_3(user: dict[str, Any]) -> None:
    script(user, "no", "still no", "nope")
    done = adjutant(user, "run", "--non-interactive", "do it")
    assert done.returncode == 3
    assert "no valid plan" in done.stderr


def test_a_reply_that_is_not_a_plan_is_said_to_be_unused_before_the_next(
        user: dict[str, Any]) -> None:
    """The model's text streams as it comes; a malformed reply (an invented file's
    contents, cut off) must not read as the answer: the CLI says it was not used."""
    (user["work"] / "notes.txt").write_text("buy milk\n")
    script(user, '{"type":"response","text":"The file says: invented', plan(
        ("fs.read", {"path": "notes.txt"})))
    done = adjutant(user, "run", "--non-interactive", "show me notes.txt")
    assert done.returncode == 0, done.stderr
    unused = done.stderr.index("not a valid plan, so not used")
    assert done.stderr.index("invented") < unused < done.stderr.index("plan step 1: fs.read")
    assert "asking again with a simpler prompt" in done.stderr


def test_a_step_without_a_preview_says_why(user: dict[str, Any]) -> None:
    """A step its tool's schema refuses (stop 53: a time limit past shell.exec's own) had
    been listed with nothing under it: the reason is shown."""
    (user["work"] / "notes.txt").write_text("buy milk\n")
    script(user, plan(("fs.read", {"path": "notes.txt", "no_such_argument": 7})))
    done = adjutant(user, "run", "--non-interactive", "show me notes.txt")
    assert done.returncode == 0, done.stderr
    shown = done.stderr[done.stderr.index("plan step 1: fs.read"):]
    assert "not runnable: schema" in shown and "no_such_argument" in shown, shown


def test_json_outputs_parse(user: dict[str, Any]) -> None:
    script(user, plan(("fs.read", {"path": "notes.txt"})))
    (user["work"] / "notes.txt").write_text("hello\n")
    run = json.loads(adjutant(user, "run", "--json", "--non-interactive", "read notes").stdout)
    assert run["status"] == "proposed" and run["plan"]["steps"][0]["tool"] == "fs.read"
    tools = json.loads(adjutant(user, "tools", "--json").stdout)
    assert {"fs.read", "fs.write"} <= {t["name"] for t in tools}
    shown = json.loads(adjutant(user, "tools", "show", "fs.read", "--json").stdout)
    assert shown["name"] == "fs.read" and "args_schema" in shown
    assert json.loads(adjutant(user, "mode", "--json").stdout) == {"mode": "propose-only"}
    status = json.loads(adjutant(user, "status", "--json").stdout)
    assert status["mode"] == "propose-only" and status["provider"] == "script-file"
    presets = json.loads(adjutant(user, "presets", "--json").stdout)
    assert presets["active"] == "default"


def test_non_interactive_never_widens_the_mode(user: dict[str, Any]) -> None:
    assert adjutant(user, "mode", "execute-with-confirmation").returncode == 0
    script(user, plan(("fs.write", {"path": "a.txt", "content": "x\n"})))
    done = adjutant(user, "run", "--non-interactive", "write it")
    assert done.returncode == 4, done.stderr
    assert "denied (non-interactive)" in done.stderr
    assert not (user["work"] / "a.txt").exists()


def test_replay_bundle_and_context(user: dict[str, Any]) -> None:
    (user["work"] / "notes.txt").write_text("hello\n")
    assert adjutant(user, "mode", "execute-auto").returncode == 0
    script(user, plan(("fs.read", {"path": "notes.txt"})))
    run = json.loads(adjutant(user, "run", "--json", "--non-interactive", "read notes").stdout)
    assert run["status"] == "executed" and run["results"][0]["stdout"] == "hello\n"
    again = adjutant(user, "replay", run["run_id"], "--dry-run", "--json")
    replayed = json.loads(again.stdout)
    assert again.returncode == 0 and replayed["status"] == "proposed" and replayed["text"]
    assert adjutant(user, "replay", "no-such-run").returncode == 1
    out = user["work"] / "bundle.tar.gz"
    assert adjutant(user, "bundle", "-o", str(out)).returncode == 0 and out.stat().st_size
    shown = json.loads(adjutant(user, "context", "--json").stdout)
    assert shown["cwd"] == str(user["work"])
    status = json.loads(adjutant(user, "status", "--json").stdout)
    assert [t["request"] for t in status["last_tasks"]][-1] == "read notes"
    assert status["last_tasks"][-1]["outcome"] == "executed"


def test_files_the_request_names_are_offered_for_the_context(user: dict[str, Any]) -> None:
    (user["work"] / "notes.txt").write_text("hello\n")
    (user["work"].parent / "secret.txt").write_text("no\n")
    script(user, json.dumps({"type": "response", "text": "it says hello"}))
    child = spawn(user, "run", "summarize notes.txt and ../secret.txt and missing.txt")
    child.expect(r"Include this file in the context \(notes.txt\)\? \[y/N\] ")
    child.sendline("y")
    child.expect("context: .*selected_files")
    child.expect("it says hello")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def test_a_tool_from_an_mcp_server_is_planned_previewed_and_approved(
        user: dict[str, Any]) -> None:
    """The user's whole path: add a real MCP server, then a request the model answers
    with one of its tools; the preview binds the call to the server's definition."""
    pytest.importorskip("adjutant_mcp")
    pytest.importorskip("mcp_server_time")
    added = adjutant(user, "mcp", "add", "time", "--", sys.executable, "-m", "mcp_server_time")
    assert added.returncode == 0, added.stderr
    assert adjutant(user, "mode", "execute-with-confirmation").returncode == 0
    step = plan(("mcp.time.get_current_time", {"timezone": "Asia/Tokyo"}))
    script(user, step, step)
    # a server's tools are open-world until you say otherwise: no network, no call
    offline = adjutant(user, "run", "what time is it in Tokyo?")
    assert offline.returncode == 4
    assert "grant 'network:mcp.time.get_current_time'" in offline.stderr
    granted = adjutant(user, "grant", "network:mcp.time.*", "--minutes", "5")
    assert granted.stdout.strip() == "network:mcp.time.*"
    child = spawn(user, "run", "what time is it in Tokyo?")
    child.expect("step 1: mcp.time.get_current_time")  # a tool with no summary: its name
    child.expect("is new: approve it once")
    child.expect("definition sha256:[0-9a-f]{16}, NEW")
    child.expect("edit arguments: ")
    child.sendline("g")
    child.expect("mcp.time.get_current_time: ok")
    child.expect("Asia/Tokyo")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    listed = json.loads(adjutant(user, "tools", "--json").stdout)
    assert {"name": "mcp.time.convert_time", "level": "destructive", "plugin": "mcp"} \
        .items() <= next(t for t in listed if t["name"] == "mcp.time.convert_time").items()
    revoked = adjutant(user, "grant", "--revoke", "network:mcp.time.*")
    assert revoked.stdout.strip() == "no grants in force"
    assert adjutant(user, "grant", "network:*").returncode == 2  # no blanket grant
