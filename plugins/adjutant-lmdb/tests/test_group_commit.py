"""Group commit: a step costs one durable commit, and a kill still loses nothing an
effect depends on.

The kernel's action log makes a step's intent (``tool_call``, with its ``decision``)
durable before the tool runs, and lets the step's ``result`` and ``artifact`` ride
with the next step's intent or the run's outcome. Proved here through real SIGKILLs
of a real operator on a real LMDB log: every effect found on disk has its intent in
the log, every step before the one the kill cut has its result, and whatever the
log holds verifies.
"""

from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from adjutant import ActionLog, ActionLogError
from adjutant.scripted import MemoryLogStore
from adjutant_hookspecs.records import (
    ArtifactRecord,
    DecisionRecord,
    EventRecord,
    OutcomeRecord,
    ResultRecord,
    ToolCallRecord,
)
from adjutant_lmdb import LmdbLogStore

#: A real operator on a real LMDB log, running plans of STEPS steps of a tool whose
#: effect is a file named after the run and the step. With KILL_AT >= 0 the tool kills
#: its own process right after the effect of that step (the worst moment: the effect
#: happened, its result is not written); else it runs until the test kills it.
OPERATOR = r"""
import importlib, os, signal, sys
from pathlib import Path

import anyio

import adjutant_lmdb
from adjutant import Copilot, Kernel, ModelPreset, Profile
from adjutant.scripted import ScriptedApprover, ScriptedProvider
from adjutant_hookspecs import (ExecutionResult, Plan, ToolCall, ToolDeclaration, ToolSafety,
                                hookimpl)

home, workspace, effects, level = Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3]), sys.argv[4]
kill_at, steps, runs = int(sys.argv[5]), int(sys.argv[6]), int(sys.argv[7])


class Effect:
    declaration = ToolDeclaration(
        name="crash.effect", version="1", description="Leaves a file behind.",
        args_schema={"type": "object", "properties": {"i": {"type": "integer"}},
                     "required": ["i"], "additionalProperties": False},
        safety=ToolSafety(level=level, writes=level == "write"))

    async def dry_run(self, call, ctx):
        return ExecutionResult(tool=call.tool, args=call.args, status="dry_run",
                               dry_run_diff=f"creates {ctx.run_id}-{call.args['i']}")

    async def execute(self, call, ctx):
        i = call.args["i"]
        fd = os.open(effects / f"{ctx.run_id}-{i}", os.O_WRONLY | os.O_CREAT, 0o644)
        os.close(fd)
        if i == kill_at:
            os.kill(os.getpid(), signal.SIGKILL)  # right after the effect
        return ExecutionResult(tool=call.tool, args=call.args, status="ok", stdout="done")


provider = ScriptedProvider()


class Plugin:
    name = "crash"

    @hookimpl
    def register_tools(self, register):
        register(Effect())

    @hookimpl
    def register_providers(self, register):
        register(provider)


async def main():
    profile = Profile(model=ModelPreset(provider=provider.name, model="script"))
    plugins = [Plugin(), adjutant_lmdb]
    for policy in ("adjutant_guard", "adjutant_write_gate"):
        try:
            plugins.append(importlib.import_module(policy))
        except ImportError:  # this plugin tested alone: no policy, every step asks (granted)
            pass
    async with Kernel(plugins=plugins, load_installed=False, home=home, profile=profile,
                      env={"HOME": str(home.parent), "XDG_CACHE_HOME": str(home / "cache")},
                      strict=True) as kernel:
        copilot = Copilot(kernel, cwd=workspace, max_steps=steps + 1,
                          approver=ScriptedApprover(plan="step", default="grant"))
        await copilot.set_mode("execute-with-confirmation", channel="user")
        os.write(1, b"ready\n")
        for _ in range(runs):
            provider.queue(Plan(steps=tuple(ToolCall(tool="crash.effect", args={"i": i})
                                            for i in range(steps))))
            outcome = await copilot.handle("leave files behind")
            if outcome.status != "executed":
                raise SystemExit(f"run {outcome.run_id}: {outcome.status} {outcome.error}")


anyio.run(main)
"""


