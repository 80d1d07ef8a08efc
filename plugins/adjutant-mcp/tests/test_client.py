"""The client side against real MCP servers: mount, pipeline, pins, lifecycle."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from adjutant.testing import ScriptedApprover
from adjutant_mcp import bridge_of

from .helpers import HOSTILE, call, harness, stdio, write_config

pytestmark = pytest.mark.anyio

TIME = stdio("-m", "mcp_server_time", "--local-timezone", "UTC")


async def test_time_server_is_mounted_with_its_schemas(tmp_path: Path) -> None:
    write_config(tmp_path, {"time": TIME})
    async with harness(tmp_path) as h:
        tools = {n: t.declaration for n, t in h.kernel.tools.items() if n.startswith("mcp.")}
        assert set(tools) == {"mcp.time.get_current_time", "mcp.time.convert_time"}
        convert = tools["mcp.time.convert_time"]
        assert set(convert.args_schema["required"]) == {"source_timezone", "time",
                                                        "target_timezone"}
        # nothing the user said otherwise: writing, destructive, open-world
        assert convert.safety.writes and convert.safety.level == "destructive"
        assert convert.safety.network
        assert convert.description.startswith("[MCP server 'time'; its own words, untrusted]")
    # the listing is cached: the next start mounts it without contacting the server
    async with harness(tmp_path) as h:
        assert "mcp.time.get_current_time" in h.kernel.tools
        assert bridge_of(h.kernel).connections["time"].state == "stopped"


async def test_open_world_tools_need_a_network_grant(tmp_path: Path) -> None:
    write_config(tmp_path, {"time": TIME})
    async with harness(tmp_path) as h:
        approver = ScriptedApprover(default="grant")
        result = await call(h, "mcp.time.get_current_time", approver, timezone="UTC")
        assert result.status == "denied"
        assert "grant 'network:mcp.time.get_current_time'" in result.stderr
        assert approver.asked == []


async def test_every_call_asks_until_the_user_says_a_tool_only_reads(tmp_path: Path) -> None:
    write_config(tmp_path, {"time": TIME})
    async with harness(tmp_path) as h:
        approver = ScriptedApprover(steps=["deny"])
        denied = await call(h, "mcp.time.get_current_time", approver, network=True,
                            timezone="UTC")
        assert denied.status == "denied"
        assert "definition" in (approver.asked[0].preview or "")
        assert "NEW" in (approver.asked[0].preview or "")
        granted = await call(h, "mcp.time.get_current_time", ScriptedApprover(steps=["grant"]),
                             network=True, timezone="Europe/Paris")
        assert granted.status == "ok", granted.stderr
        assert '"timezone": "Europe/Paris"' in granted.stdout
        # writing tools ask every time, pinned or not
        again = ScriptedApprover(steps=["grant"])
        assert (await call(h, "mcp.time.get_current_time", again, network=True,
                           timezone="UTC")).status == "ok"
        assert again.asked and "as you approved it before" in (again.asked[0].preview or "")

    write_config(tmp_path, {"time": {**TIME, "adjutant": {
        "readOnlyTools": ["get_current_time"], "localTools": ["get_current_time"]}}})
    async with harness(tmp_path) as h:
        quiet = ScriptedApprover()
        result = await call(h, "mcp.time.get_current_time", quiet, timezone="UTC")
        assert result.status == "ok", result.stderr
        assert quiet.asked == []  # read-only, local, and its definition is the approved one
        assert h.kernel.tools["mcp.time.convert_time"].declaration.safety.writes


async def test_a_read_only_tool_still_asks_once_for_a_definition_never_approved(
        tmp_path: Path) -> None:
    write_config(tmp_path, {"time": {**TIME, "adjutant": {
        "readOnlyTools": ["convert_time"], "localTools": ["convert_time"]}}})
    async with harness(tmp_path) as h:
        first = ScriptedApprover(steps=["grant"])
        args = {"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"}
        result = await call(h, "mcp.time.convert_time", first, **args)
        assert result.status == "ok", result.stderr
        assert "21:00" in result.stdout
        assert any("is new" in r for r in first.asked[0].reasons)
        second = ScriptedApprover()
        assert (await call(h, "mcp.time.convert_time", second, **args)).status == "ok"
        assert second.asked == []


async def test_invalid_arguments_never_reach_the_server(tmp_path: Path) -> None:
    write_config(tmp_path, {"time": TIME})
    async with harness(tmp_path):
        pass  # listed once; from now on mounted from the cache, started on first use
    async with harness(tmp_path) as h:
        result = await call(h, "mcp.time.convert_time", ScriptedApprover(default="grant"),
                            time="12:00")
        assert result.status == "denied"
        assert "invalid arguments" in result.stderr
        assert bridge_of(h.kernel).connections["time"].state == "stopped"  # never started


def _repository(path: Path) -> list[str]:
    """A repository with one commit and one unstaged change; the git command for it."""
    path.mkdir()
    git = ["git", "-C", str(path), "-c", "user.name=A", "-c", "user.email=a@example.com"]
    subprocess.run([*git, "init", "-q", "-b", "main"], check=True)
    (path / "a.txt").write_text("a\n")
    subprocess.run([*git, "add", "a.txt"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "first"], check=True)
    (path / "a.txt").write_text("b\n")
    return git


def _staged(git: list[str]) -> str:
    return subprocess.run([*git, "diff", "--cached", "--name-only"], check=True,
                          capture_output=True, text=True).stdout


async def test_git_server_on_a_temporary_repository(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    git = _repository(repo)
    write_config(tmp_path / "home", {"git": stdio(
        "-m", "mcp_server_git", "--repository", str(repo),
        readOnlyTools=["git_status", "git_log"], localTools=["git_status", "git_log"])})
    async with harness(tmp_path / "home") as h:
        assert {"mcp.git.git_status", "mcp.git.git_commit"} <= set(h.kernel.tools)
        status = await call(h, "mcp.git.git_status", ScriptedApprover(steps=["grant"]),
                            repo_path=str(repo))
        assert status.status == "ok", status.stderr
        assert "a.txt" in status.stdout
        add = await call(h, "mcp.git.git_add", ScriptedApprover(steps=["deny"]), network=True,
                         repo_path=str(repo), files=["a.txt"])
        assert add.status == "denied"
        assert _staged(git) == ""  # the denied write did nothing
        add = await call(h, "mcp.git.git_add", ScriptedApprover(steps=["grant"]), network=True,
                         repo_path=str(repo), files=["a.txt"])
        assert add.status == "ok", add.stderr
        assert _staged(git) == "a.txt\n"


@pytest.mark.skipif(shutil.which("npx") is None, reason="npx (Node.js) is not installed")
async def test_filesystem_server_from_npm(tmp_path: Path) -> None:
    root = tmp_path / "shared"
    root.mkdir()
    (root / "hello.txt").write_text("hello from disk\n")
    write_config(tmp_path / "home", {"filesystem": {
        "command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", str(root)],
        "adjutant": {"readOnlyTools": ["read_text_file"], "timeout": 120}}})
    async with harness(tmp_path / "home") as h:
        bridge = bridge_of(h.kernel)
        assert bridge.connections["filesystem"].state != "error", \
            bridge.connections["filesystem"].describe()
        assert "mcp.filesystem.write_file" in h.kernel.tools
        read = await call(h, "mcp.filesystem.read_text_file", ScriptedApprover(steps=["grant"]),
                          network=True, path=str(root / "hello.txt"))
        assert read.status == "ok", read.stderr
        assert "hello from disk" in read.stdout
        target = root / "new.txt"
        refused = await call(h, "mcp.filesystem.write_file", ScriptedApprover(steps=["deny"]),
                             network=True, path=str(target), content="x")
        assert refused.status == "denied" and not target.exists()
        written = await call(h, "mcp.filesystem.write_file", ScriptedApprover(steps=["grant"]),
                             network=True, path=str(target), content="approved\n")
        assert written.status == "ok", written.stderr
        assert target.read_text() == "approved\n"


@pytest.mark.skipif(shutil.which("npx") is None, reason="npx (Node.js) is not installed")
async def test_path_arguments_the_user_names_are_caged_by_the_guard(tmp_path: Path) -> None:
    """The server's own roots allow its whole directory; with ``pathArguments`` the
    guard judges the paths too, so a secret in there is refused in every mode."""
    root = tmp_path / "shared"
    root.mkdir()
    (root / "id_ed25519").write_text("PRIVATE KEY\n")
    (root / "notes.txt").write_text("fine\n")
    fs = {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", str(root)]}
    ours = {"readOnlyTools": ["read_text_file"], "localTools": ["read_text_file"],
            "timeout": 120}
    write_config(tmp_path / "home", {
        "open": {**fs, "adjutant": ours},
        "caged": {**fs, "adjutant": {**ours, "pathArguments": ["path", "paths"]}}})
    async with harness(tmp_path / "home") as h:
        caged = h.kernel.tools["mcp.caged.read_text_file"].declaration.args_schema
        assert caged["properties"]["path"]["x-adjutant-role"] == "path"
        assert h.kernel.tools["mcp.caged.read_multiple_files"].declaration.args_schema[
            "properties"]["paths"]["x-adjutant-role"] == "paths"
        grant = ScriptedApprover(default="grant")
        key = str(root / "id_ed25519")
        leaked = await call(h, "mcp.open.read_text_file", grant, mode="execute-auto", path=key)
        assert leaked.status == "ok" and "PRIVATE KEY" in leaked.stdout  # the server allows it
        refused = await call(h, "mcp.caged.read_text_file", grant, mode="execute-auto",
                             path=key)
        assert refused.status == "denied" and "SSH private key" in refused.stderr
        fine = await call(h, "mcp.caged.read_text_file", grant, mode="execute-auto",
                          path=str(root / "notes.txt"))
        assert fine.status == "ok" and "fine" in fine.stdout, fine.stderr


@pytest.mark.skipif(shutil.which("npx") is None, reason="npx (Node.js) is not installed")
async def test_a_handshake_era_server_announces_list_changes_on_the_session(
        tmp_path: Path) -> None:
    """server-everything (the TypeScript SDK, handshake-era protocol, no listen stream)
    registers more tools once the client has initialised and says so with a plain
    ``notifications/tools/list_changed``: it must reach the bridge's refresh."""
    from adjutant_mcp._config import ServerSpec
    from adjutant_mcp._connection import Connection

    changed = anyio.Event()

    async def on_changed() -> None:
        changed.set()

    spec = ServerSpec(name="everything", key="everything", transport="stdio", source="test",
                      command="npx", args=("-y", "@modelcontextprotocol/server-everything"),
                      timeout=120)
    async with anyio.create_task_group() as tg:
        connection = Connection(spec, spawn=tg.start_soon, logdir=tmp_path,
                                on_tools_changed=on_changed)
        try:
            await connection.ensure()
            assert not Connection._can_listen(connection.client)  # the handshake-era path
            with anyio.fail_after(30):
                await changed.wait()
            names = {tool.name for tool in await connection.list_tools()}
            assert {"echo", "simulate-research-query"} <= names, names
        finally:
            await connection.stop()


