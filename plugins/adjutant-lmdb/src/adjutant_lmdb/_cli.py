"""``adjutant log verify|head|export|tail|reset``.

The commands return a coroutine, so the CLI starts the kernel first and the
plugin's ``startup`` opens the store (recovering a torn tail if there is one, and
closing runs cut by a kill). ``reset`` does not: it is for when the store cannot
open because its database was lost.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from adjutant_hookspecs import Kernel

import argparse
import sys
from collections.abc import Coroutine
from typing import Any

__all__ = ["configure", "run"]

STORE_KEY = "log:lmdb"


def configure(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="log_command", required=True)
    verify = sub.add_parser(
        "verify", help="check every record's hash, the chain and the checkpoints",
        description="Exit 0 when the log is intact, 1 when it was tampered with (each "
        "problem is named, with the record's index).")
    verify.add_argument("--json", action="store_true", help="print the report as JSON")
    verify.add_argument(
        "--head", metavar="INDEX:SHA256", help="also check that record INDEX still has "
        "this hash: a head you kept outside the data home (`adjutant log head`), which a "
        "rewrite of the whole log with recomputed checkpoints cannot match")
    head = sub.add_parser(
        "head", help="print the head as INDEX:SHA256, to keep outside the data home",
        description="Prints the last record's index and hash. Keep the line where "
        "nothing running as you can change it; `adjutant log verify --head LINE` later "
        "proves that every record up to it is unchanged.")
    head.add_argument("--json", action="store_true", help="print index, hash and time as JSON")
    export = sub.add_parser(
        "export", help="append a day's records to <home>/logs/YYYY-MM-DD.jsonl, or write "
        "a redacted copy to share (--output)",
        description="Without --output: brings the data home's own JSONL copy of the day up "
        "to date (incremental; like the log itself it holds everything the tools saw, and "
        "stays in the data home). With --output: writes the day's records to FILE (or - "
        "for standard output) with every secret the redactor knows replaced by "
        "[REDACTED], for a bug report or a colleague; standard error says what was hidden.")
    export.add_argument("--day", metavar="YYYY-MM-DD", help="the UTC day (default: today)")
    export.add_argument("--output", "-o", metavar="FILE", help="write a redacted copy here "
                        "(- for standard output); an existing file is never overwritten")
    reset = sub.add_parser(
        "reset", help="acknowledge a lost log (data.mdb deleted) and start a new one",
        description="Only when the log's data.mdb is gone although a log existed (Adjutant "
        "then refuses to start): moves the old checkpoints and exports aside and lets the "
        "next start begin a new log whose first record says the previous one was lost. "
        "Never deletes a log that is there.")
    reset.add_argument("--yes", action="store_true", help="do it (without: say what it does)")
    tail = sub.add_parser("tail", help="print the last records")
    tail.add_argument("-n", type=int, default=10, metavar="N", help="how many (default 10)")
    tail.add_argument("--json", action="store_true", help="print them as export lines")


def run(kernel: Kernel, args: argparse.Namespace) -> Coroutine[Any, Any, int] | int:
    if args.log_command == "reset":  # without starting the kernel: the log is missing
        return _reset(kernel, args)
    return _ACTIONS[args.log_command](kernel, args)


def _reset(kernel: Kernel, args: argparse.Namespace) -> int:
    from ._lost import check_present, reset

    where = kernel.home / "lmdb"
    if not args.yes:
        try:
            check_present(where)
        except Exception as exc:
            print(f"{exc}\n\n`adjutant log reset --yes` acknowledges the loss.")
            return 2
        print(f"nothing to reset: the action log in {where} is there (or never existed)")
        return 0
    try:
        print(reset(where, kernel.home / "logs"))
    except (ValueError, OSError) as exc:
        print(f"adjutant log reset: {exc}", file=sys.stderr)
        return 1
    return 0


def _store(kernel: Kernel) -> Any:
    from ._log import LmdbLogStore

    store = kernel.stores.get(STORE_KEY)
    if not isinstance(store, LmdbLogStore):
        raise RuntimeError(f"no LMDB action log is registered ({STORE_KEY})")
    return store


async def _verify(kernel: Kernel, args: argparse.Namespace) -> int:
    kept = None
    if args.head is not None:
        from ._anchor import parse_head

        try:
            kept = parse_head(args.head)
        except ValueError as exc:
            print(f"adjutant log verify: --head: {exc}", file=sys.stderr)
            return 2
    store = _store(kernel)
    report = await store.verify()
    extra = await _check_kept_head(store, report, kept)
    if args.json:
        import json

        print(json.dumps({**report.to_builtins(), **extra}, indent=2))
    else:
        print(report.summary())
        if kept is not None and report.ok:
            print(f"  kept head #{kept[0]} matches: records 0..{kept[0]} are those you kept")
    return 0 if report.ok else 1


async def _check_kept_head(store: Any, report: Any,
                           kept: tuple[int, bytes] | None) -> dict[str, Any]:
    """Add a problem to ``report`` when the kept head does not match (JSON fields)."""
    if kept is None:
        return {}
    from ._anchor import check_head
    from ._chain import Problem

    index, digest = kept
    try:
        problem = check_head(index, digest, await store.record(index))
    except ValueError as exc:
        problem = Problem(index, f"record {index}: {exc}")
    if problem is not None:
        report.problems.append(problem)
    return {"kept_head": {"index": index, "hash": digest.hex(), "matches": problem is None}}


async def _head(kernel: Kernel, args: argparse.Namespace) -> int:
    from ._anchor import format_head

    store = _store(kernel)
    report = await store.verify()
    if not report.ok:  # a head of a tampered log would vouch for the tampering
        print(f"adjutant log head: not printed, the log does not verify:\n{report.summary()}",
              file=sys.stderr)
        return 1
    records = await store.tail(1)
    if not records:
        print("adjutant log head: the log is empty", file=sys.stderr)
        return 1
    (record,) = records
    if args.json:
        import json

        print(json.dumps({"index": record.index, "hash": record.hash.hex(),
                          "time": record.time, "head": format_head(record)}))
    else:
        print(format_head(record))
        print("keep this line outside the data home; check it later with "
              "`adjutant log verify --head LINE`", file=sys.stderr)
    return 0


async def _export(kernel: Kernel, args: argparse.Namespace) -> int:
    from ._export import ExportError

    try:
        if args.output is not None:
            return await _share(kernel, args)
        path, added = await _store(kernel).export_jsonl(args.day)
    except (ValueError, ExportError, OSError) as exc:
        print(f"adjutant log export: {exc}", file=sys.stderr)
        return 2 if isinstance(exc, ValueError) else 1
    print(f"exported {added} new record(s) to {path} (not redacted: it stays in the data "
          "home; to share a day, use --output FILE)")
    return 0


async def _share(kernel: Kernel, args: argparse.Namespace) -> int:
    """The day's records, redacted, to ``--output``: made new (never overwriting, never
    through a link or into a pipe) and removed again if the export fails half-way, so
    no partial copy is left to send."""
    import contextlib

    from adjutant.safety.redaction import Redactor
    from adjutant.safety.regular import create_new

    from ._export import parse_day, shareable_line

    day = parse_day(args.day)  # a bad day fails before a file is made
    redactor = Redactor()
    to_stdout = args.output == "-"
    with (contextlib.nullcontext(sys.stdout.buffer) if to_stdout
          else create_new(args.output)) as out:
        count = await _store(kernel).share_day(day, lambda record: out.write(
            shareable_line(record, redactor.value, redactor.text)))
        out.flush()
    hidden = ", ".join(f"{rule} {n}" for rule, n in sorted(redactor.found.items()))
    where = "standard output" if to_stdout else args.output
    print(f"wrote {count} record(s) of {day.isoformat()} to {where}; redacted "
          f"{sum(redactor.found.values())} secret(s)" + (f" ({hidden})" if hidden else ""),
          file=sys.stderr)
    return 0


async def _tail(kernel: Kernel, args: argparse.Namespace) -> int:
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


_ACTIONS = {"verify": _verify, "head": _head, "export": _export, "tail": _tail}
