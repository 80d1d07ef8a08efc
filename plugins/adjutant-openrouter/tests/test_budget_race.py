"""Budgets across processes, with real `adjutant` processes on one data home (the LMDB
store) against the fake OpenRouter: four racing for the last call a day's cap allows
send exactly one request, and a process SIGKILLed between reserving its estimate and
settling it holds the budget only while it lives."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from .fake_openrouter import FakeOpenRouter

pytest.importorskip("adjutant_lmdb", reason="the spend is kept across processes in the "
                    "lmdb store (this runs in the integration environment)")

KEY = "sk-or-v1-test"
REPLY = ('{"type":"response",', '"text":"sent by the one that fit"}')
PROMPT = "say hello to the printing press"


def setup(home: Path, budgets: dict[str, Any]) -> None:
    (home / "profiles").mkdir(exist_ok=True)
    (home / "profiles" / "default.json").write_text(json.dumps({
        "model": {"provider": "openrouter", "model": "openai/gpt-4o-mini",
                  "prompt_cost_per_mtok": 0.15, "completion_cost_per_mtok": 0.6},
        "budgets": budgets}))


def start(home: Path, server: FakeOpenRouter, *args: str) -> subprocess.Popen[str]:
    env = {"ADJUTANT_HOME": str(home), "OPENROUTER_API_KEY": KEY,
           "ADJUTANT_OPENROUTER_URL": server.url, "NO_COLOR": "1", "PATH": "/usr/bin:/bin",
           "HOME": str(home)}
    return subprocess.Popen([sys.executable, "-m", "adjutant.cli", *args], env=env,
                            cwd=home, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)


def adjutant(home: Path, server: FakeOpenRouter, *args: str) -> tuple[int, str]:
    child = start(home, server, *args)
    out, _ = child.communicate(timeout=120)
    return child.returncode, out


def estimate_of_one_call(home: Path, server: FakeOpenRouter) -> int:
    """What the budget check estimates one such call at, as the refusal says it (a
    request cap of 1 token refuses it before anything is sent)."""
    setup(home, {"request": {"tokens": 1}})
    code, out = adjutant(home, server, "run", PROMPT)
    found = re.search(r"this request alone would need up to ([\d,]+) tokens", out)
    assert code == 4 and found, out
    assert not server.requests
    return int(found.group(1).replace(",", ""))


def spent(home: Path, server: FakeOpenRouter) -> dict[str, Any]:
    code, out = adjutant(home, server, "status", "--json")
    assert code == 0, out
    return json.loads(out)["spent"]  # type: ignore[no-any-return]


def day_spent(home: Path, server: FakeOpenRouter) -> dict[str, Any]:
    return spent(home, server)["windows"]["day"]  # type: ignore[no-any-return]


def test_four_processes_racing_for_the_last_call_send_exactly_one(tmp_path: Path) -> None:
    with FakeOpenRouter(REPLY, delay=1.0) as server:  # each call in flight ~2 s
        planned = estimate_of_one_call(tmp_path, server)
        # room for one call's estimate, not for a second beside the first's real spend
        setup(tmp_path, {"day": {"tokens": planned + 100}})
        racers = [start(tmp_path, server, "run", PROMPT) for _ in range(4)]
        results = [(child.communicate(timeout=180)[0], child.returncode)
                   for child in racers]
        codes = sorted(code for _, code in results)
        assert codes == [0, 4, 4, 4], results
        assert len(server.requests) == 1  # exactly one left the machine
        for out, code in results:
            if code == 4:
                assert re.search(r"over budget on default .*this day has spent [\d,]+ "
                                 r"tokens.*budgets\.day", out), out
            else:
                assert "sent by the one that fit" in out
        day = day_spent(tmp_path, server)
        # the winner's reservation was replaced by what OpenRouter reported it spent
        assert 0 < day["tokens"] < planned and day["cost"] > 0


def test_a_process_killed_between_reserve_and_settle_holds_nothing(tmp_path: Path) -> None:
    with FakeOpenRouter(REPLY, delay=30.0) as server:  # the first call hangs
        planned = estimate_of_one_call(tmp_path, server)
        setup(tmp_path, {"day": {"tokens": planned + 100}})
        first = start(tmp_path, server, "run", PROMPT)
        deadline = time.monotonic() + 120
        while not server.requests:  # reserved, and its request is at OpenRouter
            assert first.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        seen = spent(tmp_path, server)
        assert seen["windows"]["day"]["tokens"] == planned  # another process counts it
        assert seen["held"] == {"tokens": planned, "cost": seen["windows"]["day"]["cost"],
                                "calls": 1} and not seen["today"]  # held, not yet spent
        code, out = adjutant(tmp_path, server, "status")
        assert f"held for 1 call(s) under way: {planned:,} tokens" in out, out
        code, out = adjutant(tmp_path, server, "run", PROMPT)
        assert code == 4 and f"this day has spent {planned:,} tokens" in out, out
        assert len(server.requests) == 1

        os.kill(first.pid, signal.SIGKILL)  # between reserve and settle
        first.communicate(timeout=30)
        assert first.returncode == -signal.SIGKILL
        server.delay = 0.0
        after = spent(tmp_path, server)
        assert after["windows"]["day"]["tokens"] == 0 and after["held"] is None  # nothing
        code, out = adjutant(tmp_path, server, "run", PROMPT)
        assert code == 0 and "sent by the one that fit" in out, out
        assert len(server.requests) == 2
        day = day_spent(tmp_path, server)
        assert 0 < day["tokens"] < planned
