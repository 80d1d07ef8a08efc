"""The Celery hand-off with real workers: ``adjutant tasks worker`` (its code, in a
process with the test capabilities: ``workerkit.py``) consuming kombu's filesystem
transport (broker folders under tmp) and a real ``redis-server`` on a loopback port.

The owner (this process: the queue's home) queues; a worker with its own data home
(as on a second machine) runs; ``adjutant tasks show`` on the owner shows the
outcome. The same message delivered twice runs once; a worker killed mid-task is
reported as stopped consuming and its task published again, never lost."""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import msgspec
import pytest
from taskkit import kernel_at

KIT = Path(__file__).parent / "workerkit.py"
BEAT = 0.5  # heartbeat interval (s) of the test workers; stopped after 3 missed


class WorkerProc:
    def __init__(self, home: Path, broker: str, name: str) -> None:
        self.home, self.broker, self.name = home, broker, name
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        # its log to a file: a pipe nobody reads fills up and blocks the worker
        home.mkdir(parents=True, exist_ok=True)
        self.log = home.parent / f"{name}.log"
        with self.log.open("w") as log:
            self.proc = subprocess.Popen(
                [sys.executable, str(KIT), str(home), broker, str(BEAT), "tasks", "worker",
                 "--name", name, "--json"], text=True, stdout=subprocess.PIPE,
                stderr=log, env=env)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            self.proc.wait(timeout=10)
            raise AssertionError(f"the worker said nothing: {self.log.read_text()}")
        assert json.loads(line)["consuming"] is True

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
        self.proc.communicate(timeout=10)


# Generous limits: on a loaded 2-core machine a worker process takes seconds to start and
# beat; a limit costs time only when something is wrong.
def _wait_for(check: Callable[[], Any], what: str, limit: float = 60.0) -> Any:
    deadline = time.monotonic() + limit
    while not (found := check()):
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {limit} s for {what}")
        time.sleep(0.05)
    return found


def _cli(home: Path, broker: str, *args: str) -> Any:
    """``adjutant tasks ARGS --json`` on the owner's home (in this process)."""
    from adjutant_tasks import _cli as cli

    async def go() -> Any:
        import argparse

        parser = argparse.ArgumentParser()
        cli.configure(parser)
        out = io.StringIO()
        async with kernel_at(home, broker=broker, heartbeat_s=BEAT) as (h, _):
            with contextlib.redirect_stdout(out):
                code = await cli.run(h.kernel, parser.parse_args([*args, "--json"]))
        assert code == 0, out.getvalue()
        return json.loads(out.getvalue())

    return anyio.run(go)


def _queue(home: Path, broker: str, capability: str, inputs: dict[str, Any],
           **kw: Any) -> Any:
    async def go() -> Any:
        async with kernel_at(home, broker=broker, heartbeat_s=BEAT) as (_, plugin):
            task, _ = await plugin.submit(capability, inputs, **kw)
            return task

    return anyio.run(go)


def _show_when(home: Path, broker: str, task_id: str, statuses: set[str],
               limit: float = 60.0) -> dict[str, Any]:
    def check() -> dict[str, Any] | None:
        shown: dict[str, Any] = _cli(home, broker, "show", task_id)
        return shown if shown["status"] in statuses else None
    return _wait_for(check, f"task {task_id} to be {statuses}", limit)  # type: ignore[no-any-return]


def _deliver_twice(broker: str, task: Any) -> None:
    from adjutant_tasks._celery import Message, publish_message

    message = Message(v=1, task_id=task.id, capability=task.capability, inputs=task.inputs,
                      input_hash=task.input_hash, attempt=1, timeout_s=task.timeout_s,
                      created_at=task.created_at, idempotency_key=task.idempotency_key)

    async def go() -> None:
        await publish_message(broker, message)  # a redelivery of what enqueue published
        await publish_message(broker, message)
    anyio.run(go)


