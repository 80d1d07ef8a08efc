"""The ``lmdb`` doctor check: the store opens, the log verifies, and what a crash left.

``adjutant doctor`` does not start the kernel, so the check opens the log itself
(as any start does: a torn tail is cut, runs cut by a kill are closed as
interrupted), verifies it, and closes it. Everything it calls is synchronous:
nothing is left un-awaited.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from adjutant_hookspecs import Kernel

import os
from pathlib import Path
from typing import Any

from adjutant_hookspecs import CheckResult

__all__ = ["check_lmdb"]


def check_lmdb(kernel: Kernel) -> CheckResult:
    """The lmdb module imports, the data directory is writable, the action log opens
    and verifies; runs that were interrupted are counted."""
    try:
        import lmdb
    except ImportError as exc:
        return CheckResult(status="fail", message=f"the lmdb module does not import: {exc}",
                           fix="reinstall adjutant-lmdb with its dependencies "
                           "(pip install --force-reinstall adjutant-lmdb), or pip install lmdb")
    where: Path = kernel.home / "lmdb"
    probe = where
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    files = [where / name for name in ("data.mdb", "lock.mdb", "checkpoints.jsonl")]
    blocked = [p for p in (probe, *files) if p.exists() and not os.access(p, os.W_OK)]
    if not probe.is_dir() or blocked:
        target = ", ".join(str(p) for p in blocked) or str(probe)
        return CheckResult(status="fail", message=f"the LMDB store cannot write to {target}",
                           fix=f"make {target} writable by this user (chown/chmod), or set "
                           "ADJUTANT_HOME to a writable directory")
    version = f"lmdb {lmdb.__version__} (LMDB {'.'.join(map(str, lmdb.version()))})"
    from ._lost import LogMissingError, check_present

    try:
        check_present(where)
    except LogMissingError as exc:
        return CheckResult(status="fail", message=str(exc),
                           fix="restore data.mdb from a backup, or `adjutant log reset --yes`")
    if not (where / "data.mdb").exists():
        return CheckResult(status="ok", message=f"{version}; data in {where} (will be "
                           "created on first use)")
    try:
        report, interrupted, running = _open_and_verify(kernel, where)
    except Exception as exc:
        return CheckResult(
            status="fail", message=f"the action log in {where} cannot be opened: "
            f"{type(exc).__name__}: {exc}",
            fix=f"{where / 'data.mdb'} is damaged or not an LMDB file: restore it from a "
            "backup (move the damaged one aside first), then `adjutant log verify`")
    if not report.ok:
        first = report.problems[0].message
        return CheckResult(status="fail", message=(
            f"the action log does not verify: {len(report.problems)} problem(s), the first: "
            f"{first}"), fix="`adjutant log verify` lists every problem")
    message = f"{version}; log OK: {report.count} record(s) in {where}"
    if running:
        message += f"; {running} run(s) in progress"
    if not interrupted:
        return CheckResult(status="ok", message=message)
    unfinished = [run for run in interrupted if run.get("tool_call_without_result")]
    lines = [f"{message}; {len(interrupted)} run(s) were interrupted (killed or crashed "
             f"mid-run), {len(unfinished)} with a tool call without a result"]
    for run in unfinished[-5:]:
        step = run["tool_call_without_result"]
        lines.append(f"run {run['run_id']}: step {step.get('step')} {step.get('tool')} may "
                     "have taken effect unrecorded")
    if not unfinished:
        return CheckResult(status="ok", message="\n".join(lines))
    return CheckResult(status="warn", message="\n".join(lines),
                       fix="check what those steps did (`adjutant log verify` lists them; "
                       "`adjutant log tail` shows the records)")


def _open_and_verify(kernel: Kernel, where: Path) -> tuple[Any, list[dict[str, Any]], int]:
    from . import _runs
    from ._log import LmdbLogStore

    store = next((s for s in kernel.stores.values()
                  if isinstance(s, LmdbLogStore) and s.opened), None)
    mine = store is None
    if store is None:
        store = LmdbLogStore()
        store.open(where, exports=kernel.home / "logs")
    try:
        report = store._verify()
        interrupted = store._read_runs(_runs.interrupted)
        running = sum(1 for run in store._read_runs(_runs.open_runs) if run["alive"])
    finally:
        if mine:
            store.close()
    return report, interrupted, running
