"""The daily JSONL export: one object per record of a UTC day, appended incrementally."""

import base64
import json
from collections.abc import Callable
from datetime import UTC, date, datetime
from pathlib import Path

import pytest

from adjutant_lmdb import ExportError, LmdbLogStore

pytestmark = pytest.mark.anyio


async def test_export_writes_one_json_object_per_record(
    open_log: Callable[..., LmdbLogStore], tmp_path: Path
) -> None:
    store = open_log()
    bodies = [b'{"kind":"prompt","text":"h\xc3\xa9"}', b"\x00\xffbinary", b"not json", b"[1,2]"]
    for body in bodies:
        await store.append(body)
    today = datetime.now(UTC).date()
    path, added = await store.export_jsonl()
    assert (path, added) == (tmp_path / "logs" / f"{today.isoformat()}.jsonl", 4)
    lines = [json.loads(line) for line in path.read_text("utf-8").splitlines()]
    assert [line["index"] for line in lines] == [0, 1, 2, 3]
    assert lines[0]["body"] == {"kind": "prompt", "text": "hé"}
    assert base64.b64decode(lines[1]["body_base64"]) == bodies[1]
    assert base64.b64decode(lines[2]["body_base64"]) == b"not json"
    assert lines[3]["body"] == [1, 2]
    assert lines[0]["prev_hash"] == "0" * 64
    assert [line["prev_hash"] for line in lines[1:]] == [line["hash"] for line in lines[:-1]]
    assert lines[3]["hash"] == (await store.verify()).head_hash
    assert lines[0]["time"].startswith(today.isoformat() + "T")
    assert lines[0]["time"].endswith("Z") and len(lines[0]["time"]) == 30  # nanoseconds


async def test_export_is_incremental(open_log: Callable[..., LmdbLogStore]) -> None:
    store = open_log()
    await store.append(b"{}")
    path, added = await store.export_jsonl()
    assert added == 1
    assert (await store.export_jsonl())[1] == 0
    await store.append(b"{}")
    await store.append(b"{}")
    assert (await store.export_jsonl(datetime.now(UTC).date().isoformat()))[1] == 2
    assert len(path.read_bytes().splitlines()) == 3


async def test_records_are_grouped_by_their_utc_day(
    open_log: Callable[..., LmdbLogStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    import adjutant_lmdb._log as log_module

    # 23:59:59.9 and 00:00:00.0 UTC: either side of midnight
    clock = iter([1_700_697_599_900_000_000, 1_700_697_600_000_000_000])
    monkeypatch.setattr(log_module.time, "time_ns", lambda: next(clock))
    store = open_log()
    await store.append(b'{"n":0}')
    await store.append(b'{"n":1}')
    first, added_first = await store.export_jsonl(date(2023, 11, 22))
    second, added_second = await store.export_jsonl("2023-11-23")
    assert (added_first, added_second) == (1, 1)
    assert json.loads(first.read_bytes())["time"] == "2023-11-22T23:59:59.900000000Z"
    assert json.loads(second.read_bytes())["index"] == 1
    assert (await store.export_jsonl("2023-11-24"))[1] == 0


async def test_export_refuses_bad_days_and_foreign_files(
    open_log: Callable[..., LmdbLogStore], tmp_path: Path
) -> None:
    store = open_log()
    with pytest.raises(ValueError, match="YYYY-MM-DD"):
        await store.export_jsonl("22/11/2023")
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "2023-11-22.jsonl").write_text("# my notes\n")
    with pytest.raises(ExportError, match="the last line is not an exported record"):
        await store.export_jsonl("2023-11-22")


@pytest.mark.anyio
async def test_shutdown_brings_todays_export_up_to_date(tmp_path: Path) -> None:
    import datetime

    import adjutant_lmdb
    from adjutant import Kernel

    async with Kernel(plugins=[adjutant_lmdb], load_installed=False, env={},
                      home=tmp_path) as kernel:
        await kernel.stores["log:lmdb"].append(b'{"kind": "test"}')
    day = datetime.datetime.now(datetime.UTC).date().isoformat()
    lines = (tmp_path / "logs" / f"{day}.jsonl").read_text().splitlines()
    assert any('"kind":"test"' in line.replace(" ", "") for line in lines)
