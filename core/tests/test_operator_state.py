"""Operator state that outlives a run: sessions, grants, presets, artifacts, replay, bundles."""

from __future__ import annotations

import json
import tarfile
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from adjutant.operator._artifacts import redact
from adjutant.operator._sessions import SessionError, SessionStore
from adjutant.testing import Harness, MemoryKeyValueStore, MemoryLogStore, ScriptedApprover

from .test_operator import CONFIRM, AllowReads, notes, plan

pytestmark = pytest.mark.anyio


async def test_session_rehydrates_to_the_live_state() -> None:
    kv, log = MemoryKeyValueStore(), MemoryLogStore()
    async with Harness(notes(), AllowReads(), kv=kv, log=log, mode=CONFIRM,
                       approver=ScriptedApprover(steps=["grant"])) as h:
        await h.run("write a", thread_id="t1",
                    reply=plan(("notes.write", {"path": "a.txt", "text": "x"})))
        await h.copilot.grant("network:notes.read", seconds=60, channel="user")
        live = h.copilot.state()
        stored = await SessionStore(kv).load("t1")
        assert stored["mode"] == live["mode"] == "execute-with-confirmation"
        assert stored["grants"] == live["grants"] == ["network:notes.read"]
        assert stored["plan"][0]["tool"] == "notes.write"


async def test_bad_deltas_are_refused_and_unknown_sessions_named() -> None:
    store = SessionStore(MemoryKeyValueStore())
    await store.start("s", {"a": 1})
    with pytest.raises(SessionError, match="does not apply"):
        await store.apply("s", [{"op": "remove", "path": "/missing"}])
    with pytest.raises(SessionError, match="no session 'nope'"):
        await store.load("nope")
    with pytest.raises(SessionError, match="invalid session id"):
        await store.load("../etc")
    assert await store.load("s") == {"a": 1}


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["a", "b", "c"]), st.integers() | st.text(max_size=5)
                          | st.none()), max_size=20))
def test_snapshot_plus_deltas_equals_applying_them_live(changes: list[tuple[str, Any]]) -> None:
    import anyio

    async def run() -> None:
        store, live = SessionStore(MemoryKeyValueStore()), {"a": 0}
        await store.start("p", live)
        for key, value in changes:
            op = "replace" if key in live else "add"
            await store.apply("p", [{"op": op, "path": f"/{key}", "value": value}])
            live[key] = value
        assert await store.load("p") == live

    anyio.run(run)


async def test_grants_are_time_boxed_user_only_and_widen_the_cage() -> None:
    now = [1000.0]
    async with Harness(notes()) as h:
        copilot = h.operator(wall=lambda: now[0])
        assert not await copilot.grant("cage:/tmp/elsewhere", seconds=60, channel="model")
        assert await copilot.grant("cage:/tmp/elsewhere", seconds=60, channel="user")
        assert "/tmp/elsewhere" in copilot.tool_context("r").cages
        now[0] += 20
        assert copilot.operator_state.grants_left() == {"cage:/tmp/elsewhere": 40.0}
        now[0] += 41
        assert copilot.operator_state.grants_left() == {}
        assert copilot.grants == [] and "/tmp/elsewhere" not in copilot.tool_context("r").cages
        with pytest.raises(ValueError, match="invalid grant"):
            await copilot.grant("sudo", seconds=5, channel="user")
        kinds = [r["kind"] for r in await h.records()]
        assert kinds.count("grant_ignored") == 1 and kinds.count("grant") == 1


async def test_grants_and_preset_persist_across_a_restart(tmp_path: Path) -> None:
    kv, log = MemoryKeyValueStore(), MemoryLogStore()
    (tmp_path / "profiles").mkdir()
    (tmp_path / "profiles" / "careful.json").write_text(
        json.dumps({"model": {"provider": "scripted", "temperature": 0.4}}))
    async with Harness(notes(), kv=kv, log=log, home=tmp_path) as h:
        await h.copilot.grant("write", seconds=3600, channel="user")
        from adjutant import load_profile

        await h.copilot.use_preset(load_profile(tmp_path, "careful"))
    async with Harness(notes(), kv=kv, log=log, home=tmp_path) as h:
        await h.copilot.mode()
        assert h.copilot.grants == ["write"]
        assert h.kernel.profile.name == "careful"
        assert h.kernel.profile.model.temperature == 0.4


