"""The plugin registers what it says, opens its stores at start-up, and they persist."""

import sys
from pathlib import Path

import anyio
import pytest

import adjutant_lmdb
from adjutant import Kernel
from adjutant.testing import Harness
from adjutant.testing.plugin_checks import assert_entry_point, assert_registers
from adjutant_lmdb import LmdbKeyValueStore, LmdbLogStore, NotOpenError

#: What this plugin registers, by kind; update it along with the plugin.
REGISTERS = {"stores": ["kv:lmdb", "log:lmdb"], "commands": ["log"], "checks": ["lmdb"]}
PYPROJECT = Path(__file__).parents[1] / "pyproject.toml"


@pytest.mark.anyio
async def test_registers_what_it_says() -> None:
    await assert_registers(adjutant_lmdb, REGISTERS)
    async with Harness(adjutant_lmdb) as h:
        # startup opened both stores in the kernel's home
        for key in REGISTERS["stores"]:
            store = h.kernel.stores[key]
            assert store.opened and store.path == h.kernel.home / "lmdb"


def test_entry_point_is_found_and_loads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert_entry_point(PYPROJECT, adjutant_lmdb, REGISTERS, tmp_path, monkeypatch)


@pytest.mark.anyio
async def test_a_store_used_before_open_says_so() -> None:
    with pytest.raises(NotOpenError, match=r"log store 'lmdb' is not open; .* kernel starts"):
        await LmdbLogStore().append(b"x")
    with pytest.raises(NotOpenError, match="key/value store 'lmdb' is not open"):
        await LmdbKeyValueStore().get("k")


@pytest.mark.anyio
async def test_aclose_is_idempotent_and_closes(tmp_path: Path) -> None:
    log, kv = LmdbLogStore(), LmdbKeyValueStore()
    log.open(tmp_path / "lmdb")
    kv.open(tmp_path / "lmdb")
    await kv.put("k", b"v")
    for _ in range(2):
        await log.aclose()
        await kv.aclose()
    with pytest.raises(NotOpenError):
        await log.append(b"x")
    # the environment is really closed: the raw API may open it again in this process
    import lmdb

    lmdb.open(str(tmp_path / "lmdb"), max_dbs=4).close()


@pytest.mark.anyio
async def test_records_and_values_survive_reopening(tmp_path: Path) -> None:
    log, kv = LmdbLogStore(), LmdbKeyValueStore()
    log.open(tmp_path / "lmdb")
    kv.open(tmp_path / "lmdb")
    records = [b"first", b"\x00\xff", b"{}" * 5000]
    for record in records:
        await log.append(record)
    await kv.put("mode", b"propose-only")
    await log.aclose()
    await kv.aclose()

    log, kv = LmdbLogStore(), LmdbKeyValueStore()
    log.open(tmp_path / "lmdb")
    kv.open(tmp_path / "lmdb")
    try:
        assert [r async for _, r in log.read()] == records
        assert await kv.get("mode") == b"propose-only"
        assert await log.append(b"after") == 3
        assert (await log.verify()).ok
    finally:
        await log.aclose()
        await kv.aclose()


@pytest.mark.anyio
async def test_persist_across_fresh_kernels(tmp_path: Path) -> None:
    async with Kernel(plugins=[adjutant_lmdb], load_installed=False, home=tmp_path) as kernel:
        await kernel.stores["kv:lmdb"].put("mode", b"execute-with-confirmation")
        assert await kernel.stores["log:lmdb"].append(b'{"kind":"prompt"}') == 0
    async with Kernel(plugins=[adjutant_lmdb], load_installed=False, home=tmp_path) as kernel:
        assert await kernel.stores["kv:lmdb"].get("mode") == b"execute-with-confirmation"
        assert [r async for r in kernel.stores["log:lmdb"].read()] == [(0, b'{"kind":"prompt"}')]
        report = await kernel.stores["log:lmdb"].verify()
    assert (report.ok, report.count, report.last_checkpoint) == (True, 1, 0)


@pytest.mark.anyio
async def test_two_kernels_on_one_home_share_the_environment(tmp_path: Path) -> None:
    """LMDB forbids opening one environment twice in a process: the stores share it,
    and concurrent appends from both kernels still make one valid chain."""
    async with (
        Kernel(plugins=[adjutant_lmdb], load_installed=False, home=tmp_path) as one,
        Kernel(plugins=[adjutant_lmdb], load_installed=False, home=tmp_path) as two,
    ):
        logs = [one.stores["log:lmdb"], two.stores["log:lmdb"]]
        indexes: list[int] = []

        async def append(log: LmdbLogStore, n: int) -> None:
            indexes.append(await log.append(b"r%d" % n))

        async with anyio.create_task_group() as tg:
            for n in range(40):
                tg.start_soon(append, logs[n % 2], n)
        assert sorted(indexes) == list(range(40))
        report = await logs[0].verify()
        assert (report.ok, report.count, report.last_checkpoint) == (True, 40, 39)


