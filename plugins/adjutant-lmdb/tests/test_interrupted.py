"""Runs cut by a kill are closed as interrupted at the next open, from the index of open
runs (no scan of the log); a run whose writer still runs is left alone."""

from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import adjutant_lmdb
from adjutant import Kernel
from adjutant_lmdb import LmdbLogStore

pytestmark = pytest.mark.anyio


def body(kind: str, run_id: str | None, **fields: Any) -> bytes:
    """A record as the kernel's action log writes it (kind, time, run_id first)."""
    return json.dumps({"kind": kind, "time": 1.0, "run_id": run_id, **fields},
                      separators=(",", ":")).encode()


#: A writer that logs records (JSON lines on stdin), says "ok" after each, and waits to be
#: killed: a process running a run when the kill lands.
WRITER = """
import json, os, sys, anyio
from adjutant_lmdb import LmdbLogStore

async def main():
    store = LmdbLogStore()
    store.open(sys.argv[1])
    for line in sys.stdin:
        if line.strip() == "wait":
            os.write(1, b"waiting\\n")
            await anyio.sleep(60)
        await store.append(line.strip().encode())
        os.write(1, b"ok\\n")

anyio.run(main)
"""


def killed_writer(path: Path, *records: bytes) -> int:
    """Append ``records`` from another process, SIGKILL it mid-run; its pid."""
    with subprocess.Popen([sys.executable, "-c", WRITER, str(path)], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE) as writer:
        assert writer.stdin is not None and writer.stdout is not None
        for record in (*records, b"wait"):
            writer.stdin.write(record + b"\n")
            writer.stdin.flush()
            assert writer.stdout.readline() in (b"ok\n", b"waiting\n")
        writer.send_signal(signal.SIGKILL)
    return writer.pid


async def bodies(store: LmdbLogStore) -> list[dict[str, Any]]:
    return [json.loads(raw) async for _, raw in store.read()]


async def test_a_killed_run_is_closed_as_interrupted_with_its_unfinished_step(
    open_log: Callable[..., LmdbLogStore], lmdb_dir: Path
) -> None:
    pid = killed_writer(
        lmdb_dir,
        body("prompt", "r1", text="write a file"),
        body("decision", "r1", step=0, tool="fs.write", decision="ask"),
        body("tool_call", "r1", step=0, tool="fs.write", args={"path": "a"}),
        body("result", "r1", step=0, tool="fs.write", status="ok"),
        body("tool_call", "r1", step=1, tool="shell.exec", args={"argv": ["sleep", "30"]}),
        body("direct_call", "r2", tool="fs.read"),  # a second run, nothing executing
        body("prompt", "r3", text="done"),
        body("outcome", "r3", status="answered"),  # ended: not touched
    )
    store = open_log()
    records = await bodies(store)
    closing = [r for r in records[8:] if r["kind"] == "outcome"]
    assert [(r["run_id"], r["status"]) for r in closing] == [("r1", "interrupted"),
                                                             ("r2", "interrupted")]
    first, second = closing
    assert first["interrupted"]["tool_call_without_result"] == {
        "step": 1, "tool": "shell.exec", "record": 4}
    assert first["interrupted"]["execute_started"] is True
    assert first["interrupted"]["steps_executed"] == 2
    assert f"pid {pid}" in first["error"] and "shell.exec" in first["error"]
    assert second["interrupted"]["tool_call_without_result"] is None
    assert second["interrupted"]["execute_started"] is False

    assert await store.open_runs() == []
    runs = await store.interrupted_runs()
    assert [(r["run_id"], r["record"]) for r in runs] == [("r1", 8), ("r2", 9)]
    report = await store.verify()
    assert report.ok, report.summary()
    assert [(i, run) for i, run, _ in report.interrupted] == [(8, "r1"), (9, "r2")]
    summary = report.summary()
    assert "2 run(s) were interrupted" in summary and "1 with a tool call without a result" \
        in summary and "run r1: step 1 shell.exec (tool call record 4" in summary
    assert report.to_builtins()["interrupted"][0]["tool_call_without_result"]["tool"] == \
        "shell.exec"

    store.close()  # closed once: the next open adds nothing
    store = open_log()
    assert len(await bodies(store)) == len(records)


async def test_a_run_of_a_live_process_is_left_open(
    open_log: Callable[..., LmdbLogStore], lmdb_dir: Path
) -> None:
    store = open_log()
    await store.append(body("prompt", "mine", text="still running"))
    await store.append(body("tool_call", "mine", step=0, tool="shell.exec", args={}))
    # another process starts on the same log (`adjutant status` beside a `mcp serve`)
    import anyio

    done = await anyio.run_process([sys.executable, "-c", (
        "import sys; from adjutant_lmdb import LmdbLogStore\n"
        "s = LmdbLogStore(); s.open(sys.argv[1]); s.close()"), str(lmdb_dir)])
    assert done.returncode == 0
    assert [r["kind"] for r in await bodies(store)] == ["prompt", "tool_call"]
    (run,) = await store.open_runs()
    assert (run["run_id"], run["alive"], run["pid"]) == ("mine", True, os.getpid())
    assert run["running"] == {"step": 0, "tool": "shell.exec", "record": 1}
    await store.append(body("result", "mine", step=0, tool="shell.exec", status="ok"))
    assert (await store.open_runs())[0]["running"] is None
    await store.append(body("outcome", "mine", status="executed"))
    assert await store.open_runs() == []


