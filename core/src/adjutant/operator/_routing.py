"""Routing and budgets for one operator: which preset each request goes to (asking
before a request leaves the machine), whether a call fits the budgets, and what it
spent (in the action log and the ledger)."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import anyio

from adjutant_hookspecs import ActivitySnapshot, ProviderError, to_builtins
from adjutant_hookspecs.records import BudgetRefusedRecord, RouteRecord, UsageRecord

from ..providers import capabilities_of
from ..providers._budget import BudgetExceeded, Ledger, Reservation, estimate
from ..providers._router import Route, estimate_tokens, route
from ._consent import Escalation
from ._state import key_value_store

if TYPE_CHECKING:
    from adjutant_hookspecs import CompletionRequest, ContextBulletin, Kernel, Usage

    from ..kernel._settings import ModelPreset, Profile
    from ._actionlog import ActionLog
    from ._consent import Approver
    from ._run import Run

__all__ = ["BudgetExceeded", "Hold", "Pins", "Routing"]


class Hold:
    """A call's reservation while the call is under way; ``sent``: the request has gone
    to the backend (from then on, a stop may have been billed)."""

    def __init__(self, reservation: Reservation | None) -> None:
        self.reservation = reservation
        self.sent = False


class Pins:
    """SHA-256 pins of model files named by path: hashed once per file version (size
    and modification time), refused when the file is not the one pinned."""

    def __init__(self) -> None:
        self._seen: dict[tuple[str, int, int], str] = {}

    def verify(self, path: str, sha256: str) -> None:
        try:
            info = os.stat(path)
        except OSError as exc:
            raise ProviderError(f"the pinned model file {path!r} cannot be read: "
                                f"{exc.strerror}", hint="check the preset's model path") from exc
        key = (os.path.realpath(path), info.st_size, info.st_mtime_ns)
        if key not in self._seen:
            digest = hashlib.sha256()
            with open(path, "rb") as model:
                while block := model.read(1 << 20):
                    digest.update(block)
            self._seen[key] = digest.hexdigest()
        if self._seen[key] != sha256:
            raise ProviderError(
                f"{path} is not the model the profile pinned: its SHA-256 is "
                f"{self._seen[key][:16]}…, the pin says {sha256[:16]}…",
                hint="put the pinned file back, or update the preset's sha256 if you "
                     "replaced it on purpose")


class Routing:
    """The router and the budgets as one operator applies them."""

    def __init__(self, kernel: Kernel, log: ActionLog) -> None:
        self.kernel = kernel
        self.log = log
        self.pins = Pins()
        self._ledger: Ledger | None = None

    @property
    def profile(self) -> Profile:
        return self.kernel.profile  # type: ignore[return-value]  # core's own Profile

    def ledger(self) -> Ledger | None:
        """The ledger on the profile's key-value store (one per store: it keeps the
        totals of past days), locked across processes by ``<data home>/budget.lock``."""
        kv = key_value_store(self.kernel)
        if kv is None:
            return None
        if self._ledger is None or self._ledger.kv is not kv:
            home = getattr(self.kernel, "home", None)
            lock = os.path.join(home, "budget.lock") \
                if home is not None and os.path.isdir(home) else None
            self._ledger = Ledger(kv, lock)
        return self._ledger

    def remote(self, preset: ModelPreset) -> bool:
        provider = self.kernel.providers.get(preset.provider)
        return provider is not None and bool(capabilities_of(provider).remote)

    def metered(self, preset: ModelPreset) -> bool:
        """Whether a call on ``preset`` counts against the caps: it leaves the machine
        or has a price. A local model's calls cost nothing and are never blocked."""
        return self.remote(preset) or preset.prompt_cost_per_mtok > 0 \
            or preset.completion_cost_per_mtok > 0

    def stronger_than(self, name: str) -> str | None:
        """The next preset up from ``name``: ``default``, then ``models`` in the order
        the profile lists them."""
        names = self.profile.presets()
        index = names.index(name) if name in names else 0
        return names[index + 1] if index + 1 < len(names) else None

    async def stronger_target(self, run_id: str | None = None
                              ) -> tuple[str, str, str | None, str]:
        """The run "try a stronger model" asks again (id, request, thread; default: the
        last) and the preset it goes to. `LookupError` says why there is none."""
        first, prompt, thread_id, used = None, None, None, "default"
        for record in await self.log.records():
            if record.get("kind") == "prompt" and (run_id is None
                                                   or record.get("run_id") == run_id):
                first, prompt = record.get("run_id"), record.get("text")
                thread_id, used = record.get("thread_id"), "default"
            elif record.get("kind") == "route" and record.get("run_id") == first:
                used = str(record.get("preset"))
        if first is None or not isinstance(prompt, str):
            raise LookupError(f"no request {run_id} in the log" if run_id
                              else "no request in the log yet")
        target = self.stronger_than(used)
        if target is None:
            raise LookupError(f"no preset stronger than {used!r}: add one under \"models\" "
                              "in the profile")
        return str(first), prompt, thread_id, target

    async def choose(self, prompt: str, bulletin: ContextBulletin, tools: int, run: Run,
                     approver: Approver, stronger: tuple[str, str] | None = None) -> Route:
        """The preset for this request, said on the bus and in the log. A remote one is
        asked for first outside the auto mode; no (or a frontend that cannot ask)
        keeps the request on the profile's own model. ``stronger``: (preset, ask id)
        for "try a stronger model", asked with its cost estimate whenever it is
        metered."""
        profile = self.profile
        context = json.dumps(to_builtins(bulletin), default=str)
        ask_id = None
        if stronger is not None:
            name, ask_id = stronger
            chosen = Route(name, profile.preset(name), "try a stronger model", escalated=True)
        else:
            chosen = route(profile, tokens=estimate_tokens(prompt, context),
                           attachments=len(bulletin.selected_files), tools=tools)
        asked, declined = False, None
        if chosen.escalated:
            if chosen.preset.provider not in self.kernel.providers:
                declined = f"its provider {chosen.preset.provider!r} is not installed"
            elif (self.remote(chosen.preset) or (stronger is not None
                                                 and self.metered(chosen.preset))) \
                    and run.mode != "execute-auto":
                asked = True
                planned = estimate(chosen.preset, estimate_tokens(prompt, context))
                question = Escalation(run_id=run.run_id, preset=chosen.name,
                                      model=f"{chosen.preset.provider}:{chosen.preset.model}",
                                      reason=chosen.reason, tokens=planned.tokens,
                                      cost=planned.cost)
                if not await approver.approve_escalation(question):
                    declined = "not approved (it would leave this machine)"
        if declined is not None:
            wanted = chosen.name
            chosen = Route("default", profile.model,
                           f"{chosen.reason}; {wanted} {declined}")
        if not profile.models:  # one preset: nothing was chosen, nothing to say
            return chosen
        await self.log.record(RouteRecord(run_id=run.run_id, preset=chosen.name,
                                          model=f"{chosen.preset.provider}:"
                                                f"{chosen.preset.model}",
                                          reason=chosen.reason, escalated=chosen.escalated,
                                          asked=asked, declined=declined, ask_id=ask_id))
        run.publish(ActivitySnapshot(message_id=f"{run.run_id}-route", activity_type="route",
                                     content={"preset": chosen.name, "label": chosen.label,
                                              "reason": chosen.reason,
                                              "escalated": chosen.escalated,
                                              "declined": declined, "ask_id": ask_id}))
        return chosen

    async def check(self, chosen: Route, request: CompletionRequest, run: Run
                    ) -> Reservation | None:
        """Refuse a model file that is not the one the profile pinned (`ProviderError`),
        and a metered call over a cap (`BudgetExceeded`, logged), with the figures. A
        metered call under caps gets its estimate reserved in the ledger (checked and
        held as one step across processes): pass it to `spent`, or to `release` when the
        call fails."""
        if chosen.preset.sha256 is not None:
            await anyio.to_thread.run_sync(self.pins.verify, chosen.preset.model,
                                           chosen.preset.sha256)
        if not self.metered(chosen.preset):
            return None
        budgets = self.profile.budgets
        caps = (budgets.request, budgets.day, budgets.week, budgets.month)
        if all(cap.tokens is None and cap.cost_usd is None for cap in caps):
            return None  # no budget set: nothing to keep
        planned = estimate(chosen.preset, estimate_tokens(request.system, request.prompt))
        ledger = self.ledger()
        if ledger is None:
            why = "no key-value store to count what was spent, so no budget can be kept"
        else:
            try:
                return await ledger.reserve(budgets, planned, preset=chosen.name,
                                            run_id=run.run_id)
            except BudgetExceeded as exc:
                why = str(exc)
        await self.log.record(BudgetRefusedRecord(run_id=run.run_id, preset=chosen.name,
                                                  reason=why))
        raise BudgetExceeded(f"over budget on {chosen.label}: {why}. Raise the cap under "
                             "\"budgets\" in the profile, wait for the next period, or use "
                             "a local preset (its calls cost nothing)")

    async def release(self, reservation: Reservation | None) -> None:
        """Give back what `check` reserved for a call that failed (even when cancelled)."""
        ledger = self.ledger()
        if reservation is not None and ledger is not None:
            with anyio.CancelScope(shield=True):
                await ledger.release(reservation)

    @asynccontextmanager
    async def holding(self, reservation: Reservation | None) -> AsyncIterator[Hold]:
        """Around a call `check` reserved for: a call that failed (`ProviderError`), or
        that stopped before it was sent, gives the reservation back; one stopped after it
        was sent keeps it as spent. A call that returns is settled by `spent`."""
        hold = Hold(reservation)
        try:
            yield hold
        except ProviderError:
            await self.release(reservation)
            raise
        except BaseException:
            await (self.keep(reservation) if hold.sent else self.release(reservation))
            raise

    async def keep(self, reservation: Reservation | None) -> None:
        """Count what `check` reserved as spent, for a call stopped after it was sent (the
        backend may bill what it generated; no figure came back, so the estimate, the
        most it can be, stays)."""
        ledger = self.ledger()
        if reservation is not None and ledger is not None:
            with anyio.CancelScope(shield=True):
                await ledger.settle(reservation, tokens=reservation.planned.tokens,
                                    cost=reservation.planned.cost, estimated=True)

    async def spent(self, chosen: Route, request: CompletionRequest, text: str,
                    usage: Usage | None, run: Run,
                    reservation: Reservation | None = None) -> None:
        """Count one call: the backend's figures where it reported them, else estimated
        (in place of its reservation, when `check` made one)."""
        preset = chosen.preset
        prompt = usage.prompt_tokens if usage is not None else None
        completion = usage.completion_tokens if usage is not None else None
        estimated = prompt is None or completion is None
        prompt = prompt if prompt is not None else estimate_tokens(request.system,
                                                                   request.prompt)
        completion = completion if completion is not None else estimate_tokens(text)
        cost: Any = usage.cost if usage is not None else None
        if cost is None:
            cost = (prompt * preset.prompt_cost_per_mtok
                    + completion * preset.completion_cost_per_mtok) / 1e6
        metered = self.metered(preset)
        if metered:  # what left the machine or cost money is in the log; the ledger
            # counts every call (``adjutant status``)
            await self.log.record(UsageRecord(run_id=run.run_id, preset=chosen.name,
                                              prompt_tokens=prompt,
                                              completion_tokens=completion, cost=float(cost),
                                              metered=metered, estimated=estimated))
        if (ledger := self.ledger()) is None:
            return
        if reservation is not None:
            with anyio.CancelScope(shield=True):  # the call was made: its spend counts
                await ledger.settle(reservation, tokens=prompt + completion,
                                    cost=float(cost), estimated=estimated)
        else:
            await ledger.add(preset=chosen.name, tokens=prompt + completion, cost=float(cost),
                             metered=metered, estimated=estimated, run_id=run.run_id)

    async def report(self) -> dict[str, Any]:
        """What was spent: today per preset (every call), and the metered spend of each
        window beside its caps (``adjutant status``, the dock)."""
        ledger = self.ledger()
        if ledger is None:
            return {"today": {}, "windows": {}, "held": None}
        budgets = self.profile.budgets
        today = {name: {"tokens": s.tokens, "cost": round(s.cost, 6), "calls": s.calls}
                 for name, s in (await ledger.by_preset()).items()}
        windows = {window: {"tokens": s.tokens, "cost": round(s.cost, 6),
                            "cap_tokens": getattr(budgets, window).tokens,
                            "cap_cost_usd": getattr(budgets, window).cost_usd}
                   for window, s in (await ledger.spent()).items()}
        held = await ledger.held()
        return {"today": today, "windows": windows,
                "held": {"tokens": held.tokens, "cost": round(held.cost, 6),
                         "calls": held.calls} if held.calls else None}
