"""The standard tool checks, one class per tool, with example calls valid on this machine."""

import socket
import subprocess
from collections.abc import Iterator

import pytest

from adjutant.testing.conformance import ToolConformance
from adjutant_hookspecs import ToolCall
from adjutant_system import NetCheckPort, ProcKill, ProcList, ShellExec, SysInfo


class TestShellExec(ToolConformance):
    @pytest.fixture
    def tool(self) -> ShellExec:
        return ShellExec()


class TestProcList(ToolConformance):
    @pytest.fixture
    def tool(self) -> ProcList:
        return ProcList()


class TestProcKill(ToolConformance):
    @pytest.fixture
    def tool(self) -> ProcKill:
        return ProcKill()

    @pytest.fixture
    def calls(self, tool: ProcKill) -> Iterator[list[ToolCall]]:
        """The declared examples name pids that need not exist: real `sleep`s instead."""
        children = [subprocess.Popen(["sleep", "30"]) for _ in tool.declaration.examples]
        try:
            yield [ToolCall(tool="proc.kill", args={"pid": c.pid}) for c in children]
        finally:
            for child in children:
                child.kill()
                child.wait()


class TestSysInfo(ToolConformance):
    @pytest.fixture
    def tool(self) -> SysInfo:
        return SysInfo()


class TestNetCheckPort(ToolConformance):
    @pytest.fixture
    def tool(self) -> NetCheckPort:
        return NetCheckPort()

    @pytest.fixture
    def calls(self) -> Iterator[list[ToolCall]]:
        """A real listening socket, so the example answers "listening" here."""
        with socket.socket() as server:
            server.bind(("127.0.0.1", 0))
            server.listen()
            port = server.getsockname()[1]
            yield [ToolCall(tool="net.check_port", args={"port": port}),
                   ToolCall(tool="net.check_port", args={"port": port, "host": "::1"})]
