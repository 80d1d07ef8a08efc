"""Notifications: always on the bus (``task.notification``), on the desktop through
``notify-send`` where the machine has it (skipped silently where it has not: a flow
never fails for want of a desktop), throttled.

Throttle: priority tiers ``low``, ``normal``, ``urgent``; each tier has an hourly cap
(``HOURLY_CAP``) of desktop notifications; a dismissed notification's key (its
``key``, else its title) is quiet for ``COOLDOWN_S`` after the dismissal; dismissals
are remembered in the profile's key/value store (``tasks/dismissed/<key>``), so a
restart does not forget them. What the throttle holds back is still published on the
bus, marked ``throttled``."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from collections import deque
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from adjutant_hookspecs import CustomEvent

if TYPE_CHECKING:
    from adjutant_hookspecs import Kernel

__all__ = ["COOLDOWN_S", "HOURLY_CAP", "Notification", "Notifier"]

HOURLY_CAP = {"low": 3, "normal": 10, "urgent": 60}
COOLDOWN_S = 3600.0
_DISMISSED = "tasks/dismissed/"


class Notification(CustomEvent, frozen=True, omit_defaults=True, tag="task.notification"):
    """A notification: ``shown`` on the desktop or not, ``throttled`` (why) if held."""

    title: str
    body: str = ""
    priority: str = "normal"
    key: str = ""
    source: str = ""
    shown: bool = False
    throttled: str = ""


class Notifier:
    """One kernel's notifications (kept on the plugin instance)."""

    def __init__(self, kernel: Kernel, *, clock: Callable[[], float] = time.time,
                 desktop: str | bool | None = True) -> None:
        self.kernel, self.clock = kernel, clock
        #: The ``notify-send`` program (None: no desktop notifications).
        self.program = shutil.which("notify-send") if desktop is True else (
            desktop or None)
        self._sent: dict[str, deque[float]] = {tier: deque() for tier in HOURLY_CAP}

    def _kv(self) -> Any:
        from ._queue import key_value_store

        return key_value_store(self.kernel)

    async def dismiss(self, key: str) -> None:
        """The user dismissed notifications of ``key``: quiet for the cooldown."""
        await self._kv().put(_DISMISSED + key, json.dumps({"at": self.clock()}).encode())

    async def _dismissed_at(self, key: str) -> float | None:
        try:
            raw = await self._kv().get(_DISMISSED + key)
        except LookupError:
            return None
        return None if raw is None else float(json.loads(raw)["at"])

    async def send(self, note: Any, *, source: str = "") -> dict[str, Any]:
        """Notify; returns what happened (``shown``, ``throttled``)."""
        if isinstance(note, str):
            note = {"title": note}
        if not isinstance(note, Mapping):
            note = {"title": str(note)}
        title = str(note.get("title") or "Adjutant")[:200]
        body = str(note.get("body") or "")[:2000]
        tier = str(note.get("priority") or "normal")
        if tier not in HOURLY_CAP:
            tier = "normal"
        key = str(note.get("key") or title)[:200].replace("/", "_")
        now = self.clock()
        throttled = ""
        dismissed = await self._dismissed_at(key)
        if dismissed is not None and now - dismissed < COOLDOWN_S:
            throttled = f"dismissed {now - dismissed:.0f} s ago (cooldown {COOLDOWN_S:g} s)"
        sent = self._sent[tier]
        while sent and now - sent[0] >= 3600.0:
            sent.popleft()
        if not throttled and len(sent) >= HOURLY_CAP[tier]:
            throttled = f"{HOURLY_CAP[tier]} {tier} notifications this hour"
        shown = False
        if not throttled:
            sent.append(now)
            shown = await self._desktop(title, body, tier)
        self.kernel.bus.publish(Notification(title=title, body=body, priority=tier, key=key,
                                             source=source, shown=shown, throttled=throttled))
        return {"shown": shown, "throttled": throttled, "priority": tier, "key": key}

    async def _desktop(self, title: str, body: str, tier: str) -> bool:
        if self.program is None:
            return False
        urgency = {"low": "low", "normal": "normal", "urgent": "critical"}[tier]
        argv = [self.program, "--app-name=Adjutant", f"--urgency={urgency}", "--", title, body]

        def run() -> bool:
            try:  # an argv, never a shell: a title is data
                done = subprocess.run(argv, capture_output=True, timeout=5, check=False)
            except (OSError, subprocess.SubprocessError):
                return False
            return done.returncode == 0

        import anyio  # not at plugin load: `adjutant --help` never needs it

        return await anyio.to_thread.run_sync(run)
