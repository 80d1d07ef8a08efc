"""Pinned cage roots: a workspace or cage is the directory it was the first time.

The first time Adjutant works with a cage root (the workspace, a granted
``cage:<dir>``, a profile's ``path_cages``, the scratch directory) it records the
device and inode the path resolves to, in the key/value store of the data home. A
later session that finds the path resolving to anything else (the project directory
replaced by a symlink to ``/``, a bind mount, a re-created directory) refuses to
work there, saying what changed, until the user re-pins it with
``adjutant workspace trust PATH``. A path that was a symlink when first seen is
pinned at its target. A root that does not exist now is not followed anywhere and
keeps its pin.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import time
from collections.abc import Collection, Iterable
from typing import Any

import attrs
import msgspec

__all__ = ["CageChangedError", "Pin", "check_roots", "describe", "pin_of", "trust"]

PIN_PREFIX = "cage/pin/"


@attrs.frozen
class Pin:
    """What a cage root was when it was pinned."""

    path: str  #: the path as given (absolute, links not resolved)
    target: str  #: where it resolved
    device: int
    inode: int
    pinned_at: float

    def when(self) -> str:
        return time.strftime("%Y-%m-%d %H:%M", time.localtime(self.pinned_at))

    def what(self) -> str:
        via = f" (resolved to {self.target})" if self.target != self.path else ""
        return f"{self.path}{via}, device {self.device} inode {self.inode}"


class CageChangedError(PermissionError):
    """A cage root no longer resolves to the directory that was pinned: nothing runs."""

    def __init__(self, message: str, path: str) -> None:
        super().__init__(message)
        self.path = path


def _key(path: str) -> str:
    # hashed: LMDB keys are at most 511 bytes, paths are not
    return PIN_PREFIX + hashlib.sha256(os.fsencode(path)).hexdigest()[:40]


def _now(path: str) -> Pin:
    """The path as it resolves now (raises OSError when it cannot be looked at)."""
    st = os.stat(path)  # follows links: the directory a tool would end up in
    return Pin(path=path, target=os.path.realpath(path), device=st.st_dev, inode=st.st_ino,
               pinned_at=time.time())


def _absolute(path: str) -> str:
    return os.path.abspath(path)  # (no link resolved: the key is the path as given)


def _moved(path: str, now: Pin) -> str:
    how = "is now a symlink to" if os.path.islink(path) else "now resolves to"
    return f"{how} {now.target}, device {now.device} inode {now.inode}"


def trust_hint(path: str) -> str:
    return f"adjutant workspace trust {shlex.quote(path)}"


async def pin_of(kv: Any, path: str) -> Pin | None:
    """The pin recorded for ``path``, if any."""
    path = _absolute(path)
    raw = await kv.get(_key(path))
    if raw is None:
        return None
    pin = msgspec.json.decode(raw)
    return Pin(**pin) if pin.get("path") == path else None


async def _store(kv: Any, pin: Pin) -> None:
    await kv.put(_key(pin.path), msgspec.json.encode(attrs.asdict(pin)))


async def check_roots(kv: Any, roots: Iterable[tuple[str, str]], *,
                      renew: Collection[str] = ()) -> list[Pin]:
    """Check each ``(kind, path)`` root against its pin; pin the ones seen the first
    time (and those in ``renew``: directories Adjutant has just made itself).

    Returns the new pins; raises `CageChangedError` at the first root that changed or
    cannot be looked at."""
    fresh: list[Pin] = []
    seen: set[str] = set()
    for kind, given in roots:
        path = _absolute(given)
        if path in seen:
            continue
        seen.add(path)
        try:
            now = _now(path)
        except FileNotFoundError:
            continue  # nothing there to follow; the pin stays for when it comes back
        except OSError as exc:
            raise CageChangedError(
                f"refusing to work: the {kind} {path} cannot be checked against its pin "
                f"({exc.strerror}); nothing was read or written", path) from None
        pin = await pin_of(kv, path)
        if pin is None or given in renew or path in renew:
            await _store(kv, now)
            fresh.append(now)
            continue
        if (pin.device, pin.inode) != (now.device, now.inode):
            raise CageChangedError(
                f"refusing to work: the {kind} {path} is not the directory pinned on "
                f"{pin.when()} (it was {pin.target}, device {pin.device} inode {pin.inode};"
                f" it {_moved(path, now)}); nothing was read or written. If you changed "
                f"it yourself, run: {trust_hint(path)}", path)
    return fresh


async def trust(kv: Any, path: str) -> tuple[Pin | None, Pin]:
    """Pin ``path`` at what it resolves to now (the user checked it); returns the old
    pin and the new one. Raises OSError when the path cannot be looked at."""
    path = _absolute(path)
    old = await pin_of(kv, path)
    new = _now(path)
    await _store(kv, new)
    return old, new


async def describe(kv: Any, path: str) -> dict[str, Any]:
    """What ``status`` says about a root: its pin and whether it still holds."""
    path = _absolute(path)
    pin = await pin_of(kv, path) if kv is not None else None
    info: dict[str, Any] = {"path": path, "pinned": pin is not None}
    try:
        now: Pin | None = _now(path)
    except OSError as exc:
        now, info["error"] = None, exc.strerror
    if pin is None:
        info["state"] = "not pinned yet (pinned at the first run)" if kv is not None \
            else "not pinned (no key/value store)"
        if now is not None and now.target != path:
            info["state"] += f"; a symlink to {now.target}, which is what will be pinned"
        return info
    info.update(target=pin.target, device=pin.device, inode=pin.inode,
                pinned_at=pin.pinned_at)
    if now is None:
        info["state"] = f"pinned {pin.when()} at {pin.what()}; missing now"
    elif (now.device, now.inode) != (pin.device, pin.inode):
        info["state"] = (f"CHANGED since pinned {pin.when()} at {pin.what()}: now "
                         f"{now.target}; Adjutant refuses to work there until you run "
                         f"{trust_hint(path)}")
    else:
        info["state"] = f"pinned {pin.when()} at {pin.what()}"
    info["ok"] = now is not None and (now.device, now.inode) == (pin.device, pin.inode)
    return info
