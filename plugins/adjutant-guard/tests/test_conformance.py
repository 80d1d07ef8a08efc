"""The standard policy checks, over a spread of requests against real files."""

import os
from typing import Any

import pytest

from adjutant.testing.conformance import PolicyConformance
from adjutant_guard import Guard
from adjutant_hookspecs import PolicyRequest, ToolCall


class TestGuard(PolicyConformance):
    @pytest.fixture
    def policy(self) -> Guard:
        return Guard()

    @pytest.fixture
    def requests(self, world: Any) -> list[PolicyRequest]:
        os.symlink("../outside", world.cage / "out")
        os.symlink(world.home / ".ssh", world.cage / "keys")
        stuck = [ToolCall(tool="files.read", args={"path": "a.txt"})] * 2
        return [
            world.request(path="a.txt"),
            world.request(path="/etc/hostname"),
            world.request(path="keys/id_rsa"),
            world.request(path="a\x00b"),
            world.request(path="/proc/self/root/etc/passwd"),
            world.request(path="a.txt", history=stuck),
            world.write(path="sub/new.txt"),
            world.write(path="out/x"),
            world.write(path="../proj-evil/x"),
            world.write(path=".git/hooks/pre-commit"),
            world.write(path=str(world.home / ".bashrc"), cages=[world.home]),
            world.write("shell.run", argv=["ls"]),
            world.write("shell.run", argv=["env", "-i", "nice", "sudo", "id"]),
            world.write("shell.run", argv=["env", "--bogus", "ls"]),
            world.request("web.fetch", url="https://example.com"),
            world.request("web.fetch", url="https://example.com", grants=["network:web.fetch"]),
            world.request(
                "web.fetch", url="https://example.com", grants=["network:web.fetch"],
                mode="execute-auto",
            ),
            world.request(path="a.txt", mode="off"),
            world.request(path="a.txt", cages=[]),
        ]

    @pytest.mark.anyio
    async def test_spread_covers_every_decision(
        self, policy: Guard, requests: list[PolicyRequest]
    ) -> None:
        """Not a standard test: the spread above must exercise allow, ask and deny."""
        decisions = {(await policy.evaluate(r)).decision for r in requests}
        assert decisions == {"allow", "ask", "deny"}