def _runs(worker_home: Path, task: Any) -> list[str]:
    from adjutant_tasks._runner import artifact_dir

    log = artifact_dir(worker_home, task.id, task.created_at) / "runs.log"
    return log.read_text().split() if log.exists() else []


def _round_trip_and_double_delivery(owner: Path, worker_home: Path, broker: str,
                                    worker_name: str) -> None:
    task = _queue(owner, broker, "test.count", {"echo": "hi"})
    assert task.handoff is not None
    _deliver_twice(broker, task)  # three deliveries of attempt 1 in all
    shown = _show_when(owner, broker, task.id, {"done", "failed"})
    assert shown["status"] == "done", shown
    assert shown["outputs"] == {"attempt": 1, "echo": "hi"}
    assert shown["attempts"] == 1 and shown["handoff"]

    def duplicates(n: int) -> Any:
        rows = {w["name"]: w for w in _cli(owner, broker, "workers")}
        return rows.get(worker_name, {}).get("duplicates", 0) >= n and rows[worker_name]
    row = _wait_for(lambda: duplicates(2), "the duplicate deliveries to be acknowledged")
    assert row["status"] == "consuming" and row["done"] >= 1
    # delivered again after it finished (a redelivery past the visibility timeout):
    # acknowledged, not run, and the outcome shown stays
    _deliver_twice(broker, task)
    _wait_for(lambda: duplicates(4), "the late deliveries to be acknowledged")
    assert _cli(owner, broker, "show", task.id)["status"] == "done"
    assert _runs(worker_home, task) == ["1"]  # ran once


# -- the filesystem broker -----------------------------------------------------------------


@pytest.fixture(scope="module")
def fs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path, str]]:
    root = tmp_path_factory.mktemp("celery-fs")
    broker = f"filesystem://{root / 'broker'}"
    worker = WorkerProc(root / "worker-home", broker, "w-fs")
    try:
        yield root / "owner", root / "worker-home", broker
    finally:
        worker.kill()


def test_celery_fs_a_queued_task_runs_on_the_worker_once_though_delivered_twice(
        fs: tuple[Path, Path, str]) -> None:
    _round_trip_and_double_delivery(*fs, "w-fs")


def test_celery_fs_a_retryable_failure_on_the_worker_is_retried_up_to_the_bound(
        fs: tuple[Path, Path, str]) -> None:
    owner, _, broker = fs
    flaky = _queue(owner, broker, "test.flaky", {"fail": 1})
    broken = _queue(owner, broker, "test.flaky", {"fail": 5})  # max_attempts: 3
    shown = _show_when(owner, broker, flaky.id, {"done", "failed"})
    assert shown["status"] == "done" and shown["outputs"] == {"attempt": 2}, shown
    shown = _show_when(owner, broker, broken.id, {"done", "failed"})
    assert shown["status"] == "failed" and shown["attempts"] == 3, shown
    assert shown["error"] == "flaked on attempt 3 (after 3 attempts) (worker w-fs)"


def test_celery_fs_a_message_that_fails_validation_is_refused_not_run(
        fs: tuple[Path, Path, str]) -> None:
    from adjutant_tasks._celery import Message, publish_message

    owner, worker_home, broker = fs
    task = _queue(owner, broker, "test.count", {"echo": "x"}, idempotency_key="k-tamper")
    _show_when(owner, broker, task.id, {"done"})
    # the same task's next attempt, its inputs changed at rest: refused, not run
    tampered = Message(v=1, task_id=task.id, capability="test.count",
                       inputs={"echo": "rm -rf ~"}, input_hash=task.input_hash, attempt=2,
                       timeout_s=10.0, created_at=task.created_at)
    anyio.run(publish_message, broker, tampered)
    # and a message that is no task at all
    from adjutant_tasks._celery import celery_app

    celery_app(broker).send_task("adjutant.tasks.run", args=[{"v": 1, "shell": "id"}],
                                 queue="adjutant.tasks")

    def refused() -> Any:
        rows = {w["name"]: w for w in _cli(owner, broker, "workers")}
        return rows["w-fs"]["refused"] >= 2
    _wait_for(refused, "both messages to be refused")
    assert _runs(worker_home, task) == ["1"]