async def test_a_log_written_before_the_index_is_caught_up_once(
    open_log: Callable[..., LmdbLogStore], lmdb_dir: Path
) -> None:
    killed_writer(lmdb_dir, body("prompt", "old", text="x"),
                  body("tool_call", "old", step=0, tool="fs.write", args={}))
    import lmdb

    env = lmdb.open(str(lmdb_dir), max_dbs=4)  # as an older Adjutant left it: no index
    with env.begin(write=True) as txn:
        txn.drop(env.open_db(b"runs", txn=txn), delete=True)
    env.close()
    store = open_log()
    last = (await bodies(store))[-1]
    assert (last["kind"], last["status"], last["run_id"]) == ("outcome", "interrupted", "old")
    assert last["interrupted"]["tool_call_without_result"]["tool"] == "fs.write"
    # owner unknown: a run found by the catch-up has no live writer
    assert last["interrupted"]["pid"] == 0


async def test_records_of_another_shape_are_not_runs(
    open_log: Callable[..., LmdbLogStore], lmdb_dir: Path
) -> None:
    killed_writer(lmdb_dir, b"not json", b'{"run_id":"x","kind":"prompt"}',
                  body("tool_call", "never-started", step=0, tool="t"),
                  body("bundle", "r-old", path="/x"))
    store = open_log()
    assert [i async for i, _ in store.read()] == [0, 1, 2, 3]  # nothing to close
    assert await store.open_runs() == []


async def test_a_checkpoint_the_full_disk_refused_is_written_with_the_next_append(
    open_log: Callable[..., LmdbLogStore], lmdb_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from adjutant_lmdb import _files

    store = open_log()
    await store.append(b"r0")
    real = _files.AppendFile.append

    def full(self: Any, data: bytes, **options: Any) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(_files.AppendFile, "append", full)
    assert await store.append(b"r1") == 1  # durable in LMDB: the append stands
    monkeypatch.setattr(_files.AppendFile, "append", real)
    await store.append(b"r2")
    lines = (lmdb_dir / "checkpoints.jsonl").read_bytes().splitlines()
    assert [json.loads(line)["index"] for line in lines] == [0, 2]
    assert (await store.verify()).ok


def test_a_torn_checkpoint_write_is_cut_back(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    from adjutant_lmdb import _files

    file = _files.AppendFile(tmp_path / "c.jsonl")
    file.append(b"one\n")
    writes = iter([3, OSError(errno.ENOSPC, "No space left on device")])

    def partial(fd: int, data: Any) -> int:
        step = next(writes)
        if isinstance(step, OSError):
            raise step
        return real_write(fd, bytes(data[:step]))

    real_write = os.write
    monkeypatch.setattr(os, "write", partial)
    with pytest.raises(OSError, match="No space left"):
        file.append(b"two\n")
    monkeypatch.undo()
    file.close()
    assert (tmp_path / "c.jsonl").read_bytes() == b"one\n"


async def test_doctor_counts_interrupted_runs(tmp_path: Path) -> None:
    killed_writer(tmp_path / "lmdb", body("prompt", "r1", text="x"),
                  body("tool_call", "r1", step=0, tool="fs.write", args={}))
    kernel = Kernel(plugins=[adjutant_lmdb], load_installed=False, home=tmp_path).load()
    result = kernel.checks["lmdb"].run(kernel)
    assert result.status == "warn", result
    assert "1 run(s) were interrupted" in result.message
    assert "1 with a tool call without a result" in result.message
    assert "run r1: step 0 fs.write may have taken effect unrecorded" in result.message


async def test_on_a_full_disk_the_log_still_opens_and_closes_the_runs_later(
    open_log: Callable[..., LmdbLogStore], lmdb_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    killed_writer(lmdb_dir, body("prompt", "r1", text="x"))
    from adjutant_lmdb import _env

    def full(self: Any, txn: Any, bodies: list[bytes]) -> Any:
        raise _env.StoreFullError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(LmdbLogStore, "_chain", full)
    store = open_log()  # opens: verify, status and doctor still work
    assert [r["run_id"] for r in await store.open_runs()] == ["r1"]
    store.close()
    monkeypatch.undo()
    store = open_log()
    assert await store.open_runs() == []
    assert [r["run_id"] for r in await store.interrupted_runs()] == ["r1"]
