"""The router and the budgets: which preset a request goes to, asking before it leaves
the machine, refusing what is over a cap with the figures, and never blocking a local
model that costs nothing."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from adjutant.kernel._settings import Budgets, Cap, ModelPreset, Profile, RouterSettings
from adjutant.providers._budget import (
    KEEP_TOTALS_DAYS,
    BudgetExceeded,
    Ledger,
    Spend,
    estimate,
    over_budget,
)
from adjutant.providers._router import estimate_tokens, route
from adjutant.scripted import ScriptedApprover, ScriptedProvider
from adjutant.testing import Harness, MemoryKeyValueStore
from adjutant_hookspecs import ProviderCapabilities, Response, Usage, hookimpl

pytestmark = pytest.mark.anyio

LOCAL = ModelPreset(provider="scripted", model="small")
STRONG = ModelPreset(provider="remote", model="big/model", prompt_cost_per_mtok=2.0,
                     completion_cost_per_mtok=8.0, max_tokens=100)


def profile(**changes: Any) -> Profile:
    base = Profile(model=LOCAL, models={"strong": STRONG},
                   router=RouterSettings(escalate_to="strong", long_tokens=200))
    return base.replace(**changes)


# -- the rules --------------------------------------------------------------------------


def test_short_requests_stay_local_and_heavy_ones_go_to_the_preset_set_up() -> None:
    p = profile()
    short = route(p, tokens=50)
    assert (short.name, short.escalated, short.reason) == ("default", False,
                                                           "short, nothing attached")
    long = route(p, tokens=5000)
    assert (long.name, long.escalated, long.preset) == ("strong", True, STRONG)
    assert "~5,000 tokens" in long.reason
    assert route(p, tokens=10, attachments=1).name == "strong"
    assert "1 file attached" in route(p, tokens=10, attachments=1).reason
    assert route(p, tokens=10, tools=64).name == "strong"


def test_no_rule_picks_a_preset_the_user_did_not_set_up() -> None:
    bare = Profile(model=LOCAL, models={"strong": STRONG})  # no escalate_to
    chosen = route(bare, tokens=1_000_000, attachments=9, tools=900)
    assert chosen.name == "default" and not chosen.escalated
    assert "router.escalate_to" in chosen.reason


def test_the_profile_refuses_a_router_naming_no_preset() -> None:
    from adjutant.kernel._settings import ProfileError, parse_profile

    with pytest.raises(ProfileError, match="names no preset: 'strongest'"):
        parse_profile({"router": {"escalate_to": "strongest"}})
    with pytest.raises(ProfileError, match="may not name a preset 'default'"):
        parse_profile({"models": {"default": {}}})
    with pytest.raises(ProfileError, match=r"must be >= 0.0.*budgets\.day"):
        parse_profile({"budgets": {"day": {"cost_usd": -1}}})


def test_estimates_are_four_characters_a_token() -> None:
    assert estimate_tokens("a" * 400) == 101
    assert estimate(STRONG, 1000) == Spend(1100, (1000 * 2 + 100 * 8) / 1e6, 1)


# -- the caps ---------------------------------------------------------------------------


def test_caps_per_request_and_window_say_the_figures() -> None:
    planned = Spend(1100, 0.0028, 1)
    assert over_budget(Budgets(), planned, {}) is None
    why = over_budget(Budgets(request=Cap(tokens=1000)), planned, {})
    assert why is not None and "1,100 tokens over the cap of 1,000" in why
    why = over_budget(Budgets(day=Cap(cost_usd=0.01)), planned,
                      {"day": Spend(100, 0.008, 3)})
    assert why is not None and "this day has spent 100 tokens, $0.0080" in why
    assert "budgets.day" in why
    assert over_budget(Budgets(month=Cap(cost_usd=0.02)), planned,
                       {"month": Spend(100, 0.008, 3)}) is None


async def test_the_ledger_sums_days_weeks_from_monday_and_months() -> None:
    ledger = Ledger(MemoryKeyValueStore())
    wednesday = dt.date(2026, 11, 25)
    for day, cost in [(wednesday, 0.5), (dt.date(2026, 11, 23), 0.25),   # Monday
                      (dt.date(2026, 11, 22), 0.125), (dt.date(2026, 10, 31), 1.0)]:
        await ledger.add(preset="strong", tokens=10, cost=cost, metered=True,
                         estimated=False, run_id="r", when=day)
    await ledger.add(preset="default", tokens=999, cost=0.0, metered=False, estimated=True,
                     run_id="r", when=wednesday)
    spent = await ledger.spent(wednesday)
    assert spent["day"] == Spend(10, 0.5, 1)        # the local call is not metered
    assert spent["week"] == Spend(20, 0.75, 2)      # Monday 23 .. Wednesday 25
    assert spent["month"] == Spend(30, 0.875, 3)    # not October's
    by_preset = await ledger.by_preset(wednesday)
    assert by_preset["default"] == Spend(999, 0.0, 1)


# -- through the operator ---------------------------------------------------------------


class Remote(ScriptedProvider):
    """A hosted API as the router sees one: remote, and reporting tokens and cost."""

    capabilities = ProviderCapabilities(remote=True)


class RemotePlugin:
    def __init__(self, provider: Remote) -> None:
        self.provider = provider

    @hookimpl
    def register_providers(self, register: Any) -> None:
        register(self.provider)


LONG = "summarize this: " + "lorem ipsum " * 200  # ~600 tokens


async def test_a_long_request_goes_to_the_strong_preset_after_a_yes_and_says_so() -> None:
    remote = Remote(Response(text="from the strong preset"), name="remote",
                    usage=Usage(prompt_tokens=700, completion_tokens=5, cost=0.0015))
    approver = ScriptedApprover(escalate=True)
    async with Harness(RemotePlugin(remote), profile=profile(), approver=approver,
                       mode="execute-with-confirmation") as h:
        local = await h.run("hi", reply=Response(text="local answer"))
        assert local.outcome.text == "local answer" and not approver.escalations
        assert local.logged("route")[-1]["preset"] == "default"

        run = await h.run(LONG)
        assert run.outcome.text == "from the strong preset"
        [asked] = approver.escalations
        assert (asked.preset, asked.model) == ("strong", "remote:big/model")
        assert asked.tokens > 600 and asked.cost > 0
        [said] = [e for e in run.events if getattr(e, "activity_type", "") == "route"]
        assert said.content["escalated"] and said.content["preset"] == "strong"
        route_record = run.logged("route")[-1]
        assert route_record["asked"] and route_record["declined"] is None
        usage = run.logged("usage")[-1]
        assert (usage["preset"], usage["cost"], usage["metered"]) == ("strong", 0.0015, True)
        status = await h.copilot.routing.report()
        assert status["today"]["strong"] == {"tokens": 705, "cost": 0.0015, "calls": 1}


async def test_a_no_keeps_the_request_local_and_the_log_says_why() -> None:
    remote = Remote(name="remote")
    async with Harness(RemotePlugin(remote), profile=profile(),
                       approver=ScriptedApprover(escalate=False),
                       mode="execute-with-confirmation") as h:
        run = await h.run(LONG, reply=Response(text="local after all"))
        assert run.outcome.text == "local after all" and not remote.requests
        record = run.logged("route")[-1]
        assert record["preset"] == "default" and record["asked"]
        assert "not approved" in record["declined"]


async def test_propose_only_asks_too_and_a_frontend_that_cannot_ask_stays_local() -> None:
    remote = Remote(name="remote")
    async with Harness(RemotePlugin(remote), profile=profile(), mode="propose-only") as h:
        run = await h.run(LONG, reply=Response(text="local"))  # the default Approver: no
        assert run.outcome.text == "local" and not remote.requests


async def test_auto_mode_escalates_without_asking() -> None:
    remote = Remote(Response(text="remote"), name="remote")
    approver = ScriptedApprover(escalate=False)
    async with Harness(RemotePlugin(remote), profile=profile(), approver=approver,
                       mode="execute-auto") as h:
        run = await h.run(LONG)
        assert run.outcome.text == "remote" and not approver.escalations


async def test_over_budget_is_refused_before_the_call_with_the_figures() -> None:
    remote = Remote(Response(text="first"), name="remote",
                    usage=Usage(prompt_tokens=700, completion_tokens=5, cost=0.004))
    capped = profile(budgets=Budgets(day=Cap(cost_usd=0.005)))
    async with Harness(RemotePlugin(remote), profile=capped, mode="execute-auto") as h:
        first = await h.run(LONG)
        assert first.outcome.text == "first"
        second = await h.run(LONG)
        assert second.outcome.status == "denied" and len(remote.requests) == 1
        assert "this day has spent" in second.outcome.error
        assert "$0.0040" in second.outcome.error and "budgets.day" in second.outcome.error
        assert second.logged("budget_refused")[-1]["preset"] == "strong"


async def test_a_cost_cap_never_blocks_a_local_model_that_costs_nothing() -> None:
    broke = profile(budgets=Budgets(request=Cap(tokens=0, cost_usd=0.0),
                                    day=Cap(tokens=0, cost_usd=0.0)))
    async with Harness(RemotePlugin(Remote(name="remote")), profile=broke,
                       mode="execute-auto") as h:
        for _ in range(3):
            run = await h.run("hi", reply=Response(text="free"))
            assert run.outcome.text == "free"
        assert not run.logged("usage")  # nothing metered is in the log ...
        report = await h.copilot.routing.report()
        assert report["today"]["default"]["calls"] == 3  # ... yet every call is counted


async def test_a_pinned_model_file_that_changed_is_refused(tmp_path: Any) -> None:
    import hashlib

    model = tmp_path / "model.gguf"
    model.write_bytes(b"GGUF weights")
    pin = hashlib.sha256(b"GGUF weights").hexdigest()
    pinned = Profile(model=ModelPreset(provider="scripted", model=str(model), sha256=pin))
    async with Harness(profile=pinned) as h:
        assert (await h.run("hi", reply=Response(text="ok"))).outcome.text == "ok"
        model.write_bytes(b"other weights")  # swapped behind the profile's back
        run = await h.run("hi", reply=Response(text="never"))
        assert run.outcome.status == "failed"
        assert "is not the model the profile pinned" in run.outcome.error
        assert h.provider.pending == 1  # the model was never asked


async def test_try_a_stronger_model_retries_the_same_request_under_one_ask() -> None:
    remote = Remote(Response(text="the strong answer"), name="remote",
                    usage=Usage(prompt_tokens=40, completion_tokens=4, cost=0.0001))
    approver = ScriptedApprover(escalate=True)
    async with Harness(RemotePlugin(remote), profile=profile(), approver=approver,
                       mode="execute-with-confirmation") as h:
        first = await h.run("what is a monad?", reply=Response(text="a weak answer"))
        again = await h.observe(h.copilot.stronger())
        assert again.outcome.text == "the strong answer"
        assert remote.requests[0].prompt.count("what is a monad?") == 1
        [asked] = approver.escalations  # the estimate was shown before it ran
        assert asked.preset == "strong" and asked.reason == "try a stronger model"
        assert asked.cost > 0
        record = again.logged("route")[-1]
        assert (record["preset"], record["ask_id"]) == ("strong", first.run_id)
        with pytest.raises(LookupError, match="no preset stronger than 'strong'"):
            await h.copilot.stronger(again.run_id)
        with pytest.raises(LookupError, match="no request nope"):
            await h.copilot.stronger("nope")

        approver.escalate = False
        declined = await h.observe(h.copilot.stronger(first.run_id))
        assert declined.outcome.status == "denied" and len(remote.requests) == 1


async def test_another_program_asking_never_sends_a_request_off_the_machine() -> None:
    """An MCP client's request (a `Requester`) is never escalated to a remote preset by
    the terminal's approver, even with a user at the keyboard: the question is not asked
    and nothing is read from the terminal."""
    import io

    from adjutant.cli._approver import TerminalApprover
    from adjutant.operator._consent import Escalation, Requester

    out = io.StringIO()
    approver = TerminalApprover(True, tty=out)  # would read from `out`: never reached
    question = Escalation(run_id="r", preset="strong", model="openrouter:x",
                          reason="long", tokens=10, cost=0.1)
    with Requester("an MCP client").asking():
        assert await approver.approve_escalation(question) is False
    assert out.getvalue() == ""


# -- reservations and pruning -----------------------------------------------------------

ONE_CALL = Budgets(day=Cap(tokens=1500))  # fits one call estimated at 1,100 tokens, not two


async def test_a_reservation_holds_the_estimate_until_settled_or_released() -> None:
    ledger = Ledger(MemoryKeyValueStore())
    planned = Spend(1100, 0.0028, 1)
    held = await ledger.reserve(ONE_CALL, planned, preset="strong", run_id="r1")
    assert (await ledger.spent())["day"] == planned  # counted while the call runs ...
    assert await ledger.held() == planned
    assert await ledger.day(dt.date.today()) == []   # ... but it is not a call yet
    with pytest.raises(BudgetExceeded, match="this day has spent 1,100 tokens"):
        await ledger.reserve(ONE_CALL, planned, preset="strong", run_id="r2")
    await ledger.release(held)  # the call failed: the budget is whole again
    assert (await ledger.spent())["day"] == Spend()
    held = await ledger.reserve(ONE_CALL, planned, preset="strong", run_id="r3")
    await ledger.settle(held, tokens=300, cost=0.001, estimated=False)
    assert (await ledger.spent())["day"] == Spend(300, 0.001, 1)  # what it really spent
    assert await ledger.held() == Spend()
    [call] = await ledger.day(dt.date.today())
    assert (call["run_id"], call["tokens"], call["estimated"]) == ("r3", 300, False)
    assert "reserved" not in call


@pytest.fixture
def sleeper() -> Any:
    """A real process that would live a minute."""
    import subprocess
    import sys

    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    yield child
    child.kill()
    child.wait()


async def test_a_reservation_expires_with_its_process_or_its_hold(sleeper: Any) -> None:
    """A reservation whose process was killed stops counting at once; one from another
    machine (or boot) counts until its hold runs out, never longer."""
    import json
    import signal

    import anyio

    from adjutant.providers import _budget

    kv = MemoryKeyValueStore()
    now = [1000.0]
    ledger = Ledger(kv, clock=lambda: now[0], hold_s=60.0)
    child = sleeper
    entry = {"preset": "strong", "tokens": 1100, "cost": 0.0028, "metered": True,
             "reserved": True, "pid": child.pid, "started": _budget._started(child.pid),
             "boot": _budget._boot(), "expires": now[0] + 60}
    today = dt.date.today().isoformat()
    await kv.put(f"budget/{today}/theirs", json.dumps(entry).encode())
    await kv.put(f"budget/{today}/elsewhere", json.dumps(
        entry | {"boot": "another-machine/boot", "tokens": 7}).encode())
    assert (await ledger.spent())["day"].tokens == 1107  # both held
    child.send_signal(signal.SIGKILL)
    await anyio.to_thread.run_sync(child.wait)
    assert (await ledger.spent())["day"].tokens == 7  # the dead process's is gone
    now[0] += 61
    assert (await ledger.spent())["day"] == Spend()  # the other's hold ran out
    held = await ledger.reserve(ONE_CALL, Spend(1100, 0.0028, 1), preset="strong",
                                run_id="r")  # the budget is whole again
    assert held.planned.tokens == 1100


def _calls() -> list[tuple[dt.date, str, int, float, bool]]:
    """Seven weeks of calls ending on Wednesday 2026-12-09: a metered and a local one a
    day, and two metered ones every third day."""
    calls = []
    for n in range(49):
        day = dt.date(2026, 12, 9) - dt.timedelta(days=n)
        calls.append((day, "strong", 100 + n, 0.01 * (n + 1), True))
        calls.append((day, "default", 1000, 0.0, False))
        if n % 3 == 0:
            calls.append((day, "big", 7, 0.5, True))
    return calls


async def _figures(ledger: Ledger, days: list[dt.date]) -> list[Any]:
    return [(await ledger.spent(day), await ledger.by_preset(day)) for day in days]


async def test_pruning_folds_old_days_and_every_cap_and_status_figure_stays() -> None:
    kv = MemoryKeyValueStore()
    before = Ledger(kv)
    for day, preset, tokens, cost, metered in _calls():
        before._pruned = day  # recorded as of then: no pruning yet
        await before.add(preset=preset, tokens=tokens, cost=cost, metered=metered,
                         estimated=False, run_id="r", when=day)
    today = dt.date(2026, 12, 9)
    days = [today, dt.date(2026, 12, 1), dt.date(2026, 12, 2), dt.date(2026, 12, 7)]
    expected = await _figures(before, days)
    keys = len(kv.data)

    deleted = await Ledger(kv).prune(today)
    assert deleted == len([c for c in _calls() if c[0] < dt.date(2026, 12, 3)])
    assert len(kv.data) == keys - deleted + len({c[0] for c in _calls()
                                                 if c[0] < dt.date(2026, 12, 3)})
    assert not any(k.startswith("budget/2026-12-02/") for k in kv.data)  # folded
    assert any(k.startswith("budget/2026-12-03/") for k in kv.data)  # seven days kept
    after = Ledger(kv)  # a fresh process: nothing cached
    assert await _figures(after, days) == expected
    assert (await after.spent(today))["month"].calls == 9 + 3  # 9 days, 3 with two calls
    # a day whose total was written but whose calls a crash left behind counts once
    await kv.put("budget/2026-11-30/left-behind", b'{"preset": "strong", "tokens": 5, '
                 b'"cost": 9.0, "metered": true}')
    assert await _figures(Ledger(kv), days) == expected
    assert await Ledger(kv).prune(today) == 1  # and the next prune removes it
    # a year on, the totals no window reaches go too
    assert await Ledger(kv).prune(today + dt.timedelta(days=KEEP_TOTALS_DAYS + 60)) > 0
    assert not kv.data


async def test_the_first_record_of_a_day_prunes_and_spend_in_a_window_is_never_lost() -> None:
    kv = MemoryKeyValueStore()
    ledger = Ledger(kv)
    monday = dt.date(2026, 12, 7)
    for n in range(1, 12):  # a call a day until Monday, recorded on its day
        await ledger.add(preset="strong", tokens=10, cost=1.0, metered=True,
                         estimated=False, run_id="r", when=monday - dt.timedelta(days=n))
    await ledger.add(preset="strong", tokens=10, cost=1.0, metered=True, estimated=False,
                     run_id="r", when=monday)
    assert any(k.startswith("budget-day/") for k in kv.data)  # older days were folded
    spent = await Ledger(kv).spent(monday)
    assert spent["month"] == Spend(70, 7.0, 7)  # December 1 to 7, folded or not
    assert spent["week"] == Spend(10, 1.0, 1)


async def test_a_failed_call_gives_its_reservation_back_and_a_stopped_one_keeps_it() -> None:
    """Through the operator, on a day's cap that fits one call: a call the backend
    refused (a `ProviderError`) holds nothing after; one stopped mid-stream may have
    been billed, so its estimate stays as spent and the next is refused."""
    import anyio

    from adjutant_hookspecs import ProviderError

    remote = Remote(ProviderError("402: insufficient credits"), name="remote",
                    usage=Usage(prompt_tokens=700, completion_tokens=5, cost=0.001))
    one_call = profile(budgets=Budgets(day=Cap(tokens=1500)))  # an estimate is ~1,050
    async with Harness(RemotePlugin(remote), profile=one_call, mode="execute-auto") as h:
        failed = await h.run(LONG)
        assert failed.outcome.status == "failed", failed.outcome.error
        assert "insufficient credits" in \
            failed.outcome.error
        ledger = h.copilot.routing.ledger()
        assert ledger is not None and (await ledger.spent())["day"] == Spend()

        remote.delay = 0.05
        remote.queue(" ".join(["word"] * 200))
        async with anyio.create_task_group() as tg:
            async def stop_soon() -> None:
                await anyio.sleep(0.3)
                h.copilot.cancel()
            tg.start_soon(stop_soon)
            stopped = await h.run(LONG)
        assert stopped.status == "cancelled" and len(remote.requests) == 2
        day = (await ledger.spent())["day"]
        assert day.calls == 1 and 1000 < day.tokens <= 1500  # the estimate, kept
        [kept] = await ledger.day(dt.date.today())
        assert kept["estimated"] and kept["preset"] == "strong"
        refused = await h.run(LONG)
        assert refused.outcome.status == "denied" and len(remote.requests) == 2


async def test_a_link_planted_as_the_lock_is_refused_not_followed(tmp_path: Any) -> None:
    target = tmp_path / "precious"
    target.write_bytes(b"keep me")
    (tmp_path / "budget.lock").symlink_to(target)
    ledger = Ledger(MemoryKeyValueStore(), tmp_path / "budget.lock")
    with pytest.raises(BudgetExceeded, match=r"budget lock .*budget.lock cannot be opened"):
        await ledger.reserve(ONE_CALL, Spend(1100, 0.0028, 1), preset="strong", run_id="r")
    await ledger.add(preset="default", tokens=5, cost=0.0, metered=False, estimated=True,
                     run_id="r")  # recording a local call still works
    assert len(await ledger.day(dt.date.today())) == 1
    assert target.read_bytes() == b"keep me" and (tmp_path / "budget.lock").is_symlink()


async def test_the_lock_excludes_another_ledger_of_the_same_process(tmp_path: Any) -> None:
    """Two kernels in one process on one data home (each its own ledger): the flock is
    per open file, so the second waits for the first."""
    import anyio

    kv = MemoryKeyValueStore()
    first, second = Ledger(kv, tmp_path / "budget.lock"), Ledger(kv, tmp_path / "budget.lock")
    order = []
    async with anyio.create_task_group() as tg, first.locked():
        async def other() -> None:
            async with second.locked():
                order.append("second")
        tg.start_soon(other)
        await anyio.sleep(0.2)
        order.append("first")
    assert order == ["first", "second"]
