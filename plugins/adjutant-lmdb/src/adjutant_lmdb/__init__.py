"""LMDB stores for Adjutant: ``kv:lmdb`` (settings, mode, session state) and
``log:lmdb`` (the action log: append-only, hash-chained, checkpointed, verifiable,
exported daily as JSONL), both in one LMDB environment under ``<home>/lmdb/``.

Importing this module is cheap: ``lmdb`` is imported when a store is opened (in
``startup``), ``anyio`` on the first call that needs a worker thread.

Settings, from the kernel's environment:

- ``ADJUTANT_LMDB_CHECKPOINT_EVERY`` (default 1): checkpoint after every N-th record.
- ``ADJUTANT_LMDB_CHECKPOINT_SYNC_S`` (default 1): seconds between fsyncs of the
  checkpoint file (0: one with every checkpoint). Records are fsync'd either way.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from adjutant_hookspecs import lazy

if TYPE_CHECKING:
    from adjutant_hookspecs import Check, Kernel, KeyValueStore, LogStore

from collections.abc import Callable
from typing import Any

from adjutant_hookspecs import Command, hookimpl, lazy_exports

if TYPE_CHECKING:  # imported on first use (`lazy_exports`): start-up stays cheap
    from ._chain import Problem, Record, VerifyReport
    from ._env import NotOpenError
    from ._export import ExportError
    from ._kv import LmdbKeyValueStore
    from ._log import LmdbLogStore
    from ._lost import LogMissingError

__all__ = [
    "ExportError",
    "LmdbKeyValueStore",
    "LmdbLogStore",
    "LogMissingError",
    "NotOpenError",
    "Problem",
    "Record",
    "VerifyReport",
    "register_checks",
    "register_commands",
    "register_stores",
    "shutdown",
    "startup",
]

CHECKPOINT_EVERY_ENV = "ADJUTANT_LMDB_CHECKPOINT_EVERY"
CHECKPOINT_SYNC_ENV = "ADJUTANT_LMDB_CHECKPOINT_SYNC_S"

__getattr__ = lazy_exports(__name__, {
    "Problem": "._chain", "Record": "._chain", "VerifyReport": "._chain",
    "NotOpenError": "._env", "ExportError": "._export", "LmdbKeyValueStore": "._kv",
    "LmdbLogStore": "._log", "LogMissingError": "._lost"})


@hookimpl
def register_stores(register: Callable[[KeyValueStore | LogStore], None]) -> None:
    """A fresh pair per kernel; they are opened in `startup` (they need the home)."""
    from ._kv import LmdbKeyValueStore
    from ._log import LmdbLogStore

    register(LmdbKeyValueStore())
    register(LmdbLogStore())


@hookimpl
def startup(kernel: Kernel) -> None:
    """Open this kernel's stores under ``<home>/lmdb`` (exports in ``<home>/logs``)."""
    from ._kv import LmdbKeyValueStore
    from ._log import LmdbLogStore
    from ._lost import check_present

    raw = kernel.env.get(CHECKPOINT_EVERY_ENV, "1")
    try:
        every = int(raw)
        if every < 1:
            raise ValueError
    except ValueError:
        raise ValueError(f"{CHECKPOINT_EVERY_ENV} must be a whole number >= 1, got {raw!r}")\
            from None
    raw = kernel.env.get(CHECKPOINT_SYNC_ENV, "")
    try:
        sync_s = float(raw) if raw else None
        if sync_s is not None and not sync_s >= 0:
            raise ValueError
    except ValueError:
        raise ValueError(f"{CHECKPOINT_SYNC_ENV} must be a number of seconds >= 0, "
                         f"got {raw!r}") from None
    # Before any store opens the environment (LMDB would create an empty one).
    check_present(kernel.home / "lmdb")
    for store in kernel.stores.values():
        if isinstance(store, LmdbKeyValueStore) and not store.opened:
            store.open(kernel.home / "lmdb")
        elif isinstance(store, LmdbLogStore) and not store.opened:
            store.open(kernel.home / "lmdb", exports=kernel.home / "logs",
                       checkpoint_every=every, checkpoint_sync_s=sync_s)


async def _export_today(kernel: Kernel) -> None:
    import contextlib

    from ._log import LmdbLogStore

    for store in kernel.stores.values():
        if isinstance(store, LmdbLogStore) and store.opened:
            with contextlib.suppress(OSError):  # a full disk: the next shutdown catches up
                await store.export_jsonl()


@hookimpl
def shutdown(kernel: Kernel) -> Any:
    """Bring today's JSONL export up to date (incremental) before the stores close,
    so the daily file never lags the log by more than one kernel lifetime."""
    return _export_today(kernel)


@hookimpl
def register_commands(register: Callable[[Command], None]) -> None:
    register(Command(name="log", help="the action log: verify it, export a day, show the tail",
                     run=lazy("adjutant_lmdb._cli:run"),
                     configure=lazy("adjutant_lmdb._cli:configure")))


@hookimpl
def register_checks(register: Callable[[Check], None]) -> None:
    from adjutant_hookspecs import Check

    from ._checks import check_lmdb

    register(Check(name="lmdb", run=check_lmdb))
