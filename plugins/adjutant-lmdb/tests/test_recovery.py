"""Crashes: a torn last line is cut on open and recorded; LMDB records never tear.

The crash test runs a writer in another process and SIGKILLs it at random points,
over and over. A "zygote" process imports everything once and forks one writer per
round, so the rounds cost milliseconds rather than an interpreter start each.
"""

import base64
import json
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import anyio
import pytest

import adjutant_lmdb
from adjutant_lmdb import LmdbLogStore, VerifyReport

pytestmark = pytest.mark.anyio


def _recoveries(records: list[bytes]) -> list[dict[str, object]]:
    bodies = [json.loads(r) for r in records if r.startswith(b'{"kind":"lmdb.')]
    return [b for b in bodies if b["kind"] == "lmdb.recovered"]


@pytest.mark.parametrize("torn", [b'{"index":5,"ha', b"\x00" * 512])
async def test_a_torn_checkpoint_line_is_cut_and_recorded(
    open_log: Callable[..., LmdbLogStore], lmdb_dir: Path, torn: bytes
) -> None:
    store = open_log()
    for i in range(5):
        await store.append(b"r%d" % i)
    store.close()
    path = lmdb_dir / "checkpoints.jsonl"
    intact = path.read_bytes()
    with path.open("ab") as f:  # what a power cut mid-write leaves
        f.write(torn)

    store = open_log()
    records = [r async for _, r in store.read()]
    (note,) = _recoveries(records)
    assert note["what"] == f"cut a torn last line ({len(torn)} bytes) from checkpoints.jsonl"
    assert base64.b64decode(str(note["cut_base64"])) == torn
    assert path.read_bytes().startswith(intact) and path.read_bytes().endswith(b"}\n")
    report = await store.verify()
    assert report.ok, report.summary()
    assert report.recoveries == [(5, note["what"])]
    assert "record 5 records a recovery on open: cut a torn last line" in report.summary()


async def test_a_torn_export_line_is_cut_and_recorded(
    open_log: Callable[..., LmdbLogStore], lmdb_dir: Path
) -> None:
    store = open_log()
    for i in range(3):
        await store.append(b'{"n":%d}' % i)
    path, added = await store.export_jsonl()
    assert added == 3
    store.close()
    with path.open("ab") as f:
        f.write(b'{"index":3,"ti')

    store = open_log()
    assert len(path.read_bytes().splitlines()) == 3  # cut back to the last whole line
    (note,) = _recoveries([r async for _, r in store.read()])
    assert note["file"] == str(path)
    # the next export carries on after the last whole line (the recovery record is today's)
    assert (await store.export_jsonl())[1] == 1
    assert [json.loads(line)["index"] for line in path.read_bytes().splitlines()] == [0, 1, 2, 3]


async def test_a_missing_checkpoint_file_is_recorded(
    open_log: Callable[..., LmdbLogStore], lmdb_dir: Path
) -> None:
    store = open_log()
    await store.append(b"r0")
    store.close()
    (lmdb_dir / "checkpoints.jsonl").unlink()
    store = open_log()
    (note,) = _recoveries([r async for _, r in store.read()])
    assert str(note["what"]).startswith("checkpoints.jsonl was missing")
    report = await store.verify()
    assert (report.ok, report.last_checkpoint) == (True, 1)


async def test_a_head_newer_than_the_checkpoints_is_checkpointed_on_open(
    open_log: Callable[..., LmdbLogStore], lmdb_dir: Path
) -> None:
    """A crash between the LMDB commit and the checkpoint leaves the head uncovered."""
    store = open_log(checkpoint_every=100)
    for i in range(3):
        await store.append(b"r%d" % i)
    assert (lmdb_dir / "checkpoints.jsonl").read_bytes() == b""
    store._release()  # drop the store as a crash would: no closing checkpoint
    store = open_log()
    assert (lmdb_dir / "checkpoints.jsonl").read_bytes().startswith(b'{"index":2,')
    assert _recoveries([r async for _, r in store.read()]) == []


ZYGOTE = r"""
import os, sys
import anyio, anyio.to_thread, anyio._backends._asyncio, lmdb  # imported once, before forking
from adjutant_lmdb import LmdbLogStore

async def write(path, every):
    store = LmdbLogStore(checkpoint_every=int(every))
    store.open(path)
    os.write(1, b"ready %d\n" % os.getpid())  # one write: a line is whole or absent
    n = 0
    while True:  # until SIGKILL; some records big enough for LMDB overflow pages
        index = await store.append(b'{"kind":"crash.test","n":%d}' % n + b"x" * (n * 997 % 9000))
        os.write(1, b"%d\n" % index)
        n += 1

for line in sys.stdin:
    pid = os.fork()
    if pid == 0:
        try:
            anyio.run(write, *line.split())
        finally:
            os._exit(1)
    os.waitpid(pid, 0)
    os.write(1, b"dead\n")
"""


async def _reopen_and_verify(path: Path) -> tuple[VerifyReport, set[int]]:
    store = LmdbLogStore()
    store.open(path)
    try:
        return await store.verify(), {index async for index, _ in store.read()}
    finally:
        await store.aclose()


@pytest.mark.parametrize("every", [1, 7])
def test_no_acknowledged_record_is_lost_when_the_writer_is_killed(
    tmp_path: Path, every: int
) -> None:
    """With a checkpoint per record or every 7th (then the head a crash left
    uncovered is checkpointed on the next open)."""
    rounds, seed = 25, random.randrange(1 << 30)
    rng = random.Random(seed)
    src = str(Path(adjutant_lmdb.__file__).parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        p for p in (src, os.environ.get("PYTHONPATH")) if p)}
    acknowledged: set[int] = set()
    path = tmp_path / "lmdb"
    with subprocess.Popen([sys.executable, "-c", ZYGOTE], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, text=True, env=env) as zygote:
        assert zygote.stdin is not None and zygote.stdout is not None
        for round_ in range(rounds):
            zygote.stdin.write(f"{path} {every}\n")
            zygote.stdin.flush()
            ready = zygote.stdout.readline().split()
            assert ready[:1] == ["ready"], (seed, round_, ready)
            # one append acknowledged first: on a slow disk (fsyncs of several ms) a
            # kill within 30 ms of the start would often land before any
            acknowledged.add(int(zygote.stdout.readline()))
            time.sleep(rng.uniform(0, 0.03))
            os.kill(int(ready[1]), signal.SIGKILL)
            for line in zygote.stdout:
                if line == "dead\n":
                    break
                acknowledged.add(int(line))

            report, present = anyio.run(_reopen_and_verify, path)
            assert report.ok, (seed, round_, report.summary())
            assert report.recoveries == [], (seed, round_, report.recoveries)
            assert acknowledged <= present, (seed, round_, sorted(acknowledged - present))
        zygote.stdin.close()
    assert len(acknowledged) >= rounds, f"too few appends to prove anything (seed {seed})"
