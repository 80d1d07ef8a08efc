"""One LMDB environment per directory per process, shared by the stores that use it.

LMDB forbids opening the same environment twice in one process (its locks are
POSIX fcntl locks, owned by the process: a second handle would share them and
closing it would drop them), so the key/value store and the log of one kernel,
and the stores of two kernels on the same data home, share one handle here,
counted, and the last store to close it closes it. This is the only
process-wide state of the plugin, and it mirrors a process-wide rule of LMDB.
"""

from __future__ import annotations

import errno
import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    import lmdb

__all__ = ["DEFAULT_MAP_SIZE", "NotOpenError", "SharedEnv", "StoreFullError", "acquire",
           "close_in_thread", "in_thread"]

T = TypeVar("T")

#: The address space reserved for the map. On 64-bit systems this is virtual
#: memory only: the file grows with the data, and nothing is preallocated.
DEFAULT_MAP_SIZE = 1 << 40  # 1 TiB
#: Named databases in the environment: "kv" and "log".
MAX_DBS = 4

_OPEN: dict[str, SharedEnv] = {}
_OPEN_LOCK = threading.Lock()


class NotOpenError(RuntimeError):
    """A store was used before `open()` or after `aclose()`."""


class StoreFullError(OSError):
    """A write the disk (``ENOSPC``, ``EDQUOT``) or LMDB's map (``MDB_MAP_FULL``) had no
    room for. An `OSError` with that errno, so callers treat it as the full disk it is
    (LMDB's own exceptions carry no errno)."""


def _full(exc: BaseException) -> StoreFullError | None:
    import lmdb

    if not isinstance(exc, lmdb.Error):
        return None
    if isinstance(exc, lmdb.MapFullError):
        return StoreFullError(errno.ENOSPC, "the LMDB map is full (MDB_MAP_FULL)")
    for code in (errno.ENOSPC, errno.EDQUOT):
        if os.strerror(code) in str(exc):
            return StoreFullError(code, os.strerror(code))
    return None


class SharedEnv:
    """An open ``lmdb.Environment`` with a count of the stores using it, and a
    count of operations in flight so that closing waits for them."""

    def __init__(self, key: str, env: lmdb.Environment) -> None:
        self.key = key
        self.env = env
        self.refs = 0
        self.closed = False
        self._busy = 0
        self._idle = threading.Condition()

    @contextmanager
    def use(self, what: str) -> Iterator[lmdb.Environment]:
        """Hold the environment open for one operation (any thread)."""
        with self._idle:
            if self.closed:
                raise NotOpenError(f"{what}: the LMDB environment {self.key} is closed")
            self._busy += 1
        try:
            yield self.env
        except Exception as exc:
            if (full := _full(exc)) is not None:
                raise full from exc
            raise
        finally:
            with self._idle:
                self._busy -= 1
                self._idle.notify_all()

    def release(self) -> None:
        """Drop one store's reference; the last one closes the environment once the
        operations in flight are done (closing under a transaction is undefined)."""
        with _OPEN_LOCK:  # held until closed: a new open of the path must wait for it
            self.refs -= 1
            if self.refs > 0:
                return
            del _OPEN[self.key]
            with self._idle:
                self.closed = True
                while self._busy:  # operations in flight need only _idle: no deadlock
                    self._idle.wait()
            self.env.close()


def acquire(path: Path, map_size: int = DEFAULT_MAP_SIZE) -> SharedEnv:
    """Open (or share) the environment in directory ``path``, creating it if needed.

    LMDB's full-durability defaults are kept on purpose: ``sync`` and ``metasync``
    (every commit is fsync'd before it returns), no ``writemap``, no ``map_async``.
    """
    import lmdb

    path.mkdir(parents=True, exist_ok=True, mode=0o700)  # the log holds what tools read
    key = str(path.resolve())
    with _OPEN_LOCK:
        shared = _OPEN.get(key)
        if shared is None:
            env = lmdb.open(key, map_size=map_size, max_dbs=MAX_DBS, subdir=True,
                            mode=0o600)
            shared = _OPEN[key] = SharedEnv(key, env)
        shared.refs += 1
        return shared


async def in_thread(fn: Callable[..., T], *args: object) -> T:
    """Run a blocking LMDB call in a worker thread. Once started it runs to the end
    even if the caller is cancelled: a commit is never abandoned half-way."""
    from anyio import to_thread

    return await to_thread.run_sync(fn, *args)


async def close_in_thread(close: Callable[[], None]) -> None:
    """Run a store's blocking ``close`` to the end, even from a cancelled scope (as at
    kernel shutdown after Ctrl-C): a half-closed store is worse than a late one."""
    from anyio import CancelScope, to_thread

    with CancelScope(shield=True):
        await to_thread.run_sync(close)
