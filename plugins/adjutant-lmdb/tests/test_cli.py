"""``adjutant log verify|export|tail`` as a user runs them: ``python -m adjutant.cli``
in a subprocess, with ``ADJUTANT_HOME`` pointing at a temporary directory."""

import json
from pathlib import Path

import anyio
import pytest

from adjutant_lmdb import LmdbLogStore

from .helpers import adjutant, cli_env


async def _append(home: Path, n: int) -> None:
    store = LmdbLogStore()
    store.open(home / "lmdb")
    try:
        for i in range(n):
            await store.append(b'{"kind":"tool_call","n":%d}' % i)
    finally:
        await store.aclose()


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    anyio.run(_append, home, 6)
    return home


def test_verify_export_and_tail(home: Path, tmp_path: Path) -> None:
    env = cli_env(home, tmp_path)
    done = adjutant(env, "log", "verify")
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.startswith("log OK: 6 record(s), head #5 sha256:")

    done = adjutant(env, "log", "verify", "--json")
    report = json.loads(done.stdout)
    assert (done.returncode, report["ok"], report["count"], report["problems"]) == (0, True, 6, [])

    done = adjutant(env, "log", "export")
    assert done.returncode == 0, done.stderr
    # the kernel's shutdown after each command already brought today's file up to date
    assert done.stdout.startswith("exported 0 new record(s) to ")
    (path,) = (home / "logs").iterdir()
    assert len(path.read_text().splitlines()) == 6
    done = adjutant(env, "log", "export", "--day", "2001-01-01")
    assert (done.returncode, (home / "logs" / "2001-01-01.jsonl").read_text()) == (0, "")

    done = adjutant(env, "log", "tail", "-n", "2")
    rows = done.stdout.splitlines()
    assert done.returncode == 0 and len(rows) == 2
    assert rows[1].split()[0] == "5" and rows[1].endswith('{"kind":"tool_call","n":5}')
    done = adjutant(env, "log", "tail", "-n", "1", "--json")
    assert json.loads(done.stdout)["body"] == {"kind": "tool_call", "n": 5}


def test_verify_names_the_tampered_record(home: Path, tmp_path: Path) -> None:
    import lmdb

    lmdb_env = lmdb.open(str(home / "lmdb"), max_dbs=4)
    with lmdb_env.begin(write=True, db=lmdb_env.open_db(b"log")) as txn:
        key = (3).to_bytes(8, "big")
        value = bytearray(txn.get(key))
        value[-2] ^= 0x01
        txn.put(key, bytes(value))
    lmdb_env.close()

    env = cli_env(home, tmp_path)
    done = adjutant(env, "log", "verify")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "log TAMPERED: 1 problem(s)" in done.stdout
    assert "record 3: content does not match its hash (the record was edited)" in done.stdout
    done = adjutant(env, "log", "verify", "--json")
    report = json.loads(done.stdout)
    assert (done.returncode, report["ok"], report["problems"][0]["index"]) == (1, False, 3)


def test_log_needs_an_action(home: Path, tmp_path: Path) -> None:
    done = adjutant(cli_env(home, tmp_path), "log")
    assert done.returncode == 2
    assert "verify" in done.stderr
