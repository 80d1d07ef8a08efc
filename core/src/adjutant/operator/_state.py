"""The operator's lasting state: the mode ladder, time-boxed grants and the preset.

Only the user channel changes the mode or gives a grant (model output never can; an
attempt is logged and ignored). All three persist in the key/value store and are read
again at every run, so a downgrade or a revocation from another terminal (`adjutant
mode` beside a long `chat` or `mcp serve`) holds at once. ``execute-auto`` falls back
to propose-only after an idle time without the user.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from adjutant_hookspecs.records import (
    GrantIgnoredRecord,
    GrantRecord,
    ModeChangeIgnoredRecord,
    ModeRecord,
    PresetRecord,
    PresetUnavailableRecord,
    RevokeRecord,
)

from ..kernel._settings import ProfileError, load_profile
from ..kernel._stores import choose_store

if TYPE_CHECKING:
    from adjutant_hookspecs import Kernel

import re
import shutil
from collections.abc import Awaitable, Callable
from typing import Any, Literal

import msgspec

from adjutant_hookspecs import MODES, mode_named

from ._actionlog import ActionLog

__all__ = ["GRANT", "Channel", "OperatorState", "key_value_store"]

#: Who asks for a change of mode or a grant: only ``"user"`` is obeyed; ``"model"`` and
#: ``"system"`` are logged and ignored (a type checker catches any other word).
Channel = Literal["user", "model", "system"]

MODE_KEY = "operator/mode"
GRANTS_KEY = "operator/grants"
PRESET_KEY = "operator/preset"
#: ``network:<tool>``, or ``network:<prefix>.*`` for every tool under a prefix;
#: ``cage:/dir`` (reads there); ``file:/path`` and ``tool:<name>``, standing write
#: grants (`adjutant.safety.standing`).
GRANT = re.compile(r"^(write|network:[a-z0-9_]+(\.[a-z0-9_]+)*(\.\*)?|cage:/.*|file:/.+"
                   r"|tool:[A-Za-z0-9_.-]+)$")

Changed = Callable[[list[dict[str, Any]]], Awaitable[None]]


def key_value_store(kernel: Kernel) -> Any:
    """The key/value store that keeps the operator's state, sessions and pins: the one
    the profile names, else the only durable one (`adjutant.kernel._stores`); None: none."""
    return choose_store(kernel.stores, "kv", kernel.profile.stores.get("kv"))


class OperatorState:
    """Mode, grants and preset of one operator, as persisted.

    :param changed: awaited with JSON-patch operations after every change (the operator
        publishes them and keeps its sessions in step).
    """

    def __init__(self, kernel: Kernel, log: ActionLog, changed: Changed, *,
                 idle_downgrade_s: float, clock: Callable[[], float],
                 wall: Callable[[], float]) -> None:
        self.kernel = kernel
        self.log = log
        self.idle_downgrade_s = idle_downgrade_s
        self._changed = changed
        self._clock = clock
        self._wall = wall
        self._mode: str | None = None
        self._grants: dict[str, float] = {}  # grant -> expiry (wall clock)
        self._last_user = clock()

    def kv(self) -> Any:
        return key_value_store(self.kernel)

    def user_is_here(self) -> None:
        """The user acted: execute-auto's idle clock starts again."""
        self._last_user = self._clock()

    @property
    def current(self) -> str | None:
        """The mode as last read (None before the first read)."""
        return self._mode

    async def _load(self) -> None:
        """Mode, grants and preset as persisted (once; defaults: propose-only, none)."""
        kv = self.kv()
        raw = await kv.get(MODE_KEY) if kv is not None else None
        self._mode = raw.decode() if raw and raw.decode() in MODES else "propose-only"
        if kv is None:
            return
        if (grants := await kv.get(GRANTS_KEY)) is not None:
            self._grants = {k: float(v) for k, v in msgspec.json.decode(grants).items()}
        if (preset := await kv.get(PRESET_KEY)) is not None:
            try:
                self.kernel.profile = load_profile(self.kernel.home, preset.decode())
            except ProfileError as exc:  # keep going on the default, and say why
                await self.log.record(PresetUnavailableRecord(name=preset.decode(),
                                                              error=str(exc)))

    async def _sync(self) -> None:
        """Mode and grants as stored now (another process may have changed them)."""
        kv = self.kv()
        if kv is None:
            return
        raw = await kv.get(MODE_KEY)
        if raw is not None and raw.decode() in MODES:
            self._mode = raw.decode()
        grants = await kv.get(GRANTS_KEY)
        self._grants = ({k: float(v) for k, v in msgspec.json.decode(grants).items()}
                        if grants is not None else {})

    async def mode(self) -> str:
        """The current mode, as stored (default propose-only)."""
        if self._mode is None:
            await self._load()
        else:
            await self._sync()
        assert self._mode is not None
        if self._mode == "execute-auto" and self._clock() - self._last_user > self.idle_downgrade_s:
            await self._store_mode("propose-only", "idle: execute-auto expired")
        return self._mode

    async def set_mode(self, mode: str, *, channel: Channel) -> bool:
        if channel != "user":
            await self.log.record(ModeChangeIgnoredRecord(requested=mode, channel=channel))
            return False
        mode = mode_named(mode)  # a short name ("confirm") or the long one; else ValueError
        if mode == "execute-auto" and shutil.which("bwrap") is None:
            raise ValueError("execute-auto needs the bubblewrap sandbox, which is not "
                             "installed (apt-get install bubblewrap)")
        self.user_is_here()
        await self.mode()
        await self._store_mode(mode, "user")
        return True

    async def _store_mode(self, mode: str, why: str) -> None:
        previous, self._mode = self._mode, mode
        kv = self.kv()
        if kv is not None:
            await kv.put(MODE_KEY, mode.encode())
        await self.log.record(ModeRecord(mode=mode, previous=previous, why=why))
        await self._changed([{"op": "replace", "path": "/mode", "value": mode}])

    async def use_preset(self, profile: Any) -> None:
        self.kernel.profile = profile
        kv = self.kv()
        if kv is not None:
            await kv.put(PRESET_KEY, profile.name.encode())
        await self.log.record(PresetRecord(name=profile.name))
        await self._changed([{"op": "replace", "path": "/preset", "value": profile.name}])

    @property
    def grants(self) -> list[str]:
        """Grants still in force (``write``, ``network:<tool>``, ``cage:<dir>``,
        ``file:<path>``, ``tool:<name>``)."""
        now = self._wall()
        return sorted(g for g, expiry in self._grants.items() if expiry > now)

    def grants_left(self) -> dict[str, float]:
        """Seconds left of each grant still in force (a frontend's countdown)."""
        now = self._wall()
        return {g: expiry - now for g, expiry in sorted(self._grants.items()) if expiry > now}

    async def grant(self, grant: str, *, seconds: float, channel: Channel) -> bool:
        if channel != "user":
            await self.log.record(GrantIgnoredRecord(grant=grant, channel=channel))
            return False
        if not GRANT.match(grant) or seconds <= 0:
            raise ValueError(f"invalid grant {grant!r} (write, network:<tool>, "
                             "network:<prefix>.*, cage:/abs/dir, file:/abs/file, tool:<name>)")
        await self.mode()
        self._grants[grant] = self._wall() + seconds
        await self._save_grants()
        await self.log.record(GrantRecord(grant=grant, seconds=seconds))
        await self._changed([{"op": "replace", "path": "/grants", "value": self.grants}])
        return True

    async def revoke(self, grant: str) -> None:
        await self.mode()
        self._grants.pop(grant, None)
        await self._save_grants()
        await self.log.record(RevokeRecord(grant=grant))
        await self._changed([{"op": "replace", "path": "/grants", "value": self.grants}])

    async def _save_grants(self) -> None:
        kv = self.kv()
        if kv is not None:
            live = {g: e for g, e in self._grants.items() if e > self._wall()}
            await kv.put(GRANTS_KEY, msgspec.json.encode(live))
