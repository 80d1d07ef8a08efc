"""`verify` catches edits, reordering, removals and a dropped tail, naming the record.

Each test writes a log through the store, closes it, changes the files the way an
intruder or a faulty disk would (the LMDB database through the raw lmdb API, or
the checkpoint file), reopens the store and verifies.
"""

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from adjutant_lmdb import LmdbLogStore, VerifyReport

pytestmark = pytest.mark.anyio

N = 10


async def _written(open_log: Callable[..., LmdbLogStore], n: int = N) -> LmdbLogStore:
    store = open_log()
    for i in range(n):
        await store.append(b'{"kind":"tool_call","n":%d}' % i)
    store.close()
    return store


async def _verify(open_log: Callable[..., LmdbLogStore]) -> VerifyReport:
    return await open_log().verify()


def _messages(report: VerifyReport) -> list[str]:
    return [p.message for p in report.problems]


async def test_an_intact_log_verifies(open_log: Callable[..., LmdbLogStore]) -> None:
    await _written(open_log)
    report = await _verify(open_log)
    assert report.ok, report.summary()
    assert (report.count, report.head_index, report.checkpoints) == (N, N - 1, N)
    assert report.summary().startswith(f"log OK: {N} record(s), head #{N - 1} sha256:")


@pytest.mark.parametrize("offset", [-1, 30, 81, 1, 9])  # body, hash, first body byte, index, time
async def test_one_edited_byte_is_named(
    open_log: Callable[..., LmdbLogStore], raw_log: Callable[[], Any], offset: int
) -> None:
    await _written(open_log)
    with raw_log() as (txn, key):
        value = bytearray(txn.get(key(4)))
        value[offset] ^= 0x01
        txn.put(key(4), bytes(value))
    report = await _verify(open_log)
    assert [p.index for p in report.problems] == [4], report.summary()
    assert report.problems[0].message.startswith("record 4: ")


async def test_an_edited_hash_field_is_named(
    open_log: Callable[..., LmdbLogStore], raw_log: Callable[[], Any]
) -> None:
    await _written(open_log)
    with raw_log() as (txn, key):
        value = bytearray(txn.get(key(6)))
        value[-20 - len(b'{"kind":"tool_call","n":6}')] ^= 0x80  # inside the stored hash
        txn.put(key(6), bytes(value))
    report = await _verify(open_log)
    assert _messages(report) == [
        "record 6: content does not match its hash (the record was edited)"]


async def test_swapped_records_are_named(
    open_log: Callable[..., LmdbLogStore], raw_log: Callable[[], Any]
) -> None:
    await _written(open_log)
    with raw_log() as (txn, key):
        two, five = txn.get(key(2)), txn.get(key(5))
        txn.put(key(2), five)
        txn.put(key(5), two)
    report = await _verify(open_log)
    assert _messages(report) == [
        "record 2: holds record 5 (records were reordered or moved)",
        "record 5: holds record 2 (records were reordered or moved)"]


async def test_a_dropped_tail_is_named(
    open_log: Callable[..., LmdbLogStore], raw_log: Callable[[], Any]
) -> None:
    await _written(open_log)
    with raw_log() as (txn, key):
        for index in (7, 8, 9):
            assert txn.delete(key(index))
    report = await _verify(open_log)
    assert (report.count, report.problems[0].index) == (7, 7)
    assert _messages(report) == [
        "records 7..9 were dropped: the log ends at record 6 but checkpoint line 10 "
        "attests record 9"]


async def test_a_removed_record_is_named(
    open_log: Callable[..., LmdbLogStore], raw_log: Callable[[], Any]
) -> None:
    await _written(open_log)
    with raw_log() as (txn, key):
        txn.delete(key(3))
    report = await _verify(open_log)
    assert _messages(report) == [
        "record 3 is missing (the log jumps from 2 to 4)",
        "record 3: missing, but checkpoint line 4 attests it"]


