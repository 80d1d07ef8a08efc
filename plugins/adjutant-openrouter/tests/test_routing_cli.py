"""The router through `adjutant run` on a terminal: a long request goes to the OpenRouter
preset the profile set up only after a yes showing its cost; what OpenRouter reports it
cost is counted, and the next request over the day's cap is refused with the figures
before anything is sent."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from adjutant.testing import on_terminal

from .fake_openrouter import FakeOpenRouter

pexpect = pytest.importorskip("pexpect", reason="drives `adjutant run` on a terminal")
pytest.importorskip("adjutant_lmdb", reason="the spend is kept across processes in the "
                    "lmdb store (this runs in the integration environment)")

KEY = "sk-or-v1-test"
LONG = "summarize the history of the printing press for me " * 12  # ~150 tokens
REPLY = ('{"type":"response",', '"text":"printed by the strong model"}')


def adjutant(home: Path, server: FakeOpenRouter, *args: str) -> Any:
    env = {"ADJUTANT_HOME": str(home), "OPENROUTER_API_KEY": KEY,
           "ADJUTANT_OPENROUTER_URL": server.url, "NO_COLOR": "1", "PATH": "/usr/bin:/bin",
           "HOME": str(home)}
    return on_terminal(sys.executable, ["-m", "adjutant.cli", *args], env=env,
                       cwd=str(home), encoding="utf-8", timeout=60)


def test_a_long_request_goes_remote_after_a_yes_and_the_budget_holds(tmp_path: Path) -> None:
    (tmp_path / "profiles").mkdir()
    (tmp_path / "profiles" / "default.json").write_text(json.dumps({
        "models": {"strong": {"provider": "openrouter", "model": "openai/gpt-4o-mini",
                              "prompt_cost_per_mtok": 0.15,
                              "completion_cost_per_mtok": 0.6}},
        "router": {"escalate_to": "strong", "long_tokens": 100}}))
    with FakeOpenRouter(REPLY) as server:
        child = adjutant(tmp_path, server, "run", LONG)
        child.expect(r"Send it to strong \(openrouter:openai/gpt-4o-mini, off this machine; "
                     r"up to [\d,]+ tokens, ~\$0\.\d{4}\)\? \[y/N\] ")
        assert not server.requests  # nothing left before the yes
        child.sendline("y")
        child.expect("this one went to strong")
        child.expect("printed by the strong model")
        child.expect(pexpect.EOF)
        child.close()
        assert child.exitstatus == 0
        sent = server.requests[-1].json()
        assert sent["usage"] == {"include": True} and "printing press" in json.dumps(sent)

        status = adjutant(tmp_path, server, "status")
        status.expect(r"spent today: strong [\d,]+ tokens, \$0\.0\d{3} \(1 calls\)")
        status.expect(pexpect.EOF)

        # a day's cap of half as much again as the first call cost: the second (about
        # as costly) would pass it, so it is refused before it is sent
        spent = json.loads(subprocess.run(
            [sys.executable, "-m", "adjutant.cli", "status", "--json"], env=status.env,
            cwd=tmp_path, capture_output=True, text=True, check=True).stdout)["spent"]
        cost = spent["windows"]["day"]["cost"]
        assert cost > 0  # OpenRouter's own figure, counted
        profile = json.loads((tmp_path / "profiles" / "default.json").read_text())
        profile["budgets"] = {"day": {"cost_usd": cost * 1.5}}
        (tmp_path / "profiles" / "default.json").write_text(json.dumps(profile))
        again = adjutant(tmp_path, server, "run", LONG)
        again.expect(r"\[y/N\] ")
        again.sendline("y")
        again.expect(r"over budget on strong .*this day has spent")
        again.expect(pexpect.EOF)
        again.close()
        assert again.exitstatus == 4 and len(server.requests) == 1


@pytest.mark.parametrize("answer", ["n", ""])
def test_no_keeps_it_off_the_network(tmp_path: Path, answer: str) -> None:
    (tmp_path / "profiles").mkdir()
    (tmp_path / "profiles" / "default.json").write_text(json.dumps({
        "model": {"provider": "openrouter-missing"},  # so the local model never loads
        "models": {"strong": {"provider": "openrouter", "model": "openai/gpt-4o-mini"}},
        "router": {"escalate_to": "strong", "long_tokens": 100}}))
    with FakeOpenRouter(REPLY) as server:
        child = adjutant(tmp_path, server, "run", LONG)
        child.expect(r"\[y/N\] ")
        child.sendline(answer)
        child.expect("stays on default")
        child.expect(pexpect.EOF)
        assert not server.requests
