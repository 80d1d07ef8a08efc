"""``adjutant workspace``: the pinned cage roots, and re-pinning one after a change.

The workspace and every cage root are pinned (device and inode) the first time
Adjutant works there; when one later resolves to something else, every run refuses
until the user looks at it and runs ``adjutant workspace trust PATH``.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING

from adjutant_hookspecs.records import CageTrustedRecord

from ..operator import Copilot
from ..safety._cages import describe, trust

if TYPE_CHECKING:
    from adjutant_hookspecs import Kernel

__all__ = ["configure_workspace", "workspace"]


def configure_workspace(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", nargs="?", choices=("show", "trust"), default="show",
                        help="show the pins (default), or trust PATH as it is now")
    parser.add_argument("path", nargs="?",
                        help="the directory (default: the workspace, $ADJUTANT_WORKSPACE "
                        "or the current directory)")
    parser.add_argument("--json", action="store_true")


async def workspace(kernel: Kernel, args: argparse.Namespace) -> int:
    copilot = Copilot(kernel)
    await copilot.mode()
    kv = copilot.key_values()
    if args.action == "trust":
        if kv is None:
            print("no key/value store is installed, so nothing is pinned", file=sys.stderr)
            return 1
        path = args.path or copilot.cwd
        try:
            old, new = await trust(kv, path)
        except OSError as exc:
            print(f"cannot trust {path}: {exc.strerror}", file=sys.stderr)
            return 1
        await copilot.log.record(CageTrustedRecord(
            path=new.path, target=new.target, device=new.device, inode=new.inode,
            was=None if old is None else {"target": old.target, "device": old.device,
                                          "inode": old.inode}))
        if args.json:
            print(json.dumps({"path": new.path, "target": new.target, "device": new.device,
                              "inode": new.inode}))
        else:
            was = f" (was {old.what()}, pinned {old.when()})" if old is not None else ""
            print(f"pinned {new.what()}{was}")
        return 0
    roots = [args.path] if args.path else [copilot.cwd, *copilot.tool_context("").cages]
    infos = []
    for root in dict.fromkeys(roots):
        infos.append(await describe(kv, root))
    if args.json:
        print(json.dumps(infos))
    else:
        for info in infos:
            print(f"{info['path']}: {info['state']}")
    return 0 if all(i.get("ok", True) for i in infos) else 4
