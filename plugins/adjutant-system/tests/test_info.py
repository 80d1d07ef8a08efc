"""sys.info and net.check_port against the real machine."""

from __future__ import annotations

import os
import socket
import sys
from pathlib import Path
from typing import Any

import pytest

from adjutant_hookspecs import ExecutionResult, ToolCall, ToolContext
from adjutant_system import NetCheckPort, SysInfo

pytestmark = pytest.mark.anyio


async def info(tmp_path: Path, **args: Any) -> ExecutionResult:
    return await SysInfo().execute(ToolCall(tool="sys.info", args=args),
                                   ToolContext(cwd=str(tmp_path)))


async def check(**args: Any) -> ExecutionResult:
    return await NetCheckPort().execute(ToolCall(tool="net.check_port", args=args),
                                        ToolContext(cwd="/"))


async def test_sys_info_reports_the_machine(tmp_path: Path) -> None:
    result = await info(tmp_path)
    keys = [line.split(":")[0].split(" (")[0] for line in result.stdout.splitlines()]
    assert {"os", "kernel", "machine", "up", "cpus", "memory", "disk", "python"} <= set(keys)
    assert f"disk ({tmp_path})" in result.stdout
    assert f"cpus: {os.cpu_count()}" in result.stdout


async def test_sys_info_sections_and_refusals(tmp_path: Path) -> None:
    result = await info(tmp_path, sections=["python"])
    assert result.stdout.startswith("python: ") and result.stdout.count("\n") == 1
    for bad in (["env"], "memory", []):
        assert "refused by rule `schema`" in (await info(tmp_path, sections=bad)).stderr


async def test_sys_info_leaks_nothing_from_the_environment(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ADJUTANT_TEST_TOKEN", "tok-987-secret")
    result = await info(tmp_path)
    assert "tok-987-secret" not in result.stdout
    for name, value in os.environ.items():
        # paths that sys.info reports anyway (the interpreter, the cwd) may share a
        # prefix with a variable such as VIRTUAL_ENV or TOX_WORK_DIR: that is no leak
        if len(value) > 12 and not sys.executable.startswith(value) \
                and not str(tmp_path).startswith(value):
            assert value not in result.stdout, name


async def test_check_port_sees_a_real_listener_and_its_absence() -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        port = server.getsockname()[1]
        bound_only = await check(port=port)
        assert bound_only.stdout == f"not listening: TCP 127.0.0.1:{port}\n"
        server.listen()
        result = await check(port=port)
        assert result.stdout == f"listening: TCP 127.0.0.1:{port} (bound to 127.0.0.1:{port})\n"
        v6 = await check(port=port, host="::1")
        assert v6.stdout.startswith("not listening")
    assert (await check(port=port)).stdout.startswith("not listening")


async def test_check_port_on_ipv6_and_wildcard() -> None:
    try:
        server = socket.socket(socket.AF_INET6)
        server.bind(("::1", 0))
    except OSError:
        pytest.skip("no IPv6 loopback here")
    with server, socket.socket() as wildcard:
        server.listen()
        port = server.getsockname()[1]
        assert (await check(port=port, host="::1")).stdout.startswith("listening: TCP [::1]")
        assert (await check(port=port)).stdout.startswith("not listening")
        wildcard.bind(("0.0.0.0", 0))
        wildcard.listen()
        other = wildcard.getsockname()[1]
        assert f"(bound to 0.0.0.0:{other})" in (await check(port=other)).stdout


@pytest.mark.parametrize("host", ["8.8.8.8", "localhost.evil.com", "localhost", "0.0.0.0",
                                  "127.0.0.2", "::ffff:8.8.8.8", 127])
async def test_check_port_refuses_other_hosts(host: object) -> None:
    tool = NetCheckPort()
    call = ToolCall(tool="net.check_port", args={"port": 80, "host": host})
    for result in (await tool.dry_run(call, ToolContext(cwd="/")),
                   await tool.execute(call, ToolContext(cwd="/"))):
        assert "refused by rule `loopback-only`" in result.stderr


@pytest.mark.parametrize("port", [0, 65536, -1, "80", True, 8.5])
async def test_check_port_refuses_bad_ports(port: object) -> None:
    assert "refused by rule `schema`" in (await check(port=port)).stderr
