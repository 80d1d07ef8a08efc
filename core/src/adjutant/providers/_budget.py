"""Budgets: what model calls spent, and whether the next one may run.

Each call's spend is one key in the profile's key-value store,
``budget/<YYYY-MM-DD>/<id>`` (a key per call: two processes never race on a total),
holding the preset, tokens, cost and whether the call was *metered* (it costs money or
leaves the machine). Caps (`Budgets`: per request, calendar day, week from Monday,
month) are checked before a metered call against the estimate plus what the window
already spent; an unmetered call (a local model, prices 0) is counted, never blocked.

**Check and reserve are one step across processes.** `Ledger.reserve` takes an
exclusive ``flock`` on ``<data home>/budget.lock`` (an in-process lock when there is no
data home), sums the windows, and, when the estimate fits, writes it as a
*reservation* under the call's key before the lock is let go: a second process that
checks next counts it. `Ledger.settle` replaces the reservation by what the call really
spent; `Ledger.release` removes it when the call failed. A reservation left by a process
that died (SIGKILL, a crash) stops counting as soon as that process is gone (its pid and
start time on this boot no longer match), and any reservation stops counting after
``hold_s`` (an hour) whatever happened to its process: it can never block a budget for
good.

**Pruning.** Per-call keys are kept for `KEEP_CALLS_DAYS` days; an older day is folded
into one total, ``budget-day/<YYYY-MM-DD>`` (the metered spend the caps count and each
preset's spend), written before its calls' keys are deleted (one transaction where the
store offers ``put_many``; elsewhere a day with a total is read from the total alone, so
a crash between the two neither loses nor doubles anything). Totals older than
`KEEP_TOTALS_DAYS` are dropped: no window reaches back that far. It runs under the same
lock, on a cheap occasion: the first reservation or record of a process each day.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import socket
import time
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import aclosing, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import anyio

    from ..kernel._settings import Budgets, Cap, ModelPreset

__all__ = ["KEEP_CALLS_DAYS", "KEEP_TOTALS_DAYS", "BudgetExceeded", "Ledger", "Reservation",
           "Spend", "estimate", "over_budget"]

PREFIX = "budget/"
#: One key per folded day: ``budget-day/<YYYY-MM-DD>`` (outside ``budget/``, so a scan
#: of a day's calls never meets it).
TOTALS = "budget-day/"
WINDOWS = ("day", "week", "month")
#: Days (today included) whose calls keep a key each (``adjutant status`` shows today's,
#: adjutant-tasks reads yesterday's and today's by run).
KEEP_CALLS_DAYS = 7
#: Days a folded day's total is kept: the longest window (a week begun last month)
#: reaches 37 days back.
KEEP_TOTALS_DAYS = 400
#: Seconds a reservation counts at most, whatever became of its process.
HOLD_S = 3600.0


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


class _Unlockable(OSError):
    """The lock file cannot be opened (a link or a folder planted there, no room)."""


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


def _boot() -> str:
    """This machine, boot and pid namespace: a pid names the same process only within
    them (a container on the same kernel has its own pids, and usually its own host
    name)."""
    try:
        boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
        space = os.readlink("/proc/self/ns/pid")
    except OSError:
        boot, space = "", ""
    return f"{socket.gethostname()}/{boot}/{space}"


def _started(pid: int) -> str | None:
    """When process ``pid`` started (clock ticks after boot, as text), or None."""
    from ..safety.processes import started

    when = started(pid)
    return None if when is None else str(when)


def _running(pid: int, started: str | None) -> bool:
    """Whether the process that wrote a reservation on this boot still runs."""
    from ..safety.processes import alive

    if os.path.isdir("/proc/self") and started is None:
        return False
    return alive(pid, int(started) if started and started.isdigit() else None)


def _spend(entry: dict[str, Any]) -> Spend:
    return Spend(int(entry.get("tokens") or 0), float(entry.get("cost") or 0), 1)


def _triple(spend: Spend) -> list[Any]:
    return [spend.tokens, spend.cost, spend.calls]  # JSON keeps a float exactly


def _untriple(value: Any) -> Spend:
    tokens, cost, calls = value
    return Spend(int(tokens), float(cost), int(calls))


@dataclass(frozen=True)
class Reservation:
    """An estimate held in the ledger for a call under way: its key, the estimate, and
    the call's preset and run."""

    key: str
    planned: Spend
    preset: str
    run_id: str


