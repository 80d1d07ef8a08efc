"""Stores are chosen by the profile: named there, or the only durable
one; an ambiguous or missing choice is refused, never guessed."""

from __future__ import annotations

from typing import Any

import pytest

from adjutant import Copilot, ModelPreset, NoActionLogError, Profile, ProfileError, parse_profile
from adjutant._checks import check_log_store
from adjutant.kernel._stores import StoreChoiceError, choose_store
from adjutant.testing import Harness, MemoryKeyValueStore, MemoryLogStore, ScriptedProvider
from adjutant_hookspecs import hookimpl

pytestmark = pytest.mark.anyio


class DiskLog(MemoryLogStore):
    durable = True  # stands in for a durable store (adjutant-lmdb)


class DiskKv(MemoryKeyValueStore):
    durable = True


def stores(*objs: Any) -> dict[str, Any]:
    return {f"{o.kind}:{o.name}": o for o in objs}


def test_unnamed_the_only_durable_store_is_chosen_over_in_memory_ones() -> None:
    disk, memory = DiskLog("disk"), MemoryLogStore()
    assert choose_store(stores(memory, disk), "log") is disk
    assert choose_store(stores(memory), "log") is memory
    assert choose_store(stores(memory), "kv") is None


def test_two_durable_stores_unnamed_are_ambiguous_and_refused() -> None:
    with pytest.raises(StoreChoiceError, match=r"several log stores .*a, b.*\"stores\""):
        choose_store(stores(DiskLog("a"), DiskLog("b")), "log")


def test_the_profile_names_the_store_even_an_in_memory_one() -> None:
    memory, disk = MemoryLogStore(), DiskLog("disk")
    assert choose_store(stores(memory, disk), "log", "memory") is memory
    with pytest.raises(StoreChoiceError, match="names log store 'lmdb', which is not "
                                               r"registered \(registered: memory, disk\)"):
        choose_store(stores(memory, disk), "log", "lmdb")


def test_a_profile_file_may_name_stores_and_only_log_and_kv() -> None:
    assert parse_profile({"stores": {"log": "lmdb", "kv": "lmdb"}}).stores == {
        "log": "lmdb", "kv": "lmdb"}
    with pytest.raises(ProfileError):
        parse_profile({"stores": {"cache": "lmdb"}})


def extra(*objs: Any) -> Any:
    class Extra:
        name = "extra-stores"

        @hookimpl
        def register_stores(self, register: Any) -> None:
            for obj in objs:
                register(obj)
    return Extra()


async def test_the_operator_writes_where_the_profile_says() -> None:
    provider = ScriptedProvider()
    disk_log, disk_kv = DiskLog("disk"), DiskKv("disk")
    named = Profile(model=ModelPreset(provider=provider.name),
                    stores={"log": "memory", "kv": "memory"})
    async with Harness(extra(disk_log, disk_kv), provider=provider, profile=named) as h:
        copilot = Copilot(h.kernel)
        await copilot.set_mode("listen-only", channel="user")
        assert [r["kind"] for r in await copilot.log.records()] == ["mode"]
        assert copilot.log.store is h.log
        assert await h.kv.get("operator/mode") == b"listen-only"
        assert await disk_kv.get("operator/mode") is None
        assert check_log_store(h.kernel).message == "action log: memory; state: memory"
    unnamed = Profile(model=ModelPreset(provider=provider.name))
    async with Harness(extra(disk_log, DiskLog("other")), provider=provider,
                       profile=unnamed) as h:
        copilot = Copilot(h.kernel)
        with pytest.raises(NoActionLogError, match="several log stores"):
            await copilot.set_mode("listen-only", channel="user")
        assert check_log_store(h.kernel).status == "fail"