def test_celery_fs_the_runner_leaves_a_handed_off_task_to_the_worker_and_shows_its_outcome(
        fs: tuple[Path, Path, str]) -> None:
    from adjutant_tasks import Runner, tasks_settings

    owner, worker_home, broker = fs

    async def go() -> Any:
        async with kernel_at(owner, broker=broker, heartbeat_s=BEAT, poll_s=0.05) as (h, plugin):
            runner = Runner(h.kernel, plugin.queue, tasks_settings(h.kernel))
            task, _ = await plugin.submit("test.count", {"echo": "runner"})
            with anyio.fail_after(20):  # idle only once the worker's outcome is in
                await runner.serve(until_idle=True)
            return await plugin.queue.get(task.id)

    task = anyio.run(go)
    assert task.status == "done" and task.outputs == {"attempt": 1, "echo": "runner"}
    assert _runs(worker_home, task) == ["1"]
    assert _runs(owner, task) == []  # not run by the local runner


def test_celery_fs_a_killed_worker_is_reported_and_its_task_published_again(
        fs: tuple[Path, Path, str], tmp_path: Path) -> None:
    from adjutant_tasks._runner import artifact_dir

    owner = tmp_path / "owner"
    broker = f"filesystem://{tmp_path / 'broker'}"  # its own broker: w-fs is not on it
    victim = WorkerProc(tmp_path / "victim-home", broker, "w-victim")
    try:
        task = _queue(owner, broker, "test.slow-once", {})
        folder = artifact_dir(tmp_path / "victim-home", task.id, task.created_at)
        _wait_for((folder / "started-1").exists, "the task to start on the worker")
        shown = _show_when(owner, broker, task.id, {"running"})
        assert "running on worker w-victim" in shown["message"]
        rows = _cli(owner, broker, "workers")
        assert rows[0]["status"] == "consuming" and rows[0]["current"] == task.id
    finally:
        victim.kill()
    def reported() -> Any:
        rows = _cli(owner, broker, "workers")
        return rows[0]["status"] == "stopped consuming" and rows[0]
    row = _wait_for(reported, "the killed worker to be reported", limit=30)
    # stale past 3 beats, judged on the exact age; the row's age is rounded to the
    # millisecond, so it may read 1.5 for 1.5002 (CI, stop 47)
    assert row["name"] == "w-victim" and row["age_s"] >= 3 * BEAT
    assert row["reason"].startswith("no heartbeat for")
    # the owner saw it too: the task is queued again as attempt 2, with the reason
    shown = _cli(owner, broker, "show", task.id)
    assert shown["status"] == "queued" and shown["resumes"] == 1, shown
    assert "worker w-victim stopped consuming" in shown["message"]
    assert "published again (attempt 2)" in shown["message"]
    # a message lost in the broker (taken by a worker that died before claiming it):
    # the next idle worker's heartbeats make the owner publish it again
    folder = tmp_path / "broker" / "queue"
    before = set(os.listdir(folder))
    lost = _queue(owner, broker, "test.count", {"echo": "lost"})
    removed = set(os.listdir(folder)) - before
    assert len(removed) == 1  # its message, gone before any worker saw it
    (folder / removed.pop()).unlink()
    rescuer = WorkerProc(tmp_path / "rescuer-home", broker, "w-rescuer")
    try:
        shown = _show_when(owner, broker, task.id, {"done", "failed"})
        assert shown["status"] == "done" and shown["outputs"] == {"attempt": 2}, shown
        found = _show_when(owner, broker, lost.id, {"done", "failed"})
    finally:
        rescuer.kill()
    assert found["status"] == "done" and found["outputs"] == {"attempt": 1, "echo": "lost"}
    assert _runs(tmp_path / "rescuer-home", lost) == ["1"]