@dataclass
class _Day:
    """One day as the ledger reads it: the metered spend (live reservations included),
    each preset's settled spend, and what live reservations there hold."""

    metered: Spend
    by_preset: dict[str, Spend]
    held: Spend = Spend()

    @property
    def live(self) -> bool:
        return self.held.calls > 0


class Ledger:
    """The spend of model calls in a key-value store (`KeyValueStore`).

    :param lock: The lock file that makes check-and-reserve one step across processes
        (the data home's ``budget.lock``); None: an in-process lock only (in-memory
        stores, tests).
    :param hold_s: Seconds a reservation counts at most.
    :param clock: Wall-clock seconds (tests move it).
    """

    def __init__(self, kv: Any, lock: str | os.PathLike[str] | None = None, *,
                 hold_s: float = HOLD_S, clock: Callable[[], float] = time.time) -> None:
        self.kv = kv
        self.lock_path = Path(lock) if lock is not None else None
        self.hold_s = hold_s
        self.clock = clock
        self._past: dict[dt.date, Spend] = {}  # metered totals of days gone by
        self._mutex: anyio.Lock | None = None
        self._pruned: dt.date | None = None
        self._me = (os.getpid(), _started(os.getpid()), _boot())

    # -- the lock ------------------------------------------------------------------------

    @asynccontextmanager
    async def locked(self) -> AsyncIterator[None]:
        """Exclusive against every other ledger on this store: an ``flock`` on the lock
        file (its own open file, so threads and kernels of one process exclude each other
        too), taken in a worker thread; released by the kernel if the process dies."""
        import anyio  # on first use: importing `adjutant.providers` stays cheap

        if self._mutex is None:
            self._mutex = anyio.Lock()
        async with self._mutex:
            if self.lock_path is None:
                yield
                return
            import fcntl

            try:  # a link planted there is refused, not followed
                fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC
                             | os.O_NOFOLLOW, 0o600)
            except OSError as exc:
                raise _Unlockable(exc.errno, f"the budget lock {self.lock_path} cannot be "
                                  f"opened ({exc.strerror}), so no budget can be kept: "
                                  "remove whatever is there (Adjutant makes it a plain "
                                  "empty file)") from exc
            try:
                await anyio.to_thread.run_sync(fcntl.flock, fd, fcntl.LOCK_EX)
                yield
            finally:
                os.close(fd)  # closing the last descriptor lets the flock go

    # -- writing -------------------------------------------------------------------------

    async def add(self, *, preset: str, tokens: int, cost: float, metered: bool,
                  estimated: bool, run_id: str, when: dt.date | None = None) -> None:
        """Record one call that was not reserved (an unmetered one, or no cap set)."""
        day = when or dt.date.today()
        await self._maybe_prune(day)
        entry = {"preset": preset, "tokens": tokens, "cost": cost, "metered": metered,
                 "estimated": estimated, "run_id": run_id}
        await self.kv.put(f"{PREFIX}{day.isoformat()}/{uuid.uuid4().hex}",
                          json.dumps(entry).encode())

    async def reserve(self, budgets: Budgets, planned: Spend, *, preset: str, run_id: str,
                      today: dt.date | None = None) -> Reservation:
        """Check a metered call estimated at ``planned`` against the caps and hold the
        estimate in the ledger, as one step no other process can come between.
        `BudgetExceeded` (its message: why, with the figures) when it does not fit."""
        today = today or dt.date.today()
        try:
            async with self.locked():
                return await self._reserve(budgets, planned, preset, run_id, today)
        except _Unlockable as exc:
            raise BudgetExceeded(exc.strerror or str(exc)) from exc

    async def _reserve(self, budgets: Budgets, planned: Spend, preset: str, run_id: str,
                       today: dt.date) -> Reservation:
        """`reserve` with the lock held."""
        if self._pruned != today:
            await self._prune(today)
        why = over_budget(budgets, planned, await self.spent(today))
        if why is not None:
            raise BudgetExceeded(why)
        key = f"{PREFIX}{today.isoformat()}/{uuid.uuid4().hex}"
        pid, started, boot = self._me
        entry = {"preset": preset, "tokens": planned.tokens, "cost": planned.cost,
                 "metered": True, "estimated": True, "run_id": run_id,
                 "reserved": True, "pid": pid, "started": started, "boot": boot,
                 "expires": self.clock() + self.hold_s}
        await self.kv.put(key, json.dumps(entry).encode())
        return Reservation(key, planned, preset, run_id)

    async def settle(self, reservation: Reservation, *, tokens: int, cost: float,
                     estimated: bool) -> None:
        """Replace a reservation by what its call spent (one put on the same key)."""
        entry = {"preset": reservation.preset, "tokens": tokens, "cost": cost,
                 "metered": True, "estimated": estimated, "run_id": reservation.run_id}
        await self.kv.put(reservation.key, json.dumps(entry).encode())

    async def release(self, reservation: Reservation) -> None:
        """Drop the reservation of a call that failed before it spent anything."""
        await self.kv.delete(reservation.key)

    # -- reading -------------------------------------------------------------------------

    def live(self, entry: dict[str, Any]) -> bool:
        """Whether a reservation still counts: its hold has not run out and, when it was
        made on this boot of this machine, its process still runs."""
        if not isinstance(entry.get("expires"), int | float) or \
                self.clock() >= entry["expires"]:
            return False
        if entry.get("boot") != self._me[2]:
            return True  # another machine's (or boot's): only its hold can end it
        pid = entry.get("pid")
        return isinstance(pid, int) and _running(pid, entry.get("started"))

    async def _entries(self, day: dt.date) -> list[dict[str, Any]]:
        entries = []
        async for _, value in self.kv.scan(f"{PREFIX}{day.isoformat()}/"):
            try:
                entry = json.loads(value)
            except ValueError:
                continue
            if isinstance(entry, dict):
                entries.append(entry)
        return entries

    async def day(self, day: dt.date) -> list[dict[str, Any]]:
        """Every settled call recorded on ``day`` while its calls are kept
        (`KEEP_CALLS_DAYS`); reservations are not calls yet, and unreadable entries are
        skipped, not fatal."""
        return [e for e in await self._entries(day) if not e.get("reserved")]

    async def _total(self, day: dt.date) -> _Day | None:
        raw = await self.kv.get(f"{TOTALS}{day.isoformat()}")
        if raw is None:
            return None
        try:
            total = json.loads(raw)
            return _Day(_untriple(total["metered"]),
                        {str(k): _untriple(v) for k, v in total["by_preset"].items()})
        except (ValueError, KeyError, TypeError, AttributeError):
            return None  # a damaged total: the day's calls (if any are left) count

    async def _read_day(self, day: dt.date) -> _Day:
        if (total := await self._total(day)) is not None:
            return total
        found = _Day(Spend(), {})
        for entry in await self._entries(day):
            if entry.get("reserved"):
                if self.live(entry):
                    found.metered += _spend(entry)
                    found.held += _spend(entry)
                continue
            name = str(entry.get("preset"))
            found.by_preset[name] = found.by_preset.get(name, Spend()) + _spend(entry)
            if entry.get("metered"):
                found.metered += _spend(entry)
        return found

    async def spent(self, today: dt.date | None = None) -> dict[str, Spend]:
        """The metered spend of each window (``day``, ``week``, ``month``) up to
        ``today``, live reservations included. Days before today are summed once and
        kept (nothing is added to a past day, unless a reservation there is still live);
        today is read again every time, so other processes' calls count."""
        today = today or dt.date.today()
        days = sorted(set(_window_days("week", today)) | set(_window_days("month", today)))
        per_day: dict[dt.date, Spend] = {}
        for day in days:
            if day != today and day in self._past:
                per_day[day] = self._past[day]
                continue
            found = await self._read_day(day)
            per_day[day] = found.metered
            if day != today and not found.live:
                self._past[day] = found.metered
        return {window: sum((per_day[d] for d in _window_days(window, today)), Spend())
                for window in WINDOWS}

    async def by_preset(self, today: dt.date | None = None) -> dict[str, Spend]:
        """Today's settled spend of each preset, metered or not (what ``adjutant status``
        shows)."""
        return (await self._read_day(today or dt.date.today())).by_preset

    async def held(self, today: dt.date | None = None) -> Spend:
        """What live reservations hold today: calls under way, counted by the windows
        until they are settled."""
        return (await self._read_day(today or dt.date.today())).held

    # -- pruning -------------------------------------------------------------------------

    async def _maybe_prune(self, today: dt.date) -> None:
        """Prune once a day; a lock that cannot be opened skips it (recording a call never
        fails for the housekeeping's sake; `reserve` says what is wrong)."""
        if self._pruned != today:
            try:
                async with self.locked():
                    if self._pruned != today:
                        await self._prune(today)
            except _Unlockable:
                return

    async def prune(self, today: dt.date | None = None) -> int:
        """Fold the days whose calls are no longer kept into one total each, and drop
        totals no window reaches; the number of keys deleted. Runs by itself once a
        day per process; this is for tests and tools."""
        async with self.locked():
            return await self._prune(today or dt.date.today())

    async def _prune(self, today: dt.date) -> int:
        """`prune` with the lock held."""
        self._pruned = today
        first_kept = (today - dt.timedelta(days=KEEP_CALLS_DAYS - 1)).isoformat()
        old: dict[str, list[str]] = {}
        async with aclosing(self.kv.scan(PREFIX)) as calls:
            async for key, _ in calls:
                day = key[len(PREFIX):].split("/", 1)[0]
                if day >= first_kept:
                    break  # keys come in order: the rest are kept
                old.setdefault(day, []).append(key)
        deleted = 0
        for name, keys in old.items():
            try:
                day = dt.date.fromisoformat(name)
            except ValueError:
                continue  # not a ledger day: not ours to fold
            writes: list[tuple[str, bytes | None]] = []
            if await self._total(day) is None:
                found = await self._read_day(day)
                writes.append((f"{TOTALS}{name}", json.dumps({
                    "metered": _triple(found.metered),
                    "by_preset": {k: _triple(v) for k, v in found.by_preset.items()},
                }).encode()))
            writes += [(key, None) for key in keys]
            await self._write(writes)
            deleted += len(keys)
        last_total = (today - dt.timedelta(days=KEEP_TOTALS_DAYS)).isoformat()
        stale = []
        async with aclosing(self.kv.scan(TOTALS)) as totals:
            async for key, _ in totals:
                if key[len(TOTALS):] >= last_total:
                    break
                stale.append(key)
        if stale:
            await self._write([(key, None) for key in stale])
        return deleted + len(stale)

    async def _write(self, items: list[tuple[str, bytes | None]]) -> None:
        """Puts (None: delete) in one transaction where the store offers ``put_many``,
        else in order (a day's total is always before the deletion of its calls)."""
        if hasattr(self.kv, "put_many"):
            await self.kv.put_many(items)
            return
        for key, value in items:
            if value is None:
                await self.kv.delete(key)
            else:
                await self.kv.put(key, value)