async def test_concurrent_first_calls_share_one_connection(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir()
    write_config(tmp_path / "home", {"h": stdio(HOSTILE, "hang", str(state),
                                                 readOnlyTools=["echo"], localTools=["echo"])})
    async with harness(tmp_path / "home") as h:
        bridge = bridge_of(h.kernel)
        await bridge.connections["h"].stop()
        starts_before = len((state / "starts").read_text().split())
        results = []

        async def one(i: int) -> None:
            results.append(await bridge.connections["h"].call("echo", {"text": str(i)}))

        async with anyio.create_task_group() as tg:
            for i in range(5):
                tg.start_soon(one, i)
        assert sorted(r.content[0].text for r in results) == [f"echo: {i}" for i in range(5)]
        assert len((state / "starts").read_text().split()) == starts_before + 1


async def test_a_server_that_never_answers_is_cancelled_at_its_timeout(tmp_path: Path) -> None:
    # 4 s: the timeout bounds the handshake too, and the server's Python start-up
    # (the MCP SDK's imports) took over 1.5 s on a loaded 2-core machine
    write_config(tmp_path, {"h": stdio(HOSTILE, "hang", timeout=4)})
    async with harness(tmp_path) as h:
        started = anyio.current_time()
        result = await call(h, "mcp.h.wait", ScriptedApprover(steps=["grant"]),
                             network=True, text="x")
        assert result.status == "cancelled", (result.status, result.stderr)
        assert "did not answer within 4 s" in result.stderr
        assert anyio.current_time() - started < 20
        # the connection survives a timed-out call
        echo = await call(h, "mcp.h.echo", ScriptedApprover(steps=["grant"]),
                             network=True, text="still here")
        assert echo.status == "ok" and "still here" in echo.stdout


async def test_a_crash_mid_call_is_reported_and_the_next_call_reconnects(
        tmp_path: Path) -> None:
    write_config(tmp_path, {"c": stdio(HOSTILE, "crash")})
    async with harness(tmp_path) as h:
        connection = bridge_of(h.kernel).connections["c"]
        result = await call(h, "mcp.c.boom", ScriptedApprover(steps=["grant"]),
                             network=True, text="x")
        assert result.status == "error"
        assert "closed the connection" in result.stderr
        assert connection.state == "error"
        assert "boom: dying mid-call" in connection.describe()  # the server's last words
        echo = await call(h, "mcp.c.echo", ScriptedApprover(steps=["grant"]),
                             network=True, text="back")
        assert echo.status == "ok", echo.stderr
        assert connection.state == "running"


async def test_a_server_that_cannot_start_says_why(tmp_path: Path) -> None:
    write_config(tmp_path, {"gone": {"command": str(tmp_path / "no-such-server")},
                            "quits": stdio("-c", "import sys; sys.stderr.write('no config "
                                           "file\\n'); sys.exit(2)")})
    async with harness(tmp_path) as h:
        bridge = bridge_of(h.kernel)
        gone, quits = bridge.connections["gone"], bridge.connections["quits"]
        assert gone.state == "error" and "not found on PATH" in gone.reason
        assert quits.state == "error" and "no config file" in quits.describe()
        assert not any(n.startswith("mcp.gone.") for n in h.kernel.tools)


async def test_stdio_children_are_gone_after_shutdown(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir()
    write_config(tmp_path / "home", {"t": TIME, "h": stdio(HOSTILE, "hang", str(state))})
    async with harness(tmp_path / "home") as h:
        for name in ("t", "h"):
            await bridge_of(h.kernel).connections[name].ensure()
        pid = int((state / "starts").read_text().split()[-1])
        assert Path(f"/proc/{pid}").exists()
    await anyio.sleep(0.2)
    assert not _running(pid)


def _running(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def test_hostile_server_script_is_valid_python() -> None:
    subprocess.run([sys.executable, "-m", "py_compile", HOSTILE], check=True)


async def test_a_server_that_died_while_idle_is_restarted_on_next_use(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir()
    write_config(tmp_path / "home", {"h": stdio(HOSTILE, "hang", str(state))})
    async with harness(tmp_path / "home") as h:
        await bridge_of(h.kernel).connections["h"].ensure()
        pid = int((state / "starts").read_text().split()[-1])
        os.kill(pid, signal.SIGKILL)
        with anyio.fail_after(10):
            while _running(pid):  # noqa: ASYNC110 - polls /proc
                await anyio.sleep(0.05)
        echo = await call(h, "mcp.h.echo", ScriptedApprover(steps=["grant"]), network=True,
                          text="again")
        assert echo.status == "ok", echo.stderr
        assert len((state / "starts").read_text().split()) == 2


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def test_streamable_http_server_with_headers(tmp_path: Path) -> None:
    port = _free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    write_config(tmp_path, {"web": {"type": "http", "url": url,
                                    "headers": {"Authorization": "Bearer s3cret"}}},
                 shape="servers")
    async with await anyio.open_process([sys.executable, HOSTILE, "http", str(port)],
                                        stderr=subprocess.DEVNULL) as server:
        try:
            await _wait_for_port(port)
            async with harness(tmp_path) as h:
                connection = bridge_of(h.kernel).connections["web"]
                assert connection.spec.transport == "http"
                assert {"mcp.web.echo", "mcp.web.whoami"} <= set(h.kernel.tools)
                echo = await call(h, "mcp.web.echo", ScriptedApprover(steps=["grant"]),
                                  network=True, text="over http")
                assert echo.status == "ok" and "echo: over http" in echo.stdout
                who = await call(h, "mcp.web.whoami", ScriptedApprover(steps=["grant"]),
                                 network=True)
                assert who.stdout == "Bearer s3cret"
        finally:
            server.kill()


async def test_an_http_server_that_is_down_says_so(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{_free_port()}/mcp"
    write_config(tmp_path, {"web": {"url": url}})
    async with harness(tmp_path) as h:
        connection = bridge_of(h.kernel).connections["web"]
        assert connection.state == "error"
        assert f"nothing answers at {url}" in connection.reason


async def _wait_for_port(port: int) -> None:
    with anyio.fail_after(30):
        while True:
            try:
                await (await anyio.connect_tcp("127.0.0.1", port)).aclose()
                return
            except OSError:
                await anyio.sleep(0.1)


async def test_the_user_cancelling_a_run_cancels_the_call(tmp_path: Path) -> None:
    write_config(tmp_path, {"h": stdio(HOSTILE, "hang", localTools=["wait", "echo"])})
    async with harness(tmp_path) as h:
        h.approver = ScriptedApprover(default="grant")
        await h.set_mode("execute-with-confirmation")
        outcomes = []

        async def run() -> None:
            outcomes.append(await h.call("mcp.h.wait", caller="test", text="x"))

        async with anyio.create_task_group() as tg:
            tg.start_soon(run)
            with anyio.fail_after(20):
                while bridge_of(h.kernel).connections["h"].state != "running":  # noqa: ASYNC110
                    await anyio.sleep(0.05)
            await anyio.sleep(0.5)  # the call is in flight
            h.copilot.cancel()
        assert outcomes[0].status == "cancelled"
        echo = await call(h, "mcp.h.echo", ScriptedApprover(steps=["grant"]), text="next")
        assert echo.status == "ok"


async def test_the_users_worked_examples_reach_the_planner(tmp_path: Path) -> None:
    write_config(tmp_path, {"time": {**TIME, "adjutant": {"examples": {
        "get_current_time": {"request": "what time is it in Europe/Paris?",
                             "args": {"timezone": "Europe/Paris"}},
        "convert_time": {"request": "convert 9:00 to Tokyo time",  # "Asia/Tokyo" unstated
                         "args": {"source_timezone": "UTC", "time": "09:00",
                                  "target_timezone": "Asia/Tokyo"}}}}}})
    async with harness(tmp_path) as h:
        declaration = h.kernel.tools["mcp.time.get_current_time"].declaration
        assert declaration.examples == ({"timezone": "Europe/Paris"},)
        copilot = h.copilot
        request, _ = copilot._request("what time is it in Lima?", await copilot.bulletin(),
                                      False, "")
        prompt = (request.system or "") + request.prompt
        assert ('Request: what time is it in Europe/Paris?\nAnswer: {"type":"plan","steps":'
                '[{"tool":"mcp.time.get_current_time","args":{"timezone":"Europe/Paris"}}]}'
                in prompt)
        # an example whose request does not state its values would teach the model to
        # invent them: the planner leaves it out
        assert "Asia/Tokyo" not in prompt


async def test_a_server_that_never_answers_the_handshake_is_ended(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir()
    write_config(tmp_path / "home", {"m": stdio(HOSTILE, "mute", str(state), timeout=1)})
    async with harness(tmp_path / "home") as h:
        connection = bridge_of(h.kernel).connections["m"]
        assert connection.state == "error"
        assert "no answer to the MCP handshake within 1 s" in connection.reason
        first = int((state / "starts").read_text().split()[0])
        with anyio.fail_after(10):
            while _running(first):  # noqa: ASYNC110 - polls /proc
                await anyio.sleep(0.05)
        # the next use tries again, and fails the same clear way, without hanging
        with anyio.fail_after(15), pytest.raises(Exception, match="handshake within 1 s"):
            await connection.ensure()
        assert len((state / "starts").read_text().split()) == 2
