"""The Celery hand-off (adjutant-tasks): round-trip latency of a no-op task through a
real Celery worker, on each broker. Figures only, no goal.

For each broker (kombu's filesystem transport in a temporary folder; a real
``redis-server`` on a loopback port when Debian's package is installed) a worker
process runs ``adjutant tasks worker``'s code (``plugins/adjutant-tasks/tests/
workerkit.py``, with the test capabilities, its own data home as on a second
machine). This process queues ``test.noop`` tasks one at a time (``submit``: stored
in the owner's LMDB queue, then published) and measures:

- ``ledger``: from ``submit`` to the worker's ``done`` in the broker's ledger (the
  hand-off itself: publish, consume, claim, run, report);
- ``shown``: the same, plus the owner's reconcile (what ``adjutant tasks show`` does),
  until the task is ``done`` in the owner's queue.

Run: ``.venv/bin/python bench/tasks_celery.py [--tasks N]`` (not ``celery.py``: the
script's folder comes first on ``sys.path`` and would shadow the package).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio

ROOT = Path(__file__).resolve().parents[1]
TESTS = ROOT / "plugins" / "adjutant-tasks" / "tests"
sys.path.insert(0, str(TESTS))


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _worker(home: Path, broker: str) -> subprocess.Popen[str]:
    home.mkdir(parents=True, exist_ok=True)
    log = home.parent / f"{home.name}.log"  # a file: a pipe nobody reads would block it
    with log.open("w") as err:
        proc = subprocess.Popen([sys.executable, str(TESTS / "workerkit.py"), str(home),
                                 broker, "1.0", "tasks", "worker", "--name", "bench",
                                 "--json"], text=True, stdout=subprocess.PIPE, stderr=err,
                                env={**os.environ, "PYTHONUNBUFFERED": "1"})
    assert proc.stdout is not None
    if not proc.stdout.readline():
        proc.wait(timeout=10)
        raise SystemExit(f"the worker did not start: {log.read_text()}")
    return proc


async def _measure(owner: Path, broker: str, n: int) -> dict[str, Any]:
    from taskkit import kernel_at

    from adjutant_tasks import tasks_settings
    from adjutant_tasks._celery import ledger_for, reconcile

    ledger = ledger_for(broker)
    ledger_s, shown_s = [], []
    async with kernel_at(owner, broker=broker) as (h, plugin):
        settings = tasks_settings(h.kernel)
        for i in range(n + 2):  # the first two warm the worker and the connections
            start = time.perf_counter()
            task, _ = await plugin.submit("test.noop", {"i": i})
            while True:  # the broker's ledger, polled
                if b'"status":"done"' in (ledger.get(f"state/{task.id}.1") or b""):
                    break
                await anyio.sleep(0.002)
            at_ledger = time.perf_counter()
            while True:
                await reconcile(h.kernel, plugin.queue, settings)
                stored = await plugin.queue.get(task.id)
                if stored is not None and stored.status == "done":
                    break
                await anyio.sleep(0.002)
            if i >= 2:
                ledger_s.append(at_ledger - start)
                shown_s.append(time.perf_counter() - start)
    return {"tasks": n,
            "ledger_p50_ms": round(statistics.median(ledger_s) * 1000, 1),
            "ledger_p90_ms": round(_pct(ledger_s, 0.9) * 1000, 1),
            "shown_p50_ms": round(statistics.median(shown_s) * 1000, 1),
            "shown_p90_ms": round(_pct(shown_s, 0.9) * 1000, 1)}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=30)
    parser.add_argument("--quick", action="store_true", help="10 tasks per broker (CI)")
    args = parser.parse_args()
    if args.quick:
        args.tasks = 10
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="bench-celery-", dir=ROOT / ".cache") as tmp:
        root = Path(tmp)
        brokers = [("filesystem", f"filesystem://{root / 'fs-broker'}", None)]
        server = None
        binary = shutil.which("redis-server")
        if binary is not None:
            port = _free_port()
            server = subprocess.Popen([binary, "--port", str(port), "--bind", "127.0.0.1",
                                       "--save", "", "--appendonly", "no", "--dir", tmp],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(0.3)
            brokers.append(("redis", f"redis://127.0.0.1:{port}/0", server))
        else:
            results["redis"] = "skipped: redis-server is not installed"
        try:
            for label, broker, _ in brokers:
                worker = _worker(root / f"{label}-worker", broker)
                try:
                    results[label] = anyio.run(_measure, root / f"{label}-owner", broker,
                                               args.tasks)
                finally:
                    worker.send_signal(signal.SIGTERM)
                    try:
                        worker.communicate(timeout=10)
                    except subprocess.TimeoutExpired:
                        worker.kill()
                        worker.communicate()
        finally:
            if server is not None:
                server.terminate()
                server.wait(timeout=10)
    for label, figures in results.items():
        if isinstance(figures, str):
            print(f"{label:<11} {figures}")
        else:
            print(f"{label:<11} no-op round trip, {figures['tasks']} tasks: to the ledger "
                  f"p50 {figures['ledger_p50_ms']} ms, p90 {figures['ledger_p90_ms']} ms; "
                  f"shown in the queue p50 {figures['shown_p50_ms']} ms, "
                  f"p90 {figures['shown_p90_ms']} ms")
    print(json.dumps(results))


if __name__ == "__main__":
    main()
