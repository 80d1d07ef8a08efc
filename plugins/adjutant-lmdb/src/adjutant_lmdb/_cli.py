"""``adjutant log verify|export|tail``, and the ``lmdb`` doctor check.

The commands return a coroutine, so the CLI starts the kernel first and the
plugin's ``startup`` opens the store (recovering a torn tail if there is one).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

from adjutant_hookspecs import CheckResult

__all__ = ["check_lmdb", "configure", "run"]

STORE_KEY = "log:lmdb"


def configure(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="log_command", required=True)
    verify = sub.add_parser(
        "verify", help="check every record's hash, the chain and the checkpoints",
        description="Exit 0 when the log is intact, 1 when it was tampered with (each "
        "problem is named, with the record's index).")
    verify.add_argument("--json", action="store_true", help="print the report as JSON")
    export = sub.add_parser(
        "export", help="append a day's records to <home>/logs/YYYY-MM-DD.jsonl",
        description="Incremental: records already in the file are not written again.")
    export.add_argument("--day", metavar="YYYY-MM-DD", help="the UTC day (default: today)")
    tail = sub.add_parser("tail", help="print the last records")
    tail.add_argument("-n", type=int, default=10, metavar="N", help="how many (default 10)")
    tail.add_argument("--json", action="store_true", help="print them as export lines")


def run(kernel: Any, args: argparse.Namespace) -> Coroutine[Any, Any, int]:
    return _ACTIONS[args.log_command](kernel, args)


def _store(kernel: Any) -> Any:
    from ._log import LmdbLogStore

    store = kernel.stores.get(STORE_KEY)
    if not isinstance(store, LmdbLogStore):
        raise RuntimeError(f"no LMDB action log is registered ({STORE_KEY})")
    return store


async def _verify(kernel: Any, args: argparse.Namespace) -> int:
    report = await _store(kernel).verify()
    if args.json:
        import json

        print(json.dumps(report.to_builtins(), indent=2))
    else:
        print(report.summary())
    return 0 if report.ok else 1


async def _export(kernel: Any, args: argparse.Namespace) -> int:
    path, added = await _store(kernel).export_jsonl(args.day)
    print(f"exported {added} new record(s) to {path}")
    return 0


async def _tail(kernel: Any, args: argparse.Namespace) -> int:
    from ._export import export_line

    if args.n < 0:
        print("adjutant log tail: -n must be >= 0", file=sys.stderr)
        return 2
    for record in await _store(kernel).tail(args.n):
        line = export_line(record)
        if args.json:
            sys.stdout.write(line.decode())
            continue
        body = record.body.decode("utf-8", errors="replace")
        body = body if len(body) <= 160 else body[:157] + "..."
        print(f"{record.index:>6}  {record.time[:23]}Z  {record.hash.hex()[:12]}  {body}")
    return 0


_ACTIONS = {"verify": _verify, "export": _export, "tail": _tail}


def check_lmdb(kernel: Any) -> CheckResult:
    """The lmdb module imports and the data directory is writable."""
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
    state = "exists" if where.exists() else "will be created on first use"
    return CheckResult(status="ok", message=(
        f"lmdb {lmdb.__version__} (LMDB {'.'.join(map(str, lmdb.version()))}); data in "
        f"{where} ({state})"))