async def test_artifacts_land_under_runs_by_day_and_are_logged() -> None:
    async with Harness(notes(), AllowReads(), mode=CONFIRM,
                       approver=ScriptedApprover(steps=["grant"])) as h:
        run = await h.run("write b", reply=plan(("notes.write", {"path": "b.txt",
                                                                "text": "hi\n"})))
        day = time.strftime("%Y-%m-%d", time.gmtime())
        folder = h.kernel.home / "runs" / day / "copilot" / run.run_id
        assert sorted(p.name for p in folder.iterdir()) == ["plan.json", "step-0.json"]
        step = json.loads((folder / "step-0.json").read_text())
        assert step["result"]["status"] == "ok" and "+hi" in step["preview"]
        assert run.logged("artifact")[0]["path"] == str(folder / "step-0.json")


async def test_replay_dry_runs_again_and_reruns_through_the_pipeline() -> None:
    approver = ScriptedApprover(steps=["grant", "grant"])
    async with Harness(notes(), AllowReads(), mode=CONFIRM, approver=approver) as h:
        first = await h.run("write c", reply=plan(("notes.write", {"path": "c.txt",
                                                                  "text": "v1\n"})))
        (h.workspace / "c.txt").write_text("edited since\n")
        preview = await h.observe(h.copilot.replay(first.run_id, 0))
        assert preview.status == "proposed"
        assert "-edited since" in preview.text and "+v1" in preview.text
        assert (h.workspace / "c.txt").read_text() == "edited since\n"  # dry-run only
        again = await h.observe(h.copilot.replay(first.run_id, 0, dry_run=False))
        assert again.statuses == ["ok"]
        assert (h.workspace / "c.txt").read_text() == "v1\n"
        assert len(approver.asked) == 2  # the replay needed its own approval
        assert len(again.asked) == 1
        with pytest.raises(LookupError, match="has no step 7"):
            await h.copilot.replay(first.run_id, 7)


async def test_bug_bundle_redacts_secrets(tmp_path: Path) -> None:
    async with Harness(notes(), AllowReads(), mode=CONFIRM,
                       approver=ScriptedApprover(steps=["grant"])) as h:
        secret = "sk-abcdefghijklmnopqrstuvwx"
        outcome = await h.run(f"store my key {secret} please, token: hunter2hunter2",
                              reply=plan(("notes.write", {"path": "d.txt", "text":
                                                          f"OPENAI_API_KEY={secret}\n"})))
        bundle = await h.copilot.export_bundle(tmp_path / "bug.tar.gz", run_id=outcome.run_id)
        with tarfile.open(bundle) as tar:
            names = tar.getnames()
            blob = b"".join(tar.extractfile(m).read() for m in tar.getmembers())  # type: ignore[union-attr]
        assert {"bundle/log.jsonl", "bundle/profile.json", "bundle/versions.json",
                "bundle/runs/" + outcome.run_id + "/step-0.json"} <= set(names)
        assert secret.encode() not in blob and b"hunter2hunter2" not in blob
        assert b"[REDACTED]" in blob and b"adjutant-core" in blob


def test_redact_keys_and_values() -> None:
    assert redact({"api_key": "abc", "nested": [{"password": "p", "ok": "fine"}]}) == {
        "api_key": "[REDACTED]", "nested": [{"password": "[REDACTED]", "ok": "fine"}]}
    assert redact("Authorization: Bearer abcdef123456") == "Authorization: Bearer [REDACTED]"
    assert "ghp_" not in redact("push with ghp_abcdefghijklmnopqrstuvwxyz0123")
