"""Action-log durability cost: LMDB appends next to the disk's own fsync.

Measures, in one directory on one disk:

1. the floor: ``write`` + ``fsync`` of a ~90-byte line appended to a file (what one
   checkpoint costs, and the least any durable append can cost);
2. durable appends to `LmdbLogStore` (LMDB's full durability: each commit fsync'd)
   with a checkpoint after every record and after every N-th: appends/s, median and
   p99 latency, called directly (no event loop); then with every checkpoint line
   fsync'd too (``checkpoint_sync_s=0``, as before group commit), and one step's
   four records (decision, intent, the previous result and artifact) in one commit;
3. the same through ``await store.append`` on asyncio (one worker-thread hop);
4. the key/value store: ``put`` inline on the loop (the loop is blocked that long)
   against ``await put`` (worker thread), and an inline ``get``, which decides what
   runs in a thread;
5. ``verify`` and ``export_jsonl`` throughput over the records written.

Why: every step the operator runs is logged before and after, durably. The log
must not be what makes a step slow, and the checkpoint interval is a trade-off
(a tail shorter than the interval is not detected if dropped) that should be made
with numbers. Goal: an append with a checkpoint per record within 4x the disk's
fsync, median (LMDB's commit is two fsyncs, data then meta page; the checkpoint
line is written with it and fsync'd at most once a second; the rest is ours).

Run: ``.venv/bin/python bench/log.py [--quick] [--appends N] [--dir DIR]``. The
default directory is under ``.cache/`` in the checkout, on the same disk as the
code; a tmpfs (often /tmp) makes fsync free and the figures meaningless.
"""

from __future__ import annotations

import argparse
import functools
import os
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

GOAL_X_FSYNC = 4.0
INTERVALS = (1, 16, 256)
ROOT = Path(__file__).resolve().parents[1]


def percentiles(samples: list[float]) -> tuple[float, float]:
    """(median, p99) in microseconds."""
    ordered = sorted(samples)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return statistics.median(ordered) * 1e6, p99 * 1e6


def timed(fn: Callable[[], object], n: int) -> list[float]:
    samples = []
    for _ in range(n):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return samples


