"""The operator's state and what it sees: ``mode``, ``grant``, ``status``, ``tools``,
``presets``, ``context`` and ``bundle``. None plans or runs a step, so none needs the
terminal approver or the voice frontends (`adjutant.cli._operate` has those)."""

from __future__ import annotations

import argparse
import functools
import json
import os
import sys
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from adjutant_hookspecs import MODE_LABELS, mode_named, to_builtins

from ..kernel._settings import load_profile
from ..operator import Copilot
from ..safety.terminal import safe_streams
from ._status import one_line as _one_line
from ._status import print_status, say_mode, status_info

if TYPE_CHECKING:
    from ..kernel._kernel import Kernel

__all__ = ["bundle", "context", "grant", "mode", "presets", "status", "terminal_safe",
           "tools"]


def terminal_safe(command: Callable[..., Awaitable[int]]) -> Callable[..., Awaitable[int]]:
    """Everything ``command`` prints is neutralised (`adjutant.safety.terminal`): the models,
    files, tools and clients it shows cannot drive the terminal."""

    @functools.wraps(command)
    async def guarded(kernel: Kernel, args: argparse.Namespace) -> int:
        with safe_streams():
            return await command(kernel, args)
    return guarded


def _mode_name(name: str) -> str:
    try:
        return mode_named(name)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def configure_mode(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "mode", nargs="?", type=_mode_name, metavar="MODE", help="switch to this mode: "
        + "; ".join(f"{short} ({mode}): {what}" for mode, (short, what) in MODE_LABELS.items()))
    parser.add_argument("--json", action="store_true")


@terminal_safe
async def mode(kernel: Kernel, args: argparse.Namespace) -> int:

    copilot = Copilot(kernel)
    if args.mode is not None and not await copilot.set_mode(args.mode, channel="user"):
        print(f"could not switch to {args.mode} (see `adjutant doctor`)", file=sys.stderr)
        return 1
    current = await copilot.mode()
    if args.json:
        print(json.dumps({"mode": current}))
    else:
        what = MODE_LABELS[current][1]  # type: ignore[index]
        say_mode(current, f" {what} ({current})")
    return 0


def configure_grant(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("grant", nargs="?", help="write, network:<tool> (or network:<prefix>.* "
                        "for a family, e.g. network:mcp.time.*), cage:/abs/dir (reads there), "
                        "file:/abs/file (writes to that one file), tool:<name> (that tool's "
                        "writes; never a program, an address or a destructive tool)")
    parser.add_argument("--minutes", type=float, default=60.0,
                        help="how long it lasts (default 60)")
    parser.add_argument("--revoke", action="store_true", help="take the grant back")
    parser.add_argument("--json", action="store_true")


@terminal_safe
async def grant(kernel: Kernel, args: argparse.Namespace) -> int:
    """Time-boxed grants from the user: list, give, revoke (persisted, logged)."""

    copilot = Copilot(kernel)
    await copilot.mode()
    if args.grant is not None:
        if args.revoke:
            await copilot.revoke(args.grant)
        else:
            try:
                await copilot.grant(args.grant, seconds=args.minutes * 60, channel="user")
            except ValueError as exc:
                print(str(exc), file=sys.stderr)
                return 2
    live = copilot.grants
    if args.json:
        print(json.dumps({"grants": live}))
    else:
        print("\n".join(live) if live else "no grants in force")
    return 0


def configure_json(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true")


@terminal_safe
async def status(kernel: Kernel, args: argparse.Namespace) -> int:

    info = await status_info(kernel, Copilot(kernel))
    if args.json:
        print(json.dumps(info, default=str))
    else:
        print_status(info)
    return 0


def configure_tools(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", nargs="?", choices=["list", "show"], default="list")
    parser.add_argument("name", nargs="?", help="the tool to show")
    parser.add_argument("--json", action="store_true")


@terminal_safe
async def tools(kernel: Kernel, args: argparse.Namespace) -> int:
    """With the kernel started: tools mounted at run time (an MCP server's) are listed."""
    if args.action == "show":
        if args.name not in kernel.tools:
            print(f"no tool named {args.name!r}; `adjutant tools` lists them", file=sys.stderr)
            return 1
        declaration = to_builtins(kernel.tools[args.name].declaration)
        print(json.dumps(declaration, indent=None if args.json else 2))
        return 0
    rows = [{"name": n, "level": t.declaration.safety.level, "plugin": kernel.tools.owner(n),
             "description": t.declaration.description} for n, t in kernel.tools.items()]
    if args.json:
        print(json.dumps(rows))
        return 0
    width = max((len(row["name"]) for row in rows), default=0)
    for row in rows:
        print(f"{row['name']:<{width}}  {row['level']:<12} {_one_line(row['description'], 70)}")
    return 0


def configure_presets(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", nargs="?", choices=["list", "use"], default="list")
    parser.add_argument("name", nargs="?", help="the preset to use")
    parser.add_argument("--json", action="store_true")


@terminal_safe
async def presets(kernel: Kernel, args: argparse.Namespace) -> int:

    names = _preset_names(os.path.join(kernel.home, "profiles"))
    if args.action == "use":
        if not args.name:
            print("name the preset to use", file=sys.stderr)
            return 2
        profile = load_profile(kernel.home, args.name)
        await Copilot(kernel).use_preset(profile)
        print(f"using preset {profile.name} ({profile.model.provider}:{profile.model.model})")
        return 0
    if args.json:
        print(json.dumps({"presets": names, "active": kernel.profile.name}))
        return 0
    for name in names:
        print(("* " if name == kernel.profile.name else "  ") + name)
    return 0


def _preset_names(folder: str) -> list[str]:
    found = os.listdir(folder) if os.path.isdir(folder) else []
    return sorted({"default"} | {f.removesuffix(".json") for f in found if f.endswith(".json")})




def configure_bundle(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--run", dest="run_id", help="only this run (default: all)")
    parser.add_argument("-o", "--output", default="adjutant-bundle.tar.gz",
                        help="where to write the bundle (default: %(default)s)")


async def bundle(kernel: Kernel, args: argparse.Namespace) -> int:
    """A bug bundle: log slice, settings, versions, artifacts; secrets redacted."""

    if args.output.endswith(os.sep) or os.path.isdir(args.output):  # noqa: ASYNC240 - one stat
        folder = args.output.rstrip(os.sep) or "."
        print(f"adjutant bundle: {args.output} is a folder: name the bundle's file "
              f"(-o {folder}/adjutant-bundle.tar.gz)", file=sys.stderr)
        return 1
    try:
        path = await Copilot(kernel).export_bundle(args.output, run_id=args.run_id)
    except FileExistsError as exc:
        print(f"adjutant bundle: {exc.filename}: {exc.strerror} (-o FILE)", file=sys.stderr)
        return 1
    print(path)
    return 0


@terminal_safe
async def context(kernel: Kernel, args: argparse.Namespace) -> int:
    """The context bulletin a request would use now, as the operator will show it."""

    bulletin = to_builtins(await Copilot(kernel).bulletin())
    if args.json:
        print(json.dumps(bulletin))
        return 0
    enabled = kernel.profile.context_providers
    for name, provider in kernel.context_providers.items():
        on = enabled.get(name, getattr(provider, "default_enabled", True))
        print(f"source {name}: {'on' if on else 'off (switch on in the profile)'}")
    for key, value in bulletin.items():
        if value:
            print(f"{key}: {json.dumps(value, ensure_ascii=False)[:300]}")
    return 0
