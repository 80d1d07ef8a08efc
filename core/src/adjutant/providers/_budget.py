"""Budgets: what model calls spent, and whether the next one may run.

Each call's spend is one key in the profile's key-value store,
``budget/<YYYY-MM-DD>/<id>`` (a key per call: two processes never race on a total),
holding the preset, tokens, cost and whether the call was *metered* (it costs money or
leaves the machine). Caps (`Budgets`: per request, calendar day, week from Monday,
month) are checked before a metered call against the estimate plus what the window
already spent; an unmetered call (a local model, prices 0) is counted, never blocked.
"""

from __future__ import annotations

import datetime as dt
import json
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..kernel._settings import Budgets, Cap, ModelPreset

__all__ = ["BudgetExceeded", "Ledger", "Spend", "estimate", "over_budget"]

PREFIX = "budget/"
WINDOWS = ("day", "week", "month")


@dataclass(frozen=True)
class Spend:
    """Tokens (prompt and completion), US dollars and calls."""

    tokens: int = 0
    cost: float = 0.0
    calls: int = 0

    def __add__(self, other: Spend) -> Spend:
        return Spend(self.tokens + other.tokens, self.cost + other.cost,
                     self.calls + other.calls)

    def describe(self) -> str:
        return f"{self.tokens:,} tokens, ${self.cost:.4f}"


class BudgetExceeded(Exception):
    """A call refused before it ran; the message carries the figures and what to do."""


def estimate(preset: ModelPreset, prompt_tokens: int) -> Spend:
    """The most a call can spend: its prompt plus ``max_tokens`` of reply, at the
    preset's prices."""
    cost = (prompt_tokens * preset.prompt_cost_per_mtok
            + preset.max_tokens * preset.completion_cost_per_mtok) / 1e6
    return Spend(prompt_tokens + preset.max_tokens, cost, 1)


def _over(cap: Cap, spend: Spend) -> str | None:
    if cap.tokens is not None and spend.tokens > cap.tokens:
        return f"{spend.tokens:,} tokens over the cap of {cap.tokens:,}"
    if cap.cost_usd is not None and spend.cost > cap.cost_usd:
        return f"${spend.cost:.4f} over the cap of ${cap.cost_usd:.4f}"
    return None


def over_budget(budgets: Budgets, planned: Spend, spent: dict[str, Spend]) -> str | None:
    """Why a metered call estimated at ``planned`` may not run, with the figures, or
    None. ``spent``: the metered spend so far of each window (``day``, ``week``,
    ``month``)."""
    if (why := _over(budgets.request, planned)) is not None:
        return f"this request alone would need up to {planned.describe()}: {why} " \
               "(budgets.request)"
    for window in WINDOWS:
        so_far = spent.get(window, Spend())
        if (why := _over(getattr(budgets, window), so_far + planned)) is not None:
            return (f"this {window} has spent {so_far.describe()} and this request may "
                    f"need up to {planned.describe()}: {why} (budgets.{window})")
    return None


def _window_days(window: str, today: dt.date) -> list[dt.date]:
    if window == "day":
        start = today
    elif window == "week":
        start = today - dt.timedelta(days=today.weekday())
    else:
        start = today.replace(day=1)
    return [start + dt.timedelta(days=n) for n in range((today - start).days + 1)]


class Ledger:
    """The spend of model calls in a key-value store (`KeyValueStore`)."""

    def __init__(self, kv: Any) -> None:
        self.kv = kv
        self._past: dict[dt.date, Spend] = {}  # metered totals of days gone by

    async def add(self, *, preset: str, tokens: int, cost: float, metered: bool,
                  estimated: bool, run_id: str, when: dt.date | None = None) -> None:
        day = (when or dt.date.today()).isoformat()
        entry = {"preset": preset, "tokens": tokens, "cost": cost, "metered": metered,
                 "estimated": estimated, "run_id": run_id}
        await self.kv.put(f"{PREFIX}{day}/{uuid.uuid4().hex}", json.dumps(entry).encode())

    async def day(self, day: dt.date) -> list[dict[str, Any]]:
        """Every call recorded on ``day`` (unreadable entries are skipped, not fatal)."""
        entries = []
        async for _, value in self.kv.scan(f"{PREFIX}{day.isoformat()}/"):
            try:
                entry = json.loads(value)
            except ValueError:
                continue
            if isinstance(entry, dict):
                entries.append(entry)
        return entries

    async def spent(self, today: dt.date | None = None) -> dict[str, Spend]:
        """The metered spend of each window (``day``, ``week``, ``month``) up to
        ``today``. Days before today are summed once and kept (nothing is added to a
        past day); today is read again every time, so other processes' calls count."""
        today = today or dt.date.today()
        days = sorted(set(_window_days("week", today)) | set(_window_days("month", today)))
        per_day: dict[dt.date, Spend] = {}
        for day in days:
            if day != today and day in self._past:
                per_day[day] = self._past[day]
                continue
            total = Spend()
            for entry in await self.day(day):
                if entry.get("metered"):
                    total += Spend(int(entry.get("tokens") or 0),
                                   float(entry.get("cost") or 0), 1)
            per_day[day] = total
            if day != today:
                self._past[day] = total
        return {window: sum((per_day[d] for d in _window_days(window, today)), Spend())
                for window in WINDOWS}

    async def by_preset(self, today: dt.date | None = None) -> dict[str, Spend]:
        """Today's spend of each preset, metered or not (what ``adjutant status`` shows)."""
        totals: dict[str, Spend] = {}
        for entry in await self.day(today or dt.date.today()):
            name = str(entry.get("preset"))
            totals[name] = totals.get(name, Spend()) + Spend(
                int(entry.get("tokens") or 0), float(entry.get("cost") or 0), 1)
        return totals
