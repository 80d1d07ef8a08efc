"""The dock's per-app state (`DockState`, on ``app.state.dock``) and what several
endpoints share: the state snapshot the page draws, the JSON error, the id check."""

from __future__ import annotations

import re
import shutil
import time
from typing import TYPE_CHECKING, Any

import anyio
import attrs
import msgspec
from starlette.requests import Request
from starlette.responses import JSONResponse

from adjutant.operator.planner import MAX_REQUEST
from adjutant_hookspecs import MODE_LABELS

from ._access import cookie_value
from ._voice_feed import voice_state

if TYPE_CHECKING:
    from adjutant import Copilot
    from adjutant_hookspecs import Kernel

    from ._runs import Hub
    from ._voice_feed import VoiceFeed

__all__ = ["ID", "MODE_NAMES", "DockState", "dock_of", "error", "read_json", "snapshot"]

#: Thread and run ids as the page makes them.
ID = re.compile(r"^[A-Za-z0-9_.:-]{1,128}$")
#: What the page calls the modes (short name -> stored name; colours in the page's CSS),
#: from the one vocabulary every frontend shares.
MODE_NAMES = {short: mode for mode, (short, _) in MODE_LABELS.items()}


@attrs.define(eq=False)
class DockState:
    """Everything the endpoints and the guard reach, one per app.

    :param hub: The runs (queue, AG-UI segments, interrupts, history, the voice feed).
    :param token: This install's token; the cookie is derived from it.
    :param port: The loopback port served (set once bound, when 0 was asked for).
    :param ping_s: Seconds between SSE keepalive comments.
    """

    hub: Hub
    token: str
    port: int
    ping_s: float = 15.0
    cookie: bytes = attrs.field(init=False)
    #: One recording heard at a time: one model, one operator.
    hearing: anyio.Lock = attrs.field(init=False, factory=anyio.Lock)

    def __attrs_post_init__(self) -> None:
        self.cookie = cookie_value(self.token).encode()

    @property
    def kernel(self) -> Kernel:
        return self.hub.kernel

    @property
    def copilot(self) -> Copilot:
        return self.hub.copilot

    @property
    def voice(self) -> VoiceFeed:
        return self.hub.voice


def dock_of(request: Request) -> DockState:
    dock: DockState = request.app.state.dock
    return dock


def error(code: int, message: str, **extra: Any) -> JSONResponse:
    return JSONResponse({"error": message, **extra}, status_code=code)


async def read_json(request: Request) -> Any:
    """The body as JSON (None: not JSON; the endpoint says what it wanted)."""
    try:
        return msgspec.json.decode(await request.body())
    except msgspec.DecodeError:
        return None


async def snapshot(dock: DockState) -> dict[str, Any]:
    """``/api/state``: the operator's state and what the page shows around it."""
    copilot, hub, kernel = dock.copilot, dock.hub, dock.kernel
    state = dict(copilot.state())
    state["mode"] = await copilot.mode()
    state["modes"] = MODE_NAMES
    # the button's name and the one-line meaning the page always shows
    state["modeLabels"] = {mode: {"short": short, "meaning": meaning}
                           for mode, (short, meaning) in MODE_LABELS.items()}
    state["model"] = {"provider": kernel.profile.model.provider,
                      "name": kernel.profile.model.model,
                      "contextSize": kernel.profile.model.context_size}
    state["openInterrupts"] = hub.open_interrupts()
    state["maxRequest"] = MAX_REQUEST  # the page keeps a longer request in its box
    state["queue"] = len(hub.queue) + (hub.active is not None)
    state["policies"] = sorted(kernel.policies)
    state["sandbox"] = shutil.which("bwrap") is not None
    state["memoryMb"] = _rss_mb()
    state["spent"] = await copilot.routing.report()
    state["voice"] = voice_state(kernel)
    state["grantsExpire"], state["serverNow"] = _grant_expiries(
        copilot, state.get("grants") or [])
    return state


def _grant_expiries(copilot: Copilot, grants: list[str]) -> tuple[dict[str, int], int]:
    """Each live grant's expiry and the time now, in ms (the page counts down the
    difference), from the operator's ``grants_left``."""
    now = int(time.time() * 1000)
    left = copilot.operator_state.grants_left()
    return {g: now + int(s * 1000) for g, s in left.items() if g in grants}, now


def _rss_mb() -> float | None:
    """This process's resident memory (the kernel and the dock), where /proc has it."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        pass
    return None
