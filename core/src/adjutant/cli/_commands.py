"""``adjutant version`` and ``adjutant plugins``."""

from __future__ import annotations

import argparse
import platform
import sys
from typing import TYPE_CHECKING

import msgspec

from adjutant_hookspecs import __version__ as hookspecs_version

from .._version import __version__

if TYPE_CHECKING:
    from adjutant_hookspecs import Kernel

__all__ = ["configure_plugins", "plugins", "version"]


def version(kernel: Kernel, args: argparse.Namespace) -> int:
    print(f"adjutant-core {__version__} (adjutant-hookspecs {hookspecs_version}, "
          f"Python {platform.python_version()}, data in {kernel.home})")
    return 0


def configure_plugins(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true",
                        help="print a JSON list: name, version, status, registered, error")


def _summary(registered: dict[str, list[str]]) -> str:
    parts = []
    for kind, names in registered.items():
        shown = ", ".join(names) if len(names) <= 4 else f"{len(names)}"
        parts.append(f"{kind}: {shown}")
    return "; ".join(parts) or "-"


def plugins(kernel: Kernel, args: argparse.Namespace) -> int:
    """List every plugin seen, loaded or not. Exit 0: a broken plugin is reported, not fatal."""
    if args.json:
        sys.stdout.write(msgspec.json.format(msgspec.json.encode(kernel.plugins)).decode())
        sys.stdout.write("\n")
        return 0
    rows = [("NAME", "STATUS", "VERSION", "SOURCE", "REGISTERED / ERROR")]
    for p in kernel.plugins:
        detail = p.error if p.status != "loaded" else _summary(p.registered)
        rows.append((p.name, p.status, p.version or "-", p.source, detail or "-"))
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    for row in rows:
        print("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=False)) + "  " + row[4])
    failed = [p.name for p in kernel.plugins if p.status == "failed"]
    if failed:
        print(f"\n{len(failed)} plugin(s) failed to load and were skipped: {', '.join(failed)}. "
              "Run `adjutant doctor` for what to do.", file=sys.stderr)
    return 0