def _ledger_status(broker: str, task_id: str, attempt: int) -> str | None:
    from adjutant_tasks._celery import ledger_for

    raw = ledger_for(broker).get(f"state/{task_id}.{attempt}")
    return None if raw is None else str(json.loads(raw)["status"])


def test_celery_fs_a_cancel_stops_the_worker_running_the_task_and_a_late_finish_is_ignored(
        fs: tuple[Path, Path, str]) -> None:
    from adjutant_tasks._celery import State, ledger_for
    from adjutant_tasks._runner import artifact_dir

    owner, worker_home, broker = fs
    task = _queue(owner, broker, "test.ticks", {"n": 30, "delay": 0.1})
    log = artifact_dir(worker_home, task.id, task.created_at) / "ticks.log"
    ticks = lambda: len(log.read_text().split()) if log.exists() else 0  # noqa: E731
    _wait_for(lambda: ticks() >= 3, "the task to tick on the worker")
    _show_when(owner, broker, task.id, {"running"})
    shown = _cli(owner, broker, "cancel", task.id)
    assert shown["status"] == "cancelled" and shown["error"] == "cancelled by the user"
    # the worker stops it at its next await and says so in the ledger
    _wait_for(lambda: _ledger_status(broker, task.id, 1) == "cancelled",
              "the worker to stop the task")
    stopped_at = ticks()
    time.sleep(0.6)  # six ticks' time: none came
    assert ticks() == stopped_at < 30
    row = {w["name"]: w for w in _cli(owner, broker, "workers")}["w-fs"]
    assert row["current"] is None and row["cancelled"] >= 1 and row["status"] == "consuming"
    # a late finish of that attempt (a worker that never saw the mark) is not applied
    ledger_for(broker).put(f"state/{task.id}.1", msgspec.json.encode(State(
        status="done", attempt=1, at=time.time(), worker="w-late", progress=1.0,
        outputs={"late": True})))
    shown = _cli(owner, broker, "show", task.id)
    assert shown["status"] == "cancelled" and shown["outputs"] is None
    # a retry publishes attempt 2, which the mark does not cover: it runs to the end,
    # and attempt 1's late "done" is still not taken
    assert _cli(owner, broker, "retry", task.id)["status"] == "queued"
    shown = _show_when(owner, broker, task.id, {"done", "failed", "cancelled"})
    assert shown["status"] == "done" and shown["outputs"] == {"ticks": 30}, shown
    assert shown["attempts"] == 2
    # cancelled while still waiting in the broker: the worker never runs it
    # (the only worker is busy with a long task meanwhile)
    busy = _queue(owner, broker, "test.ticks", {"n": 20, "delay": 0.1})
    _show_when(owner, broker, busy.id, {"running"})
    waiting = _queue(owner, broker, "test.count", {"echo": "never"})
    assert _cli(owner, broker, "cancel", waiting.id)["status"] == "cancelled"
    _wait_for(lambda: _ledger_status(broker, waiting.id, 1) == "cancelled",
              "the worker to drop the cancelled message", limit=30)
    assert _runs(worker_home, waiting) == []
    assert _cli(owner, broker, "show", waiting.id)["status"] == "cancelled"


