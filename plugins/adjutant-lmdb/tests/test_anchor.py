"""The kept head (`_anchor`): what `adjutant log verify --head` adds to the checkpoints.

A consistent rewrite (every hash recomputed, every checkpoint rewritten) passes
`verify`; a head kept elsewhere does not match it. The CLI is exercised end to end in
``tests/attack/test_proc_and_log.py``.
"""

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from adjutant_lmdb import LmdbLogStore
from adjutant_lmdb._anchor import check_head, format_head, parse_head
from adjutant_lmdb._chain import index_key, make_record, parse_record
from adjutant_lmdb._files import checkpoint_line

pytestmark = pytest.mark.anyio


async def _kept(open_log: Callable[..., LmdbLogStore]) -> str:
    store = open_log()
    for i in range(8):
        await store.append(b'{"kind":"tool_call","n":%d}' % i)
    (head,) = await store.tail(1)
    store.close()
    return format_head(head)


async def _check(open_log: Callable[..., LmdbLogStore], kept: str) -> tuple[bool, Any]:
    store = open_log()
    index, digest = parse_head(kept)
    report = await store.verify()
    return report.ok, check_head(index, digest, await store.record(index))


async def test_an_intact_log_matches_its_kept_head(
        open_log: Callable[..., LmdbLogStore]) -> None:
    kept = await _kept(open_log)
    assert kept.startswith("7:") and len(kept) == 2 + 64
    assert await _check(open_log, kept) == (True, None)


async def test_a_consistent_rewrite_passes_verify_but_not_the_kept_head(
        open_log: Callable[..., LmdbLogStore], raw_log: Callable[[], Any],
        lmdb_dir: Path) -> None:
    kept = await _kept(open_log)
    lines = []
    with raw_log() as (txn, _):
        prev = bytes(32)
        for index in range(8):
            old = parse_record(txn.get(index_key(index)))
            body = b'{"kind":"nothing to see"}' if index == 2 else old.body
            forged = make_record(index, old.time_ns, prev, body)
            txn.put(index_key(index), forged.pack())
            lines.append(checkpoint_line(index, forged.hash))
            prev = forged.hash
    (lmdb_dir / "checkpoints.jsonl").write_bytes(b"".join(lines))
    ok, problem = await _check(open_log, kept)
    assert ok  # what verify alone cannot see
    assert problem is not None and problem.index == 7
    assert problem.message.startswith("record 7: differs from the kept head 7:")


async def test_a_missing_kept_record_is_named(open_log: Callable[..., LmdbLogStore]) -> None:
    kept = await _kept(open_log)
    _, problem = await _check(open_log, "99:" + kept.split(":")[1])
    assert problem is not None and "record 99: missing, but the kept head" in problem.message


@pytest.mark.parametrize("text", ["", "7", "7:abc", "a:" + "0" * 64, "-1:" + "0" * 64,
                                  "7:" + "g" * 64, "7:" + "0" * 65])
def test_malformed_kept_heads_are_refused(text: str) -> None:
    with pytest.raises(ValueError, match="expected INDEX:SHA256"):
        parse_head(text)


def test_the_printed_form_parses_back_sha256_prefix_allowed() -> None:
    digest = bytes(range(32))
    assert parse_head(f"5:{digest.hex()}") == (5, digest)
    assert parse_head(f" 5:sha256:{digest.hex().upper()}\n") == (5, digest)
