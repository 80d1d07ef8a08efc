"""``adjutant doctor``: run every registered check, each with an actionable message."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

import msgspec

from adjutant_hookspecs import CheckResult

from .._checks import BUILTIN_CHECKS, safety_chain
from ..kernel._errors import leaves

if TYPE_CHECKING:
    from adjutant_hookspecs import Kernel

__all__ = ["BUILTIN_CHECKS", "configure", "doctor", "run_checks", "safety_chain"]


def run_checks(kernel: Kernel) -> list[tuple[str, CheckResult]]:
    """Run every registered check; an exception becomes a failed check naming it."""
    results = []
    for name, check in kernel.checks.items():
        try:
            result = check.run(kernel)
            if not isinstance(result, CheckResult):
                raise TypeError(f"returned {type(result).__name__}, not CheckResult")
        except Exception as exc:
            owner = kernel.checks.owner(name)
            crash = "; ".join(f"{type(e).__name__}: {e}" for e in leaves(exc))
            result = CheckResult(status="fail", message=f"check crashed: {crash}",
                                 fix=f"report this to the maintainers of plugin {owner!r}")
        results.append((name, result))
    return results


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print results as JSON")


def doctor(kernel: Kernel, args: argparse.Namespace) -> int:
    """Exit 0 when nothing failed (warnings allowed), 1 otherwise."""
    results = run_checks(kernel)
    if args.json:
        payload = [{"check": n, **msgspec.to_builtins(r)} for n, r in results]
        print(msgspec.json.format(msgspec.json.encode(payload)).decode())
    else:
        marks = {"ok": "ok  ", "warn": "warn", "fail": "FAIL"}
        width = max(len(n) for n, _ in results)
        for name, r in results:
            lines = r.message.splitlines() or [""]
            print(f"[{marks[r.status]}] {name.ljust(width)}  {lines[0]}")
            for line in lines[1:]:
                print(f"       {' ' * width}  {line}")
            if r.status != "ok" and r.fix:
                print(f"       {' ' * width}  -> {r.fix}")
    return 1 if any(r.status == "fail" for _, r in results) else 0
