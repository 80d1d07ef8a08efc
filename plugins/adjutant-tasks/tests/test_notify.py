"""Notifications: always on the bus; on the desktop through ``notify-send`` where the
machine has it (an argv, never a shell), skipped silently where it has not; throttled
by tier (an hourly cap), quiet after a dismissal for the cooldown, and dismissals
remembered across a restart. A task that waits for approval notifies."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

import pytest
from taskkit import kernel_at

import adjutant_files
import adjutant_guard
import adjutant_write_gate
from adjutant_tasks import Runner, tasks_settings
from adjutant_tasks._notify import COOLDOWN_S, HOURLY_CAP, Notifier

pytestmark = pytest.mark.anyio


def _desktop(tmp_path: Path) -> tuple[str, Path]:
    """A ``notify-send`` that records its argv (this machine has no desktop)."""
    seen = tmp_path / "shown.jsonl"
    program = tmp_path / "bin" / "notify-send"
    program.parent.mkdir()
    program.write_text(f"#!{sys.executable}\nimport json, sys\n"
                       f"open({str(seen)!r}, 'a').write(json.dumps(sys.argv[1:]) + '\\n')\n")
    program.chmod(program.stat().st_mode | stat.S_IXUSR)
    return str(program), seen


def _shown(seen: Path) -> list[list[str]]:
    return [json.loads(line) for line in seen.read_text().splitlines()] if seen.exists() \
        else []


async def test_tiers_caps_cooldowns_and_dismissals_that_survive_a_restart(
        tmp_path: Path) -> None:
    program, seen = _desktop(tmp_path)
    clock = [1_000_000.0]
    home = tmp_path / "home"
    async with kernel_at(home) as (h, _):
        notes = Notifier(h.kernel, clock=lambda: clock[0], desktop=program)
        hostile = "$(touch pwned); rm -rf ~"
        first = await notes.send({"title": hostile, "body": "b", "priority": "low"})
        assert first == {"shown": True, "throttled": "", "priority": "low", "key": hostile}
        assert _shown(seen)[0][-2:] == [hostile, "b"]  # an argv: the title is data
        assert not list(tmp_path.glob("pwned"))
        for i in range(HOURLY_CAP["low"] - 1):
            assert (await notes.send({"title": f"n{i}", "priority": "low"}))["shown"]
        capped = await notes.send({"title": "one more", "priority": "low"})
        assert not capped["shown"] and "3 low notifications this hour" in capped["throttled"]
        assert (await notes.send({"title": "urgent", "priority": "urgent"}))["shown"]
        clock[0] += 3601
        assert (await notes.send({"title": "later", "priority": "low"}))["shown"]
        await notes.dismiss("nagging")
        quiet = await notes.send({"title": "x", "key": "nagging"})
        assert not quiet["shown"] and "dismissed" in quiet["throttled"]
        published = [e.event for e in h.events.envelopes
                     if type(e.event).__name__ == "Notification"]
        assert len(published) == 7  # all of them on the bus, the held ones marked
        assert [n.title for n in published if n.throttled] == ["one more", "x"]
    async with kernel_at(home) as (h, _):  # a restart: the dismissal is remembered
        notes = Notifier(h.kernel, clock=lambda: clock[0], desktop=program)
        assert not (await notes.send({"title": "x", "key": "nagging"}))["shown"]
        clock[0] += COOLDOWN_S + 1
        assert (await notes.send({"title": "x", "key": "nagging"}))["shown"]
        missing = Notifier(h.kernel, clock=lambda: clock[0], desktop=None)
        none = await missing.send({"title": "no desktop"})
        assert none["shown"] is False and none["throttled"] == ""  # skipped silently


async def test_a_task_waiting_for_approval_notifies(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    program, seen = _desktop(tmp_path)
    monkeypatch.setenv("PATH", f"{Path(program).parent}{os.pathsep}{os.environ['PATH']}")
    work = tmp_path / "work"
    work.mkdir()
    async with kernel_at(tmp_path / "home", adjutant_files, adjutant_guard,
                         adjutant_write_gate, mode="execute-with-confirmation") as (h, plugin):
        task, _ = await plugin.submit("tool.call", {"tool": "fs.write", "cwd": str(work),
                                                    "args": {"path": "x.txt", "content": "x"}})
        await Runner(h.kernel, plugin.queue, tasks_settings(h.kernel)).serve(until_idle=True)
        (argv,) = _shown(seen)
        assert argv[-2] == "Adjutant waits for your approval"
        assert f"adjutant tasks approve {task.id}" in argv[-1]
