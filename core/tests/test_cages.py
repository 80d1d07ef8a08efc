"""Pinned cage roots: the first use pins (device, inode); a later change refuses every
run until the user trusts the path again."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from adjutant.safety._cages import CageChangedError, check_roots, describe, pin_of, trust
from adjutant.testing import Harness, MemoryKeyValueStore, MemoryLogStore

from .test_operator import AllowReads, notes, plan

pytestmark = pytest.mark.anyio


async def test_first_use_pins_and_a_replaced_directory_is_refused(tmp_path: Path) -> None:
    kv = MemoryKeyValueStore()
    root = tmp_path / "w"
    root.mkdir()
    (pin,) = await check_roots(kv, [("workspace", str(root))])
    assert (pin.device, pin.inode) == (root.stat().st_dev, root.stat().st_ino)
    assert await check_roots(kv, [("workspace", str(root))]) == []  # unchanged: fine

    root.rmdir()
    assert await check_roots(kv, [("workspace", str(root))]) == []  # missing: kept, no follow
    root.symlink_to("/")
    with pytest.raises(CageChangedError) as info:
        await check_roots(kv, [("workspace", str(root))])
    message = str(info.value)
    assert "\n" not in message
    assert f"the workspace {root} is not the directory pinned" in message
    assert "is now a symlink to /," in message
    assert f"adjutant workspace trust {root}" in message
    assert (await pin_of(kv, str(root))) == pin  # a refusal never re-pins

    old, new = await trust(kv, str(root))
    assert old == pin and new.target == "/" and new.inode == os.stat("/").st_ino
    assert await check_roots(kv, [("workspace", str(root))]) == []


async def test_a_link_given_the_first_time_is_pinned_at_its_target(tmp_path: Path) -> None:
    kv = MemoryKeyValueStore()
    real, other, link = tmp_path / "real", tmp_path / "other", tmp_path / "link"
    real.mkdir()
    other.mkdir()
    link.symlink_to(real)
    assert "a symlink to" in (await describe(kv, str(link)))["state"]
    (pin,) = await check_roots(kv, [("workspace", str(link))])
    assert pin.target == str(real) and pin.path == str(link)
    assert f"resolved to {real}" in (await describe(kv, str(link)))["state"]
    link.unlink()
    link.symlink_to(other)
    with pytest.raises(CageChangedError, match=str(other)):
        await check_roots(kv, [("workspace", str(link))])
    info = await describe(kv, str(link))
    assert info["ok"] is False and info["state"].startswith("CHANGED")


async def test_renewed_roots_are_pinned_again(tmp_path: Path) -> None:
    kv = MemoryKeyValueStore()
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    await check_roots(kv, [("cage", str(scratch))])
    scratch.rename(tmp_path / "moved")  # (kept: a removed directory's inode is reused)
    scratch.mkdir()
    with pytest.raises(CageChangedError):
        await check_roots(kv, [("cage", str(scratch))])
    (pin,) = await check_roots(kv, [("cage", str(scratch))], renew={str(scratch)})
    assert pin.inode == scratch.stat().st_ino


async def test_a_run_in_a_swapped_workspace_reads_and_runs_nothing() -> None:
    kv, log = MemoryKeyValueStore(), MemoryLogStore()
    async with Harness(notes(), AllowReads(), kv=kv, log=log,
                       mode="execute-with-confirmation") as h:
        (h.workspace / "n.txt").write_text("note")
        assert (await h.run("read n", reply=plan(("notes.read", {"path": "n.txt"})))
                ).status == "executed"
        pinned = await h.records("cage_pinned")
        assert str(h.workspace) in {r["path"] for r in pinned}

        shutil.rmtree(h.workspace)
        h.workspace.symlink_to("/")
        outcome = await h.run("read the hostname",
                              reply=plan(("notes.read", {"path": "etc/hostname"})))
        assert outcome.status == "denied" and outcome.results == []
        assert "is not the directory pinned" in (outcome.error or "")
        assert len(h.provider.requests) == 1  # the model was not even asked
        direct = await h.call("notes.read", caller="test", path="etc/hostname")
        assert direct.status == "denied" and direct.results == []
        with pytest.raises(CageChangedError):
            await h.copilot.bulletin()
        records = await h.records()
        assert [r["kind"] for r in records].count("cage_changed") == 2
        assert not [r for r in records if r["kind"] == "tool_call"
                    and r["args"] == {"path": "etc/hostname"}]
        h.workspace.unlink()  # let the harness clean up its own directory
