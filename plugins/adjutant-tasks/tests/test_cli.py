"""``adjutant tasks ...`` as a user runs it: a real ``adjutant`` process on a data home
whose queue a kernel filled before (real LMDB), ``--json`` everywhere, errors for
unknown ids, cancel and retry with and without a live runner, and watch."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from taskkit import kernel_at

from adjutant_tasks import Runner, tasks_settings

KIT = Path(__file__).parent / "crashkit.py"


def adjutant(home: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ADJUTANT_")}
    env.update(ADJUTANT_HOME=str(home), NO_COLOR="1")
    done = subprocess.run([sys.executable, "-m", "adjutant.cli", *args], text=True,
                          capture_output=True, env=env, timeout=120, check=False)
    if check:
        assert done.returncode == 0, done.stderr
    return done


def _fill(home: Path) -> dict[str, str]:
    async def fill() -> dict[str, str]:
        async with kernel_at(home) as (h, plugin):
            done, _ = await plugin.submit("test.steps", {"n": 2})
            failed, _ = await plugin.submit("test.broken", {})
            await Runner(h.kernel, plugin.queue, tasks_settings(h.kernel)).serve(
                until_idle=True)
            later, _ = await plugin.submit("test.steps", {"n": 1}, not_before=4e9)
            return {"done": done.id, "failed": failed.id, "later": later.id}
    return anyio.run(fill)


@pytest.fixture(scope="module")
def filled(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    home = tmp_path_factory.mktemp("cli") / "home"
    return home, _fill(home)


def test_list_and_show(filled: tuple[Path, dict[str, str]]) -> None:
    home, ids = filled
    listed = json.loads(adjutant(home, "tasks", "list", "--json").stdout)
    assert {t["id"]: t["status"] for t in listed} == {
        ids["done"]: "done", ids["failed"]: "failed", ids["later"]: "queued"}
    assert listed[0]["id"] == ids["later"]  # newest first
    text = adjutant(home, "tasks", "list").stdout
    assert ids["failed"] in text and "the input file is not a PDF" in text
    open_only = json.loads(adjutant(home, "tasks", "list", "--status", "open",
                                   "--json").stdout)
    assert [t["id"] for t in open_only] == [ids["later"]]
    shown = json.loads(adjutant(home, "tasks", "show", ids["done"][:14], "--json").stdout)
    assert shown["id"] == ids["done"] and shown["outputs"]["steps"] == 2
    assert shown["input_hash"] and Path(shown["artifacts"]).name == ids["done"]
    human = adjutant(home, "tasks", "show", ids["done"]).stdout
    assert "status:          done" in human and '"n": 2' in human


def test_unknown_ids_and_wrong_states_are_clear_errors(
        filled: tuple[Path, dict[str, str]]) -> None:
    home, ids = filled
    for action in ("show", "cancel", "retry", "watch"):
        bad = adjutant(home, "tasks", action, "ffffffffffff", check=False)
        assert bad.returncode == 1, (action, bad.stdout, bad.stderr)
        assert f"adjutant tasks {action}: error: no task 'ffffffffffff'" in bad.stderr
    done = adjutant(home, "tasks", "cancel", ids["done"], check=False)
    assert done.returncode == 1 and "is done; cancel takes a task that is queued" in \
        done.stderr
    missing = adjutant(home, "tasks", check=False)
    assert missing.returncode == 2 and "name an action" in missing.stderr


def test_cancel_and_retry_without_a_runner(tmp_path: Path) -> None:
    home = tmp_path / "home"
    ids = _fill(home)
    cancelled = json.loads(adjutant(home, "tasks", "cancel", ids["later"], "--json").stdout)
    assert cancelled["status"] == "cancelled" and cancelled["error"] == "cancelled by the user"
    retried = json.loads(adjutant(home, "tasks", "retry", ids["failed"], "--json").stdout)
    assert retried["status"] == "queued" and retried["attempts"] == 0
    assert retried["error"] is None
    # `tasks run` in a process without the test capabilities: it fails, saying why
    adjutant(home, "tasks", "run", "--until-idle")
    shown = json.loads(adjutant(home, "tasks", "show", ids["failed"], "--json").stdout)
    assert shown["status"] == "failed"
    assert "no task capability 'test.broken' is registered" in shown["error"]
    assert json.loads(adjutant(home, "tasks", "list", "--status", "open",
                               "--json").stdout) == []


def test_cancel_through_a_live_runner_and_watch(tmp_path: Path) -> None:
    home = tmp_path / "home"
    # 400 steps (20 s): long enough for two CLI processes to start on a loaded machine
    runner = subprocess.Popen([sys.executable, str(KIT), str(home), "queue-and-run", "400"],
                              text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert runner.stdout is not None
        ids: dict[str, Any] = json.loads(runner.stdout.readline())
        log = Path(ids["steps_dir"]) / "steps.log"
        deadline = time.monotonic() + 30
        while not (log.exists() and log.read_text().count("\n") >= 2):
            assert time.monotonic() < deadline, "the task did not start"
            time.sleep(0.02)
        watcher = subprocess.Popen(
            [sys.executable, "-m", "adjutant.cli", "tasks", "watch", ids["steps"]],
            text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            env={**os.environ, "ADJUTANT_HOME": str(home), "NO_COLOR": "1"})
        time.sleep(1.0)
        cancelled = adjutant(home, "tasks", "cancel", ids["steps"])
        assert f"task {ids['steps']}: cancelled" in cancelled.stdout
        out, err = watcher.communicate(timeout=60)
        assert watcher.returncode == 1, err  # it did not finish done
        lines = out.strip().splitlines()
        assert lines[0].startswith(f"{ids['steps']} running")
        assert lines[-1] == f"{ids['steps']} cancelled 0% step" or \
            lines[-1].startswith(f"{ids['steps']} cancelled")
        assert "error: cancelled by the user" in lines[-1]
        # the tasks behind it ran on
        deadline = time.monotonic() + 30
        while True:
            listed = json.loads(adjutant(home, "tasks", "list", "--json").stdout)
            if all(t["status"] != "queued" for t in listed):
                break
            assert time.monotonic() < deadline
            time.sleep(0.2)
        assert sorted(t["status"] for t in listed) == ["cancelled"] + ["done"] * 5
    finally:
        runner.kill()
        runner.communicate(timeout=10)


def test_watch_draws_a_progress_bar_on_a_terminal(
        filled: tuple[Path, dict[str, str]]) -> None:
    import pty

    home, ids = filled
    controller, terminal = pty.openpty()
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "TERM")}
    env.update(ADJUTANT_HOME=str(home), TERM="xterm")
    try:
        proc = subprocess.Popen([sys.executable, "-m", "adjutant.cli", "tasks", "watch",
                                 ids["done"]], stdout=terminal, stderr=subprocess.PIPE,
                                env=env)
        os.close(terminal)
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err
        out = b""
        while True:
            try:
                chunk = os.read(controller, 65536)
            except OSError:  # the terminal closed: all is read
                break
            if not chunk:
                break
            out += chunk
    finally:
        os.close(controller)
    text = out.decode()
    assert f"{ids['done'][:12]} [{'#' * 30}] 100.0% done" in text
    assert "\x1b[K" in text  # redrawn in place
    assert text.rstrip().endswith(f"{ids['done']} done")


def test_schedules_are_listed_and_removed(tmp_path: Path) -> None:
    from adjutant_tasks._runner import add_schedule

    home = tmp_path / "home"

    async def make() -> str:
        async with kernel_at(home) as (h, plugin):
            schedule = await add_schedule(h.kernel, plugin.queue, "test.steps", {"n": 1},
                                          "30 7 * * *", now=time.time())
            return schedule.id

    sid = anyio.run(make)
    listed = json.loads(adjutant(home, "tasks", "schedules", "--json").stdout)
    assert [(s["id"], s["cron"], s["capability"]) for s in listed] == [
        (sid, "30 7 * * *", "test.steps")]
    assert "30 7 * * *" in adjutant(home, "tasks", "schedules").stdout
    removed = adjutant(home, "tasks", "unschedule", sid)
    assert f"schedule {sid}: removed" in removed.stdout
    assert json.loads(adjutant(home, "tasks", "schedules", "--json").stdout) == []
    again = adjutant(home, "tasks", "unschedule", sid, check=False)
    assert again.returncode == 1 and f"no schedule {sid!r}" in again.stderr


def test_approve_and_deny_a_waiting_task_from_the_shell(tmp_path: Path) -> None:
    import adjutant_files
    import adjutant_guard
    import adjutant_write_gate

    home, work = tmp_path / "home", tmp_path / "work"
    work.mkdir()

    async def fill() -> list[str]:
        async with kernel_at(home, adjutant_files, adjutant_guard, adjutant_write_gate,
                             mode="execute-with-confirmation") as (h, plugin):
            ids = [(await plugin.submit("tool.call", {
                "tool": "fs.write", "cwd": str(work),
                "args": {"path": f"{name}.txt", "content": name}}))[0].id
                for name in ("yes", "no")]
            await Runner(h.kernel, plugin.queue, tasks_settings(h.kernel)).serve(
                until_idle=True)
            return ids

    yes, no = anyio.run(fill)
    shown = adjutant(home, "tasks", "show", yes).stdout
    assert "waiting_for_human" in shown and "fs.write" in shown and "+yes" in shown
    digest = json.loads(adjutant(home, "tasks", "show", yes, "--json").stdout)[
        "question"]["digest"]
    assert f"digest:        {digest}" in shown
    wrong = adjutant(home, "tasks", "approve", yes, "--digest", "0" * 64, check=False)
    assert wrong.returncode == 1 and "the question changed" in wrong.stderr
    approved = json.loads(adjutant(home, "tasks", "approve", yes, "--digest", digest,
                                   "--json").stdout)
    assert approved["status"] == "queued" and approved["answer"]["action"] == "grant"
    assert approved["answer"]["digest"] == digest
    denied = adjutant(home, "tasks", "deny", no).stdout
    assert f"task {no}: denied; queued" in denied
    again = adjutant(home, "tasks", "approve", no, check=False)
    assert again.returncode == 1 and "asks nothing" in again.stderr
    adjutant(home, "tasks", "run", "--until-idle")
    assert not (work / "no.txt").exists()
    final = {t["id"]: t for t in json.loads(adjutant(home, "tasks", "list", "--json").stdout)}
    assert final[no]["status"] == "failed" and "denied" in final[no]["error"]
    assert final[yes]["status"] == "done"
    assert (work / "yes.txt").read_text() == "yes"


def test_automations_from_the_shell(tmp_path: Path) -> None:
    home = tmp_path / "home"
    flow = tmp_path / "flow.json"
    flow.write_text(json.dumps({"name": "greet", "trigger": {"cron": "30 7 * * *"},
                                "steps": [{"id": "c", "condition": {
                                    "value": "${input.name}", "op": "eq", "than": "Ada"},
                                    "else": "return", "returns": "not Ada"},
                                    {"id": "r", "return": "hello ${input.name}"}]}))
    added = json.loads(adjutant(home, "automations", "add", str(flow), "--json").stdout)
    assert added["name"] == "greet"
    listed = json.loads(adjutant(home, "automations", "list", "--json").stdout)
    assert [f["name"] for f in listed] == ["greet"]
    schedules = json.loads(adjutant(home, "tasks", "schedules", "--json").stdout)
    assert [(s["id"], s["cron"]) for s in schedules] == [("auto-greet", "30 7 * * *")]
    assert "disabled" in adjutant(home, "automations", "disable", "greet").stdout
    assert "disabled" in adjutant(home, "automations", "list").stdout
    adjutant(home, "automations", "enable", "greet")
    ran = json.loads(adjutant(home, "automations", "run", "greet", "--input",
                              '{"name": "Ada"}', "--json").stdout)
    assert ran["status"] == "done" and ran["outputs"]["returned"] == "hello Ada"
    other = json.loads(adjutant(home, "automations", "run", "greet", "--input",
                                '{"name": "Bob"}', "--json").stdout)
    assert other["outputs"]["returned"] == "not Ada" and other["outputs"]["early"] is True
    bad = adjutant(home, "automations", "run", "nope", check=False)
    assert bad.returncode == 1 and "no flow 'nope'" in bad.stderr
    flow.write_text(json.dumps({"name": "x", "steps": [{"id": "a", "bogus": 1}]}))
    refused = adjutant(home, "automations", "add", str(flow), check=False)
    assert refused.returncode == 1 and "step a: one of" in refused.stderr
