"""Ingestion is a resumable state machine: a real process killed (SIGKILL) mid-batch
leaves its committed batches done, and the next run resumes from that checkpoint."""

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from memkit import PROJECT, write_project

from adjutant_memory import ProjectIndex

pytestmark = pytest.mark.anyio

WORKER = textwrap.dedent("""
    import sys, time, anyio
    from adjutant_memory import ProjectIndex

    index = ProjectIndex(sys.argv[1], sys.argv[2])
    index.scan()

    def on_batch(number, paths):
        print(f"BATCH {number} {len(paths)}", flush=True)
        if number == 3:  # mid-batch: marked processing, not committed
            time.sleep(600)

    anyio.run(lambda: index.ingest(3, on_batch=on_batch))
    print("FINISHED", flush=True)
""")


def run_until_killed(home: Path, root: Path) -> list[str]:
    """Run the worker in its own process; SIGKILL it once it is in its third batch."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.Popen([sys.executable, "-c", WORKER, str(home), str(root)],
                            stdout=subprocess.PIPE, text=True, env=env)
    lines = []
    assert proc.stdout is not None
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        lines.append(line.strip())
        if line.startswith("BATCH 3"):
            proc.send_signal(signal.SIGKILL)
            break
    proc.wait(timeout=30)
    proc.stdout.close()
    assert proc.returncode == -signal.SIGKILL, lines
    return lines


async def test_killed_mid_batch_resumes_from_the_checkpoint(tmp_path: Path) -> None:
    root = write_project(tmp_path / "p")
    home = tmp_path / "home"
    lines = run_until_killed(home, root)
    assert lines == ["BATCH 1 3", "BATCH 2 3", "BATCH 3 3"]

    index = ProjectIndex(home, str(root))
    states = index.states()
    assert sorted(states.values()).count("done") == 6  # two committed batches
    assert sorted(states.values()).count("processing") == 3  # the one killed
    done_before = {p for p, s in states.items() if s == "done"}
    stamps = dict(index.db.execute("SELECT path, updated_at FROM files WHERE state='done'"))

    paused, failed = index.recover(stale_after_s=3600)
    assert (paused, failed) == (3, 0)
    assert sorted(index.states().values()).count("paused") == 3
    report = await index.ingest(3)
    assert report.done == len(PROJECT) - 6  # the paused batch and the rest; no redo
    assert set(index.states().values()) == {"done"}
    assert dict(index.db.execute(
        f"SELECT path, updated_at FROM files WHERE path IN ({','.join('?' * 6)})",
        sorted(done_before))) == stamps  # the committed batches were not touched
    # the chunks of every file are there once
    per_file = dict(index.db.execute("SELECT path, COUNT(DISTINCT start) = COUNT(*) "
                                     "FROM chunks GROUP BY path"))
    assert len(per_file) == len(PROJECT) and all(per_file.values())


async def test_work_stuck_too_long_becomes_failed_and_can_be_retried(tmp_path: Path) -> None:
    root = write_project(tmp_path / "p")
    home = tmp_path / "home"
    run_until_killed(home, root)
    index = ProjectIndex(home, str(root))
    paused, failed = index.recover(stale_after_s=60, now=time.time() + 3600)
    assert (paused, failed) == (0, 3)
    errors = index.errors()
    assert len(errors) == 3 and all("stuck in processing" in e for e in errors.values())
    await index.ingest(3)
    assert sorted(index.states().values()).count("failed") == 3  # not retried by itself
    assert index.retry_failed() == 3
    await index.ingest(3)
    assert set(index.states().values()) == {"done"}


async def test_a_failed_file_is_retried_when_it_changes(tmp_path: Path) -> None:
    root = write_project(tmp_path / "p")
    (root / "blob.bin").write_bytes(b"\x00\x01binary")
    index = ProjectIndex(tmp_path / "home", str(root))
    index.scan()
    await index.ingest()
    assert index.errors() == {"blob.bin": "binary file (not indexed)"}
    (root / "blob.bin").write_text("now it is text about kestrels\n")
    assert index.scan().queued == 1
    await index.ingest()
    assert index.states()["blob.bin"] == "done"
    assert (await index.search("kestrels", 1))[0].path == "blob.bin"


async def test_a_batch_cancelled_in_process_is_paused_and_resumed(tmp_path: Path) -> None:
    import anyio

    root = write_project(tmp_path / "p")
    index = ProjectIndex(tmp_path / "home", str(root))
    index.scan()

    def stop_in_second(number: int, paths: list[str]) -> None:
        if number == 2:
            raise KeyboardInterrupt  # what Ctrl-C raises in the middle of the work

    with pytest.raises(KeyboardInterrupt):
        await index.ingest(4, on_batch=stop_in_second)
    states = sorted(index.states().values())
    assert (states.count("done"), states.count("paused"), states.count("processing")) == \
        (4, 4, 0)
    with anyio.CancelScope() as scope:  # a cancelled request leaves no batch processing
        scope.cancel()
        await index.ingest(4)
    assert "processing" not in index.states().values()
    await index.ingest(4)
    assert set(index.states().values()) == {"done"}
