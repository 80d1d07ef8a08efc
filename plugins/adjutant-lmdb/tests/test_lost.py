"""A deleted ``data.mdb`` where a log existed is refused at start-up, named, until the
user restores it or acknowledges the loss (``adjutant log reset --yes``); a corrupt one
fails ``doctor``, which opens and verifies the log rather than assuming."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

import adjutant_lmdb
from adjutant import Kernel
from adjutant_lmdb import LmdbLogStore, LogMissingError

from .helpers import adjutant, cli_env

pytestmark = pytest.mark.anyio


async def _log_with(open_log: Callable[..., LmdbLogStore], n: int) -> str:
    store = open_log()
    for i in range(n):
        await store.append(b'{"kind":"note","n":%d}' % i)
    head = (await store.tail(1))[0].hash.hex()
    store.close()
    return head


async def test_a_deleted_database_is_refused_naming_the_last_record(
    open_log: Callable[..., LmdbLogStore], lmdb_dir: Path
) -> None:
    head = await _log_with(open_log, 3)
    (lmdb_dir / "data.mdb").unlink()
    with pytest.raises(LogMissingError, match=rf"record #2 sha256:{head[:16]}.*log reset --yes"):
        open_log()
    assert not (lmdb_dir / "data.mdb").exists()  # no empty log was created meanwhile


async def test_the_whole_directory_gone_is_refused_too(
    open_log: Callable[..., LmdbLogStore], lmdb_dir: Path
) -> None:
    await _log_with(open_log, 2)
    shutil.rmtree(lmdb_dir)
    with pytest.raises(LogMissingError, match=r"record #1 .*lmdb\.log\.json"):
        open_log()


async def test_an_old_home_without_a_marker_is_protected_by_its_checkpoints(
    open_log: Callable[..., LmdbLogStore], lmdb_dir: Path
) -> None:
    await _log_with(open_log, 2)
    (lmdb_dir.parent / "lmdb.log.json").unlink()
    (lmdb_dir / "data.mdb").unlink()
    with pytest.raises(LogMissingError, match=r"record #1 .*checkpoints\.jsonl"):
        open_log()


async def test_an_empty_new_home_starts_quietly(open_log: Callable[..., LmdbLogStore]) -> None:
    store = open_log()
    assert [i async for i, _ in store.read()] == []


def test_reset_acknowledges_the_loss_and_the_new_log_records_it(tmp_path: Path) -> None:
    home = tmp_path / "home"
    env = cli_env(home, tmp_path)
    assert adjutant(env, "log", "verify").returncode == 0
    import anyio

    async def add() -> None:
        log = LmdbLogStore()
        log.open(home / "lmdb")
        await log.append(b'{"kind":"note"}')
        await log.aclose()

    anyio.run(add)
    assert adjutant(env, "log", "export").returncode == 0
    (home / "lmdb" / "data.mdb").unlink()

    for args in (("status",), ("log", "verify")):
        done = adjutant(env, *args)
        assert done.returncode == 1, done
        assert "is missing, but a log existed here (record #0" in done.stderr
        assert "Traceback" not in done.stderr and "never awaited" not in done.stderr
    doctor = adjutant(env, "doctor", "--json")
    (lmdb_check,) = [c for c in json.loads(doctor.stdout) if c["check"] == "lmdb"]
    assert lmdb_check["status"] == "fail" and "log reset --yes" in lmdb_check["fix"]

    done = adjutant(env, "log", "reset")  # without --yes: says what it would do
    assert done.returncode == 2 and "log reset --yes" in done.stdout
    done = adjutant(env, "log", "reset", "--yes")
    assert done.returncode == 0, done
    assert "acknowledged" in done.stdout
    assert list((home / "lmdb").glob("checkpoints.lost-*.jsonl"))
    assert list(home.glob("logs.lost-*"))

    done = adjutant(env, "log", "verify", "--json")
    assert done.returncode == 0, done
    report = json.loads(done.stdout)
    (note,) = report["recoveries"]
    assert "the previous one (last known record #0" in note["what"]
    assert "was lost" in note["what"]
    done = adjutant(env, "log", "reset", "--yes")  # a log is there: refused, nothing moved
    assert done.returncode == 1 and "is present" in done.stderr


def test_doctor_opens_and_verifies_the_log(tmp_path: Path) -> None:
    kernel = Kernel(plugins=[adjutant_lmdb], load_installed=False, home=tmp_path).load()
    store = LmdbLogStore()
    store.open(tmp_path / "lmdb")
    store.close()
    result = kernel.checks["lmdb"].run(kernel)
    assert (result.status, "log OK: 0 record(s)" in result.message) == ("ok", True), result

    data = tmp_path / "lmdb" / "data.mdb"
    data.write_bytes(b"\0" * 8192 + data.read_bytes()[8192:])  # both meta pages gone
    result = kernel.checks["lmdb"].run(kernel)
    assert result.status == "fail", result
    assert "cannot be opened" in result.message and "restore it from a backup" in result.fix


def test_doctor_on_a_corrupt_database_through_the_cli(tmp_path: Path) -> None:
    home = tmp_path / "home"
    env = cli_env(home, tmp_path)
    assert adjutant(env, "log", "verify").returncode == 0
    (home / "lmdb" / "data.mdb").write_bytes(b"garbage" * 1000)
    done = adjutant(env, "doctor")
    assert done.returncode == 1
    assert "[FAIL] lmdb" in done.stdout and "MDB_INVALID" in done.stdout
    assert "never awaited" not in done.stderr and "Traceback" not in done.stderr
    done = adjutant(env, "status")
    assert done.returncode == 1 and "MDB_INVALID" in done.stderr
    assert "never awaited" not in done.stderr