def fsync_floor(where: Path, n: int) -> list[float]:
    fd = os.open(where / "fsync-probe", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    line = b'{"index":123456,"hash":"' + b"0" * 64 + b'"}\n'

    def once() -> None:
        os.write(fd, line)
        os.fsync(fd)

    try:
        return timed(once, n)
    finally:
        os.close(fd)


def filesystem(path: Path) -> str:
    """The type of the filesystem holding ``path`` (Linux), for the header."""
    best, kind = "", "?"
    try:
        with open("/proc/mounts") as mounts:
            for line in mounts:
                _, point, fstype, *_ = line.split()
                if str(path.resolve()).startswith(point) and len(point) > len(best):
                    best, kind = point, fstype
    except OSError:
        pass
    return kind


def row(label: str, samples: list[float], floor_us: float, note: str = "") -> None:
    median, p99 = percentiles(samples)
    rate = len(samples) / sum(samples)
    print(f"{label:<34} {rate:>9,.0f} {median:>10,.0f} {p99:>10,.0f} "
          f"{median / floor_us:>8.1f}x  {note}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="few appends (CI smoke test)")
    parser.add_argument("--appends", type=int, help="appends per figure (default 2000; 150 quick)")
    parser.add_argument("--dir", type=Path, help="where to write (default: under .cache/)")
    opts = parser.parse_args()
    n = opts.appends or (150 if opts.quick else 2000)
    try:
        import anyio

        from adjutant_lmdb import LmdbKeyValueStore, LmdbLogStore
    except ImportError as exc:  # a partial environment: say so, do not crash the run
        print(f"log: skipped, adjutant-lmdb is not installed here ({exc})")
        return

    parent = opts.dir or ROOT / ".cache"
    parent.mkdir(parents=True, exist_ok=True)
    where = Path(tempfile.mkdtemp(prefix="bench-log-", dir=parent))
    try:
        floor = fsync_floor(where, n)
        floor_us = percentiles(floor)[0]
        print(f"log: {n:,} durable appends per figure in {where} "
              f"({filesystem(where)}); bodies of 200 bytes")
        print(f"goal: append with a checkpoint per record, median within {GOAL_X_FSYNC:.0f}x "
              "the disk's fsync (LMDB's 2 fsyncs are inherent)\n")
        print(f"{'':<34} {'per s':>9} {'median us':>10} {'p99 us':>10} {'x fsync':>9}")
        row("disk: write + fsync, 90 B line", floor, floor_us, "the floor")

        body = b'{"kind":"tool_call","tool":"fs.read","args":{"path":"notes.txt"}}'.ljust(200)
        results: dict[int, list[float]] = {}
        for every in INTERVALS:
            store = LmdbLogStore(checkpoint_every=every)
            store.open(where / f"every-{every}")
            store._append(body)  # warm-up: creates the databases
            results[every] = samples = timed(functools.partial(store._append, body), n)
            goal = ""
            if every == 1:
                met = percentiles(samples)[0] <= GOAL_X_FSYNC * floor_us
                goal = "goal met" if met else "GOAL MISSED"
            label = "append, checkpoint every record" if every == 1 else (
                f"append, checkpoint every {every}")
            row(label, samples, floor_us, goal)
            store.close()

        store = LmdbLogStore(checkpoint_sync_s=0)
        store.open(where / "sync-each")
        store._append(body)
        row("append, each checkpoint fsync'd", timed(functools.partial(store._append, body), n),
            floor_us, "before group commit")
        step = [body.replace(b"tool_call", kind) for kind in (b"result", b"artifact",
                                                               b"decision", b"tool_call")]
        row("a step: 4 records, one commit", timed(functools.partial(store._append_many, step),
                                                   n), floor_us, "group commit")
        store.close()

        async def async_appends() -> list[float]:
            store = LmdbLogStore()
            store.open(where / "async")
            await store.append(body)
            out = []
            for _ in range(n):
                start = time.perf_counter()
                await store.append(body)
                out.append(time.perf_counter() - start)
            await store.aclose()
            return out

        row("await append (asyncio, thread hop)", anyio.run(async_appends), floor_us)

        async def kv_figures() -> tuple[list[float], list[float], list[float], list[float]]:
            kv = LmdbKeyValueStore()
            kv.open(where / "kv")
            await kv.put("warm", b"x")
            inline = timed(lambda: kv._put(b"mode", b"execute-with-confirmation"), n)
            threaded = []
            for _ in range(n):
                start = time.perf_counter()
                await kv.put("mode", b"propose-only")
                threaded.append(time.perf_counter() - start)
            gets = []
            for _ in range(n):
                start = time.perf_counter()
                await kv.get("mode")
                gets.append(time.perf_counter() - start)
            from anyio import to_thread

            hops = []
            for _ in range(n):
                start = time.perf_counter()
                await to_thread.run_sync(int)
                hops.append(time.perf_counter() - start)
            await kv.aclose()
            return inline, threaded, gets, hops

        inline, threaded, gets, hops = anyio.run(kv_figures)
        print()
        row("kv put inline (loop blocked)", inline, floor_us)
        row("kv await put (worker thread)", threaded, floor_us)
        row("kv await get (inline, mmap read)", gets, floor_us)
        row("an empty to_thread hop", hops, floor_us)

        async def read_figures() -> tuple[float, float, int]:
            store = LmdbLogStore()
            store.open(where / "every-1")
            start = time.perf_counter()
            report = await store.verify()
            verified = time.perf_counter() - start
            assert report.ok, report.summary()
            start = time.perf_counter()
            _, added = await store.export_jsonl()
            exported = time.perf_counter() - start
            await store.aclose()
            return verified, exported, added

        verified, exported, added = anyio.run(read_figures)
        count = n + 1
        print(f"\nverify: {count / verified:,.0f} records/s ({count:,} records, "
              f"{verified * 1000:.1f} ms); export_jsonl: {added / exported:,.0f} records/s")

        one = percentiles(results[1])[0]
        for every in INTERVALS[1:]:
            saved = one - percentiles(results[every])[0]
            print(f"checkpoint every {every}: saves {saved:,.0f} us per append "
                  f"({saved / one:.0%}); a tail of up to {every - 1} record(s) can then be "
                  "cut without verify noticing")
        print("kv put in a thread: the loop is free during the commit; the hop costs "
              f"{percentiles(hops)[0]:,.0f} us of latency against "
              f"{percentiles(inline)[0]:,.0f} us of blocked loop inline")
    finally:
        shutil.rmtree(where, ignore_errors=True)


if __name__ == "__main__":
    main()