def _operator(tmp: Path, level: str, kill_at: int, steps: int, runs: int
              ) -> tuple[subprocess.Popen[bytes], Path, Path]:
    home, workspace, effects = tmp / "data", tmp / "workspace", tmp / "effects"
    for directory in (home, workspace, effects):
        directory.mkdir(parents=True, exist_ok=True)
    child = subprocess.Popen(
        [sys.executable, "-c", OPERATOR, str(home), str(workspace), str(effects), level,
         str(kill_at), str(steps), str(runs)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert child.stdout is not None
    line = child.stdout.readline()
    if line != b"ready\n":
        child.kill()
        _, err = child.communicate()
        raise AssertionError(f"the operator did not start: {line!r} {err.decode()[-2000:]}")
    return child, home / "lmdb", effects


async def _log(path: Path) -> tuple[list[dict[str, Any]], Any]:
    """The records (the next start closes the killed run first) and the verify report."""
    store = LmdbLogStore()
    store.open(path)
    try:
        return [json.loads(raw) async for _, raw in store.read()], await store.verify()
    finally:
        await store.aclose()


def _check(records: list[dict[str, Any]], report: Any, effects: Path) -> dict[str, Any] | None:
    """The contract, whatever the kill's timing: the log verifies, every effect on disk
    has its intent in the log, and a result is in the log for every step whose run
    went on (a later intent) or ended. Returns the run the kill cut (None: it landed
    between runs)."""
    assert report.ok, report.summary()
    intents = {(r["run_id"], r["step"]) for r in records if r["kind"] == "tool_call"}
    results = {(r["run_id"], r["step"]) for r in records if r["kind"] == "result"}
    for effect in effects.iterdir():
        run_id, step = effect.name.rsplit("-", 1)
        assert (run_id, int(step)) in intents, f"effect {effect.name} without its intent"
    runs: dict[str, list[dict[str, Any]]] = {}
    for record in records:
        if record.get("run_id"):
            runs.setdefault(record["run_id"], []).append(record)
    cut = [r for r in records if r["kind"] == "outcome" and r["status"] == "interrupted"]
    assert len(cut) <= 1, cut
    for run_id, mine in runs.items():
        ended = mine[-1]["kind"] == "outcome"
        assert ended, f"run {run_id} was neither ended nor closed as interrupted"
        steps = sorted(step for rid, step in intents if rid == run_id)
        # every step but the last one a kill cut has its result
        finished = steps[:-1] if cut and run_id == cut[0]["run_id"] else steps
        assert all((run_id, s) in results for s in finished), (run_id, mine)
    return cut[0] if cut else None


@pytest.mark.parametrize("level", ["read", "write"])
def test_a_kill_right_after_an_effect_leaves_its_intent_and_earlier_results(
        tmp_path: Path, level: str) -> None:
    """The tool kills the operator right after its effect: its intent is in the log,
    the results of the steps before it too, and the next start names it as the step
    that may have taken effect unrecorded. ``write``: each step is asked and granted
    (the log is flushed before asking), ``read``: no question, one commit a step."""
    rng = random.Random()
    for round_ in range(2):
        kill_at = rng.randrange(5)
        where = tmp_path / f"{level}-{round_}"
        child, path, effects = _operator(where, level, kill_at, steps=5, runs=1)
        _, err = child.communicate(timeout=60)
        assert child.returncode == -signal.SIGKILL, err.decode()[-2000:]
        records, report = anyio.run(_log, path)
        cut = _check(records, report, effects)
        assert cut is not None
        assert sorted(int(e.name.rsplit("-", 1)[1]) for e in effects.iterdir()) == \
            list(range(kill_at + 1))
        unfinished = cut["interrupted"]["tool_call_without_result"]
        assert (unfinished["step"], unfinished["tool"]) == (kill_at, "crash.effect")
        assert "its effect may have happened unrecorded" in cut["error"]


def test_a_kill_at_any_moment_leaves_no_effect_without_its_intent(
        tmp_path: Path) -> None:
    """Killed from outside at a random moment of a stream of runs and steps."""
    rng = random.Random()
    for round_ in range(4):
        where = tmp_path / f"round-{round_}"
        child, path, effects = _operator(where, "read", -1, steps=4, runs=1000)
        time.sleep(rng.uniform(0.05, 0.4))
        child.send_signal(signal.SIGKILL)
        child.communicate(timeout=60)
        records, report = anyio.run(_log, path)
        _check(records, report, effects)


# -- the kernel's side: barriers and what rides with them --------------------------------


class Counting:
    """A log store that counts its commits (`append_many` and `append` calls)."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.name, self.kind, self.commits = inner, "counting", "log", 0
        self.fail: BaseException | None = None

    async def append(self, record: bytes) -> int:
        self.commits += 1
        if self.fail is not None:
            raise self.fail
        return int(await self.inner.append(record))

    async def append_many(self, records: list[bytes]) -> list[int]:
        self.commits += 1
        if self.fail is not None:
            raise self.fail
        return [int(i) for i in await self.inner.append_many(records)]

    def read(self, start: int = 0) -> Any:
        return self.inner.read(start)

    async def aclose(self) -> None:
        pass


def decision(run_id: str, step: int, tool: str) -> DecisionRecord:
    return DecisionRecord(run_id=run_id, step=step, tool=tool, stage="run", args={},
                          decision="allow", policy=None, reason="", verdicts=[])


def tool_call(run_id: str, step: int, tool: str) -> ToolCallRecord:
    return ToolCallRecord(run_id=run_id, step=step, tool=tool, args={}, cwd="/",
                          digest=None, approved=False)


def result(run_id: str, step: int, tool: str) -> ResultRecord:
    return ResultRecord(run_id=run_id, step=step, tool=tool, args={}, status="ok")



@pytest.mark.anyio
async def test_deferred_records_ride_with_the_next_barrier_in_one_commit(
        open_log: Callable[..., LmdbLogStore]) -> None:
    store = Counting(open_log())
    log = ActionLog({"log:counting": store})
    log.defer(decision("r", 0, "t"))
    assert store.commits == 0
    index = await log.record(tool_call("r", 0, "t"))
    log.defer(result("r", 0, "t"))
    log.defer(ArtifactRecord(run_id="r", step=0, path=None))
    assert (index, store.commits) == (1, 1)
    assert await log.record(OutcomeRecord(run_id="r", status="executed")) == 4
    assert store.commits == 2
    assert await log.flush() == []  # nothing queued: no commit
    assert store.commits == 2
    kinds = [r["kind"] for r in await log.records()]
    assert kinds == ["decision", "tool_call", "result", "artifact", "outcome"]
    assert (await store.inner.verify()).ok


@pytest.mark.anyio
async def test_concurrent_barriers_share_commits_and_keep_each_runs_order(
        open_log: Callable[..., LmdbLogStore]) -> None:
    """Two runs on one operator: records land in the order queued, each barrier
    returns its own record's index, and a result is never after its run's next
    intent."""
    store = Counting(open_log())
    log = ActionLog({"log:counting": store})

    async def run(name: str) -> list[int]:
        got = []
        for step in range(20):
            log.defer(decision(name, step, "t"))
            got.append(await log.record(tool_call(name, step, "t")))
            await anyio.lowlevel.checkpoint()
            log.defer(result(name, step, "t"))
        got.append(await log.record(OutcomeRecord(run_id=name, status="executed")))
        return got

    indexes: dict[str, list[int]] = {}

    async def keep(name: str) -> None:
        indexes[name] = await run(name)

    async with anyio.create_task_group() as tg:
        for name in ("a", "b", "c"):
            tg.start_soon(keep, name)
    records = await log.records()
    assert len(records) == 3 * 61
    assert store.commits < 3 * 21  # some barriers found their records written
    for name, mine in indexes.items():
        assert [records[i]["kind"] for i in mine] == ["tool_call"] * 20 + ["outcome"]
        assert all(records[i]["run_id"] == name for i in mine)
        kinds = [(r["kind"], r.get("step")) for r in records if r["run_id"] == name]
        assert kinds == [(kind, step) for step in range(20)
                         for kind in ("decision", "tool_call", "result")] + [("outcome", None)]
    assert (await store.inner.verify()).ok


@pytest.mark.anyio
async def test_a_failed_barrier_names_the_step_whose_result_it_carried() -> None:
    store = Counting(MemoryLogStore())
    log = ActionLog({"log:counting": store})
    await log.record(tool_call("r", 0, "shell.exec"))
    log.defer(result("r", 0, "shell.exec"))
    store.fail = OSError(28, "No space left on device")
    with pytest.raises(ActionLogError) as failed:
        await log.record(OutcomeRecord(run_id="r", status="executed"))
    assert failed.value.ran == "shell.exec"
    assert "after shell.exec ran: its result may be missing" in str(failed.value)
    with pytest.raises(ActionLogError) as again:  # kept, in order, and said again
        await log.flush()
    assert again.value.ran == "shell.exec"
    store.fail = None
    assert await log.record(EventRecord(source="system", text="disk freed")) == 3
    assert [r["kind"] for r in await log.records()] == [
        "tool_call", "result", "outcome", "event"]
    assert len(store.inner.records) == 4


@pytest.mark.anyio
async def test_a_failed_barrier_names_only_its_own_runs_step() -> None:
    """Run b's barrier carries run a's result: b is told that nothing ran, a is told
    at its own next barrier that its step's result may be missing."""
    store = Counting(MemoryLogStore())
    log = ActionLog({"log:counting": store})
    log.defer(result("a", 0, "fs.write"))
    store.fail = OSError(28, "No space left on device")
    with pytest.raises(ActionLogError, match="nothing was run"):
        await log.record(tool_call("b", 0, "fs.read"))
    with pytest.raises(ActionLogError) as failed:
        await log.record(OutcomeRecord(run_id="a", status="executed"))
    assert failed.value.ran == "fs.write"


@pytest.mark.anyio
async def test_an_intent_that_cannot_be_written_says_nothing_ran() -> None:
    store = Counting(MemoryLogStore())
    log = ActionLog({"log:counting": store})
    log.defer(decision("r", 0, "fs.write"))
    store.fail = OSError(28, "No space left on device")
    with pytest.raises(ActionLogError, match="nothing was run"):
        await log.record(tool_call("r", 0, "fs.write"))



# -- the store's side: checkpoint lines written with each commit, fsync'd in time -------


@pytest.mark.parametrize(("sync_s", "synced"), [(0.0, 6), (3600.0, 1)])
def test_checkpoint_lines_are_written_at_once_and_fsynced_as_configured(
        open_log: Callable[..., LmdbLogStore], lmdb_dir: Path,
        monkeypatch: pytest.MonkeyPatch, sync_s: float, synced: int) -> None:
    from adjutant_lmdb import _files

    store = open_log(checkpoint_sync_s=sync_s)
    calls: list[int] = []
    real = _files.sync

    def counted(fd: int) -> None:
        calls.append(fd)
        real(fd)

    monkeypatch.setattr(_files, "sync", counted)
    for n in range(6):
        store._append(b'{"kind":"test","n":%d}' % n)
        lines = (lmdb_dir / "checkpoints.jsonl").read_bytes().splitlines()
        assert json.loads(lines[-1])["index"] == n  # each commit checkpointed at once
    fd = store._checkpoints.fd if store._checkpoints is not None else -1
    assert calls.count(fd) == synced
    store.close()  # whatever is not fsync'd yet is at close
    assert calls.count(fd) == (6 if sync_s == 0 else 2)


def test_a_negative_checkpoint_sync_is_refused(open_log: Callable[..., LmdbLogStore]) -> None:
    with pytest.raises(ValueError, match="checkpoint_sync_s"):
        open_log(checkpoint_sync_s=-1)


@pytest.mark.anyio
async def test_the_run_index_follows_a_whole_step_in_one_commit(
        open_log: Callable[..., LmdbLogStore]) -> None:
    def body(kind: str, run_id: str, **fields: Any) -> bytes:
        return json.dumps({"kind": kind, "time": 1.0, "run_id": run_id, **fields},
                          separators=(",", ":")).encode()

    store = open_log()
    await store.append_many([
        body("prompt", "r", text="x"), body("decision", "r", step=0, tool="a"),
        body("tool_call", "r", step=0, tool="a"), body("result", "r", step=0, tool="a"),
        body("decision", "r", step=1, tool="b"), body("tool_call", "r", step=1, tool="b"),
        body("direct_call", "gone", tool="c"), body("outcome", "gone", status="executed")])
    (run,) = await store.open_runs()
    assert (run["run_id"], run["first"], run["last"], run["steps"]) == ("r", 0, 5, 2)
    assert run["running"] == {"step": 1, "tool": "b", "record": 5}
    await store.append_many([body("result", "r", step=1, tool="b"),
                             body("artifact", "r", step=1, path=None)])
    (run,) = await store.open_runs()
    assert (run["running"], run["last"]) == (None, 9)
    await store.append(body("outcome", "r", status="executed"))
    assert await store.open_runs() == []
