"""Where the agent's state is kept: the profile's key-value store (LMDB by default), one
key per recording session, written after every cycle (a kill loses at most the cycle in
flight) and readable from any process."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._state import CopilotState, decode_state, encode_state

if TYPE_CHECKING:
    from adjutant_hookspecs import Kernel

__all__ = ["PREFIX", "StateStore"]

PREFIX = "copilot-agent/state/"


def _kv(kernel: Kernel) -> Any:
    """The key-value store the operator uses too: the one the profile's ``stores.kv``
    names (registry keys are ``kv:<name>``), else the durable one (the kernel's rule)."""
    wanted = kernel.profile.stores.get("kv")
    named = {key.split(":", 1)[-1]: s for key, s in kernel.stores.items()
             if getattr(s, "kind", None) == "kv"}
    if wanted is not None:
        found = [named[wanted]] if wanted in named else []
    else:
        found = [s for s in named.values() if getattr(s, "durable", True)] \
            or list(named.values())
    if not found:
        raise LookupError("no key-value store to keep the copilot's state in"
                          + (f" (the profile names {wanted!r})" if wanted else "")
                          + ": install adjutant-lmdb")
    return found[0]


class StateStore:
    def __init__(self, kernel: Kernel) -> None:
        self.kv = _kv(kernel)

    async def save(self, session_id: str, state: CopilotState) -> None:
        await self.kv.put(PREFIX + session_id, encode_state(state))

    async def load(self, session_id: str) -> CopilotState | None:
        data = await self.kv.get(PREFIX + session_id)
        return decode_state(data) if data is not None else None

    async def sessions(self) -> list[str]:
        return [key[len(PREFIX):] async for key, _ in self.kv.scan(PREFIX)]