async def test_a_rewritten_tail_is_caught_by_the_checkpoints(
    open_log: Callable[..., LmdbLogStore], raw_log: Callable[[], Any]
) -> None:
    """Records rewritten with a consistent chain (all hashes recomputed) pass the chain
    check, but not the checkpoints kept outside the database."""
    from adjutant_lmdb._chain import index_key, make_record, parse_record

    await _written(open_log)
    with raw_log() as (txn, _):
        prev = parse_record(txn.get(index_key(6))).hash
        for index in range(7, N):
            old = parse_record(txn.get(index_key(index)))
            forged = make_record(index, old.time_ns, prev, b'{"kind":"nothing to see"}')
            txn.put(index_key(index), forged.pack())
            prev = forged.hash
    report = await _verify(open_log)
    assert report.problems[0].index == 7
    assert report.problems[0].message.startswith("record 7: differs from checkpoint line 8")


async def test_an_edited_checkpoint_is_named(
    open_log: Callable[..., LmdbLogStore], lmdb_dir: Path
) -> None:
    await _written(open_log)
    path = lmdb_dir / "checkpoints.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    digest = lines[5][-67:-3]  # ..."hash":"<64 hex digits>"}\n
    flipped = (b"1" if digest[:1] == b"0" else b"0") + digest[1:]
    lines[5] = lines[5].replace(digest, flipped)
    path.write_bytes(b"".join(lines))
    report = await _verify(open_log)
    assert _messages(report) == [
        "record 5: differs from checkpoint line 6 (the record was rewritten, or the "
        "checkpoint edited)"]


async def test_reordered_and_garbled_checkpoints_are_named(
    open_log: Callable[..., LmdbLogStore], lmdb_dir: Path
) -> None:
    await _written(open_log)
    path = lmdb_dir / "checkpoints.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    lines[2], lines[3] = lines[3], lines[2]
    lines[7] = b'{"index":7,"hash":"not hex"}\n'
    path.write_bytes(b"".join(lines))
    report = await _verify(open_log)
    assert _messages(report) == [
        "checkpoints.jsonl line 4: checkpoint for record 2 after one for record 3 "
        "(checkpoints were reordered)",
        "checkpoints.jsonl line 8: malformed checkpoint (hash must be 64 hex digits)"]


async def test_a_foreign_value_is_named(
    open_log: Callable[..., LmdbLogStore], raw_log: Callable[[], Any]
) -> None:
    await _written(open_log)
    with raw_log() as (txn, key):
        txn.put(key(2), b"short")
    report = await _verify(open_log)
    assert _messages(report)[0].startswith("record 2: malformed (5 bytes, shorter than")


async def test_the_verdict_is_json_too(open_log: Callable[..., LmdbLogStore]) -> None:
    await _written(open_log, 3)
    data = (await _verify(open_log)).to_builtins()
    assert (data["ok"], data["count"], data["head_index"], data["problems"]) == (True, 3, 2, [])


async def test_a_broken_head_still_opens_and_verifies_but_refuses_appends(
    open_log: Callable[..., LmdbLogStore], raw_log: Callable[[], Any]
) -> None:
    """`adjutant log verify` must still run; nothing is chained to a bad record."""
    await _written(open_log)
    with raw_log() as (txn, key):
        txn.put(key(N - 1), b"garbage")
    store = open_log()
    assert [p.index for p in (await store.verify()).problems] == [N - 1]
    with pytest.raises(RuntimeError, match=r"the last record of the log \(#9\) is malformed"):
        await store.append(b"more")


async def test_a_garbled_last_checkpoint_still_opens_and_verifies(
    open_log: Callable[..., LmdbLogStore], lmdb_dir: Path
) -> None:
    await _written(open_log)
    with (lmdb_dir / "checkpoints.jsonl").open("ab") as f:
        f.write(b"nonsense\n")
    report = await _verify(open_log)
    assert [m[:47] for m in _messages(report)] == [
        "checkpoints.jsonl line 11: malformed checkpoint"]