def test_celery_fs_the_ledger_is_pruned_after_its_retention(tmp_path: Path) -> None:
    """The runner prunes the ledger (hourly): a finished handed-off task's entries
    (states, sent times, claims, checkpoint, idempotency claim) once it finished longer
    ago than ``ledger_retention_s``, and heartbeats silent as long; an open task's
    entries stay. Ages follow the runner's controlled clock."""
    from adjutant_tasks import Runner, tasks_settings

    owner = tmp_path / "owner"
    root = tmp_path / "broker"
    broker = f"filesystem://{root}"
    worker = WorkerProc(tmp_path / "prune-home", broker, "w-prune")
    try:
        done = _queue(owner, broker, "test.ticks", {"n": 2, "delay": 0.0},
                      idempotency_key="nightly-report")
        _show_when(owner, broker, done.id, {"done"})
    finally:
        worker.kill()
    waiting = _queue(owner, broker, "test.count", {"echo": "no worker now"})

    def keys() -> set[str]:
        ledger = root / "ledger"
        return {str(p.relative_to(ledger)) for p in ledger.rglob("*") if p.is_file()}
    before = keys()
    ours = {k for k in before if done.id in k}
    assert {k.split("/")[0] for k in ours} >= {"state", "sent", "claim", "ckpt"}, before
    assert any(k.startswith("idem/") for k in before)
    assert "workers/w-prune" in before

    def serve_at(days: float) -> None:
        async def go() -> None:
            async with kernel_at(owner, broker=broker, heartbeat_s=BEAT) as (h, plugin):
                settings = tasks_settings(h.kernel)
                assert settings.ledger_retention_s == 7 * 86400  # the default
                runner = Runner(h.kernel, plugin.queue, settings,
                                clock=lambda: time.time() + days * 86400)
                with anyio.move_on_after(1.5):  # a handed-off task is open: never idle
                    await runner.serve()
        anyio.run(go)

    serve_at(1)  # within the retention: nothing goes
    assert keys() == before
    serve_at(8)
    after = keys()
    assert not {k for k in after if done.id in k}, after
    assert not any(k.startswith("idem/") or k.startswith("workers/") for k in after), after
    # the open task's entries stay (its message still waits for a worker)
    assert f"state/{waiting.id}.1" in after and f"sent/{waiting.id}.1" in after
    assert _cli(owner, broker, "show", done.id)["status"] == "done"  # the queue keeps it