@pytest.mark.anyio
async def test_checkpoint_interval_is_configurable(tmp_path: Path) -> None:
    env = {"ADJUTANT_LMDB_CHECKPOINT_EVERY": "5"}
    async with Kernel(plugins=[adjutant_lmdb], load_installed=False, home=tmp_path,
                      env=env) as kernel:
        log = kernel.stores["log:lmdb"]
        for n in range(12):
            await log.append(b"r%d" % n)
        lines = (tmp_path / "lmdb" / "checkpoints.jsonl").read_text().splitlines()
        assert [line.split(",")[0] for line in lines] == ['{"index":4', '{"index":9']
    # a clean close checkpoints the head
    lines = (tmp_path / "lmdb" / "checkpoints.jsonl").read_text().splitlines()
    assert lines[-1].startswith('{"index":11,')


@pytest.mark.anyio
async def test_a_bad_checkpoint_setting_stops_start_up(tmp_path: Path) -> None:
    env = {"ADJUTANT_LMDB_CHECKPOINT_EVERY": "0"}
    kernel = Kernel(plugins=[adjutant_lmdb], load_installed=False, home=tmp_path, env=env)
    with pytest.raises(RuntimeError, match="ADJUTANT_LMDB_CHECKPOINT_EVERY must be"):
        async with kernel:
            pass


@pytest.mark.anyio
async def test_the_checkpoint_fsync_interval_is_configurable(tmp_path: Path) -> None:
    env = {"ADJUTANT_LMDB_CHECKPOINT_SYNC_S": "0"}
    async with Kernel(plugins=[adjutant_lmdb], load_installed=False, home=tmp_path,
                      env=env) as kernel:
        assert kernel.stores["log:lmdb"].checkpoint_sync_s == 0
    async with Kernel(plugins=[adjutant_lmdb], load_installed=False, home=tmp_path,
                      env={}) as kernel:
        assert kernel.stores["log:lmdb"].checkpoint_sync_s == 1.0
    for bad in ("-1", "soon", "nan"):
        kernel = Kernel(plugins=[adjutant_lmdb], load_installed=False, home=tmp_path,
                        env={"ADJUTANT_LMDB_CHECKPOINT_SYNC_S": bad})
        with pytest.raises(RuntimeError, match="ADJUTANT_LMDB_CHECKPOINT_SYNC_S must be"):
            async with kernel:
                pass


@pytest.mark.anyio
async def test_keys_are_checked(tmp_path: Path) -> None:
    kv = LmdbKeyValueStore()
    kv.open(tmp_path / "lmdb")
    try:
        with pytest.raises(ValueError, match="1 to 511 bytes"):
            await kv.put("", b"v")
        with pytest.raises(ValueError, match="1 to 511 bytes"):
            await kv.get("k" * 512)
        with pytest.raises(TypeError, match="value must be bytes"):
            await kv.put("k", "text")  # type: ignore[arg-type]
    finally:
        kv.close()


def test_doctor_check(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    kernel = Kernel(plugins=[adjutant_lmdb], load_installed=False, home=tmp_path).load()
    result = kernel.checks["lmdb"].run(kernel)
    assert result.status == "ok", result
    assert "will be created" in result.message
    (tmp_path / "lmdb").write_text("not a directory")  # (root may write anywhere: no chmod)
    result = kernel.checks["lmdb"].run(kernel)
    assert (result.status, "ADJUTANT_HOME" in result.fix) == ("fail", True)
    monkeypatch.setitem(sys.modules, "lmdb", None)  # import lmdb raises ImportError
    result = kernel.checks["lmdb"].run(kernel)
    assert (result.status, "pip install" in result.fix) == ("fail", True)


@pytest.mark.anyio
async def test_reads_and_scans_cross_batches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import adjutant_lmdb._kv as kv_module
    import adjutant_lmdb._log as log_module

    monkeypatch.setattr(log_module, "_READ_BATCH", 3)
    monkeypatch.setattr(kv_module, "_SCAN_BATCH", 3)
    log, kv = LmdbLogStore(), LmdbKeyValueStore()
    log.open(tmp_path / "lmdb")
    kv.open(tmp_path / "lmdb")
    try:
        for n in range(10):
            await log.append(b"r%d" % n)
            await kv.put(f"k/{n}", b"%d" % n)
        await kv.put("l", b"after the prefix")
        assert [i async for i, _ in log.read()] == list(range(10))
        assert [r async for _, r in log.read(7)] == [b"r7", b"r8", b"r9"]
        assert [k async for k, _ in kv.scan("k/")] == [f"k/{n}" for n in range(10)]
        assert len([k async for k, _ in kv.scan()]) == 11
    finally:
        log.close()
        kv.close()


@pytest.mark.anyio
async def test_aclose_completes_in_a_cancelled_scope(tmp_path: Path) -> None:
    log = LmdbLogStore()
    log.open(tmp_path / "lmdb")
    await log.append(b"r0")
    with anyio.CancelScope() as scope:
        scope.cancel()
        await log.aclose()
    assert not log.opened
