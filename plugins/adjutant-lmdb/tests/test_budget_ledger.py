"""Core's budget ledger on this store: a day's calls are folded into its total in one
transaction (``put_many``), every window and ``adjutant status`` figure is the same
after, across a reopen; and reservations made from many threads at once under the data
home's lock never pass a cap together."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import anyio
import pytest

from adjutant.kernel._settings import Budgets, Cap
from adjutant.providers._budget import BudgetExceeded, Ledger, Spend
from adjutant_lmdb import LmdbKeyValueStore

pytestmark = pytest.mark.anyio
TODAY = dt.date(2026, 12, 9)  # a Wednesday


async def test_folding_on_lmdb_keeps_every_figure_across_a_reopen(tmp_path: Path) -> None:
    store = LmdbKeyValueStore()
    store.open(tmp_path / "kv")
    try:
        ledger = Ledger(store, tmp_path / "budget.lock")
        for n in range(45):
            day = TODAY - dt.timedelta(days=n)
            ledger._pruned = day  # recorded as of that day
            for preset, cost, metered in (("strong", 0.25 * (n + 1), True),
                                          ("default", 0.0, False)):
                await ledger.add(preset=preset, tokens=10 + n, cost=cost, metered=metered,
                                 estimated=False, run_id=str(n), when=day)
        days = [TODAY, dt.date(2026, 12, 1), dt.date(2026, 12, 3)]
        before = [(await ledger.spent(d), await ledger.by_preset(d)) for d in days]
        assert await Ledger(store, tmp_path / "budget.lock").prune(TODAY) == 2 * 38
    finally:
        await store.aclose()
    again = LmdbKeyValueStore()
    again.open(tmp_path / "kv")
    try:
        fresh = Ledger(again)
        assert [(await fresh.spent(d), await fresh.by_preset(d)) for d in days] == before
        keys = [key async for key, _ in again.scan("budget")]
        assert len([k for k in keys if k.startswith("budget-day/")]) == 38
        assert len([k for k in keys if k.startswith("budget/")]) == 2 * 7
    finally:
        await again.aclose()


async def test_many_reservations_at_once_never_pass_a_cap_together(tmp_path: Path) -> None:
    """Twenty ledgers (as twenty kernels would have) on one store and lock, reserving
    at once for a cap that fits five: five are held, fifteen refused."""
    store = LmdbKeyValueStore()
    store.open(tmp_path / "kv")
    try:
        budgets = Budgets(day=Cap(cost_usd=1.25))
        held, refused = [], []

        async def one(n: int) -> None:
            ledger = Ledger(store, tmp_path / "budget.lock")
            try:
                held.append(await ledger.reserve(budgets, Spend(100, 0.25, 1),
                                                 preset="strong", run_id=str(n)))
            except BudgetExceeded as exc:
                refused.append(str(exc))

        async with anyio.create_task_group() as tg:
            for n in range(20):
                tg.start_soon(one, n)
        assert (len(held), len(refused)) == (5, 15)
        assert (await Ledger(store).spent())["day"] == Spend(500, 1.25, 5)
        assert all("this day has spent" in why for why in refused)
    finally:
        await store.aclose()