# -- a real Redis --------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def redis_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path, str]]:
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.skip("redis-server is not installed (Debian: apt-get install redis-server; "
                    "./dev installs it)")
    root = tmp_path_factory.mktemp("celery-redis")
    port = _free_port()
    server = subprocess.Popen([binary, "--port", str(port), "--bind", "127.0.0.1",
                               "--save", "", "--appendonly", "no", "--dir", str(root)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        def up() -> bool:
            with socket.socket() as s:
                return s.connect_ex(("127.0.0.1", port)) == 0
        _wait_for(up, "redis-server to listen", limit=10)
        broker = f"redis://127.0.0.1:{port}/0"
        worker = WorkerProc(root / "worker-home", broker, "w-redis")
        try:
            yield root / "owner", root / "worker-home", broker
        finally:
            worker.kill()
    finally:
        server.terminate()
        server.wait(timeout=10)


def test_celery_redis_round_trip_and_a_task_delivered_twice_runs_once(
        redis_broker: tuple[Path, Path, str]) -> None:
    _round_trip_and_double_delivery(*redis_broker, "w-redis")


def test_celery_redis_a_live_worker_that_stopped_consuming_is_reported(
        redis_broker: tuple[Path, Path, str], tmp_path: Path) -> None:
    """A worker whose process and heartbeat live on but whose consumer no longer takes
    messages (paused with Celery's own remote control, ``cancel_consumer``) is reported
    "stopped consuming" once a message waited a whole window while it sat idle; resumed
    (``add_consumer``), it takes the message and is reported consuming again."""
    from adjutant_tasks._celery import QUEUE_NAME, celery_app

    _, _, shared = redis_broker
    broker = shared.rsplit("/", 1)[0] + "/1"  # a database of its own: w-redis is not on it
    owner = tmp_path / "owner"
    worker = WorkerProc(tmp_path / "pause-home", broker, "w-pause")
    hostname = [f"w-pause@{socket.gethostname()}"]
    app = celery_app(broker)
    try:
        first = _queue(owner, broker, "test.count", {"echo": "before"})
        assert _show_when(owner, broker, first.id, {"done"})["outputs"]["echo"] == "before"
        row = _cli(owner, broker, "workers")[0]
        assert row["status"] == "consuming" and row["last_consumed"] is not None
        assert row["reason"] is None
        replies = app.control.cancel_consumer(QUEUE_NAME, destination=hostname, reply=True,
                                              timeout=5)
        assert replies, "the worker did not answer cancel_consumer"
        paused = _queue(owner, broker, "test.count", {"echo": "while paused"})

        def reported() -> Any:
            rows = _cli(owner, broker, "workers")
            return rows[0]["status"] == "stopped consuming" and rows[0]
        row = _wait_for(reported, "the paused worker to be reported", limit=15)
        assert row["age_s"] < 3 * BEAT  # its heartbeat is fresh: alive, not consuming
        assert "while a message waited in the broker" in row["reason"]
        assert row["oldest_waiting_s"] >= 3 * BEAT  # rounded to ms: equal when just over
        assert _cli(owner, broker, "show", paused.id)["status"] == "queued"
        replies = app.control.add_consumer(QUEUE_NAME, destination=hostname, reply=True,
                                           timeout=5)
        assert replies, "the worker did not answer add_consumer"
        shown = _show_when(owner, broker, paused.id, {"done", "failed"})
        assert shown["outputs"]["echo"] == "while paused", shown

        def consuming() -> Any:
            rows = _cli(owner, broker, "workers")
            return rows[0]["status"] == "consuming" and rows[0]
        row = _wait_for(consuming, "the resumed worker to be reported consuming")
        assert row["reason"] is None
    finally:
        worker.kill()


# -- the real command ----------------------------------------------------------------------


def test_celery_the_adjutant_tasks_worker_command_consumes_refuses_and_reports(
        tmp_path: Path) -> None:
    """``adjutant tasks worker`` itself (the installed plugins only, no test
    capability): it reports its heartbeat, refuses a task whose capability it does not
    have (the owner shows why), and once stopped (Ctrl-C) is reported at once."""
    broker = f"filesystem://{tmp_path / 'broker'}"
    home = tmp_path / "worker-home"
    (home / "profiles").mkdir(parents=True)
    (home / "profiles" / "default.json").write_text(json.dumps(
        {"plugins": {"tasks": {"broker": broker, "heartbeat_s": BEAT}}}))
    env = {k: v for k, v in os.environ.items() if not k.startswith("ADJUTANT_")}
    env.update(ADJUTANT_HOME=str(home), NO_COLOR="1", PYTHONUNBUFFERED="1")

    def adjutant(*args: str) -> Any:
        done = subprocess.run([sys.executable, "-m", "adjutant.cli", *args], text=True,
                              capture_output=True, env=env, timeout=60, check=False)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    with (tmp_path / "w-real.log").open("w") as log:  # not a pipe nobody reads
        proc = subprocess.Popen([sys.executable, "-m", "adjutant.cli", "tasks", "worker",
                                 "--name", "w-real", "--json"], text=True, env=env,
                                stdout=subprocess.PIPE, stderr=log)
    try:
        assert proc.stdout is not None
        assert json.loads(proc.stdout.readline())["consuming"] is True
        rows = adjutant("tasks", "workers", "--json")
        assert [(r["name"], r["status"], r["pid"]) for r in rows] == [
            ("w-real", "consuming", proc.pid)]
        owner = tmp_path / "owner"
        task = _queue(owner, broker, "test.count", {"echo": "x"})
        shown = _show_when(owner, broker, task.id, {"failed"})
        assert "refused by worker w-real" in shown["error"]
        assert "no task capability 'test.count' is registered here" in shown["error"]
        # `tasks retry` publishes its next attempt (a new claim), refused again here
        assert _cli(owner, broker, "retry", task.id)["status"] == "queued"
        shown = _show_when(owner, broker, task.id, {"failed"})
        assert shown["attempts"] == 2 and "refused by worker w-real" in shown["error"]
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
    rows = _wait_for(lambda: (r := adjutant("tasks", "workers", "--json"))
                     and r[0]["status"] == "stopped consuming" and r, "the stop reported",
                     limit=10)
    assert rows[0]["refused"] == 2
