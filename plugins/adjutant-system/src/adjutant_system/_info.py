"""``sys.info`` and ``net.check_port``: read-only facts about this machine."""

from __future__ import annotations

import ipaddress
import os
import platform
import shutil
import sys
from pathlib import Path

from adjutant_hookspecs import ExecutionResult, ToolCall, ToolContext, ToolDeclaration
from adjutant_hookspecs import ToolSafety as Safety

from ._common import int_arg, object_schema, preview, refuse
from ._procfs import meminfo

__all__ = ["NetCheckPort", "SysInfo"]

SECTIONS = ("os", "cpu", "memory", "disk", "python")
LOOPBACK = ("127.0.0.1", "::1")
_LISTEN = "0A"


def _gib(n: int) -> str:
    return f"{n / 2**30:.1f} GiB"


class SysInfo:
    """Facts about the machine; nothing from the environment (it may hold secrets)."""

    declaration = ToolDeclaration(
        name="sys.info",
        version="0.1.0",
        summary="Show system information[ ({sections})]",
        description=(
            "Describe this machine: operating system and kernel, how long it has been up, "
            "CPU cores and load, memory, free disk space of the working directory, Python "
            "version. Reads no environment variables and no user data."
        ),
        args_schema=object_schema(
            {"sections": {"type": "array", "minItems": 1, "uniqueItems": True,
                          "items": {"type": "string", "enum": list(SECTIONS)},
                          "description": "Which parts to show (default: all of them)."}},
            [],
            ["what machine is this?", "how much memory is free?",
             "how much disk space is left here?", "how many CPU cores do I have?",
             "how long has this computer been running?"],
        ),
        safety=Safety(writes=False, level="read", network=False),
        examples=({}, {"sections": ["memory", "disk"]}, {"sections": ["python"]}),
    )

    def _check(self, call: ToolCall) -> list[str] | ExecutionResult:
        if unknown := sorted(set(call.args) - {"sections"}):
            return refuse(call, "schema", f"unknown argument(s) {unknown}")
        sections = call.args.get("sections", list(SECTIONS))
        if (not isinstance(sections, list) or not sections
                or not all(s in SECTIONS for s in sections)):
            return refuse(call, "schema", f"`sections` must be a list of {list(SECTIONS)}")
        return [s for s in SECTIONS if s in sections]

    async def dry_run(self, call: ToolCall, ctx: ToolContext) -> ExecutionResult:
        sections = self._check(call)
        if isinstance(sections, ExecutionResult):
            return sections
        return preview(call, f"read system facts ({', '.join(sections)}); read-only")

    async def execute(self, call: ToolCall, ctx: ToolContext) -> ExecutionResult:
        sections = self._check(call)
        if isinstance(sections, ExecutionResult):
            return sections
        lines: list[str] = []
        if "os" in sections:
            uname = platform.uname()
            lines += [f"os: {uname.system} {_os_release()}".rstrip(),
                      f"kernel: {uname.release}", f"machine: {uname.machine}"]
            if (up := _uptime()) is not None:
                lines.append(f"up: {up}")
        if "cpu" in sections:
            lines.append(f"cpus: {os.cpu_count()}")
            if hasattr(os, "getloadavg"):
                lines.append("load: " + " ".join(f"{x:.2f}" for x in os.getloadavg()))
        if "memory" in sections:
            try:
                mem = meminfo()
                lines.append(f"memory: {_gib(mem.get('MemAvailable', 0))} available of "
                             f"{_gib(mem.get('MemTotal', 0))}")
            except OSError:
                lines.append("memory: unknown (no /proc/meminfo)")
        if "disk" in sections:
            try:
                du = shutil.disk_usage(ctx.cwd)
                lines.append(f"disk ({ctx.cwd}): {_gib(du.free)} free of {_gib(du.total)}")
            except OSError as exc:
                lines.append(f"disk ({ctx.cwd}): unknown ({exc.strerror})")
        if "python" in sections:
            lines.append(f"python: {platform.python_implementation()} "
                         f"{platform.python_version()} ({sys.executable})")
        return ExecutionResult(tool=call.tool, args=dict(call.args), status="ok",
                               stdout="\n".join(lines) + "\n")


def _uptime() -> str | None:
    """How long the machine has been up (``3 days, 4:05``), from /proc/uptime."""
    try:
        seconds = int(float(Path("/proc/uptime").read_text().split()[0]))
    except (OSError, ValueError, IndexError):
        return None
    days, rest = divmod(seconds, 86_400)
    clock = f"{rest // 3600}:{rest % 3600 // 60:02d}"
    return f"{days} day{'s' if days != 1 else ''}, {clock}" if days else clock


def _os_release() -> str:
    try:
        return platform.freedesktop_os_release().get("PRETTY_NAME", "")
    except OSError:
        return ""


class NetCheckPort:
    """Whether a TCP port listens on the loopback address, from /proc/net/tcp{,6}.

    It opens no connection at all: the answer comes from the kernel's socket table, so
    nothing leaves the machine and nothing on the port is woken (hence network false)."""

    declaration = ToolDeclaration(
        name="net.check_port",
        version="0.1.0",
        summary="Check whether port {port} is open[ on {host}]",
        description=(
            "Tell whether something on this machine listens on a TCP port of the loopback "
            "address (127.0.0.1 or ::1), from the kernel's socket table; no connection is "
            "made and no other host can be asked."
        ),
        args_schema=object_schema(
            {
                "port": {"type": "integer", "minimum": 1, "maximum": 65535,
                         "description": "The TCP port number."},
                "host": {"type": "string", "enum": list(LOOPBACK),
                         "description": "Which loopback address (default 127.0.0.1); "
                                        "no other host is accepted."},
            },
            ["port"],
            ["is anything listening on port 8000?", "is my dev server up on localhost:3000?",
             "is postgres running locally on 5432?"],
        ),
        safety=Safety(writes=False, level="read", network=False),
        examples=({"port": 8000}, {"port": 5432, "host": "::1"}),
    )

    def _check(self, call: ToolCall) -> tuple[str, int] | ExecutionResult:
        if unknown := sorted(set(call.args) - {"port", "host"}):
            return refuse(call, "schema", f"unknown argument(s) {unknown}")
        host = call.args.get("host", "127.0.0.1")
        if host not in LOOPBACK:
            return refuse(call, "loopback-only", f"host {str(host)[:100]!r} is not one of "
                          f"{list(LOOPBACK)}; only this machine's loopback can be checked")
        port = int_arg(call, "port", None, 1, 65535)
        if isinstance(port, str):
            return refuse(call, "schema", port)
        return host, port

    async def dry_run(self, call: ToolCall, ctx: ToolContext) -> ExecutionResult:
        checked = self._check(call)
        if isinstance(checked, ExecutionResult):
            return checked
        host, port = checked
        return preview(call, f"read the socket table: is TCP {_fmt(host, port)} listening? "
                             "(no connection is made)")

    async def execute(self, call: ToolCall, ctx: ToolContext) -> ExecutionResult:
        checked = self._check(call)
        if isinstance(checked, ExecutionResult):
            return checked
        host, port = checked
        try:
            bound = [addr for addr in listeners(port) if _serves(addr, host)]
        except OSError as exc:
            return refuse(call, "procfs", f"cannot read the socket table: {exc}")
        if not bound:
            return ExecutionResult(tool=call.tool, args=dict(call.args), status="ok",
                                   stdout=f"not listening: TCP {_fmt(host, port)}\n")
        where = ", ".join(_fmt(str(a), port) for a in sorted(bound, key=str))
        return ExecutionResult(tool=call.tool, args=dict(call.args), status="ok",
                               stdout=f"listening: TCP {_fmt(host, port)} (bound to {where})\n")


def _fmt(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def _serves(addr: ipaddress.IPv4Address | ipaddress.IPv6Address, host: str) -> bool:
    """Whether a listener bound to ``addr`` accepts connections to loopback ``host``."""
    if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
        addr = addr.ipv4_mapped
    if host == "127.0.0.1":
        # an IPv6 wildcard listener is dual-stack unless IPV6_V6ONLY is set
        return addr.is_unspecified or str(addr) == "127.0.0.1"
    return isinstance(addr, ipaddress.IPv6Address) and (addr.is_unspecified or addr.is_loopback)


def listeners(port: int, root: str = "/proc/net") -> list[ipaddress.IPv4Address
                                                         | ipaddress.IPv6Address]:
    """Local addresses with a TCP socket in LISTEN state on ``port``."""
    found: list[ipaddress.IPv4Address | ipaddress.IPv6Address] = []
    for table in ("tcp", "tcp6"):
        try:
            with open(f"{root}/{table}") as handle:
                rows = handle.read().splitlines()[1:]
        except FileNotFoundError:
            continue  # no IPv6 on this host
        for row in rows:
            fields = row.split()
            local, state = fields[1], fields[3]
            hex_addr, _, hex_port = local.partition(":")
            if state != _LISTEN or int(hex_port, 16) != port:
                continue
            raw = bytes.fromhex(hex_addr)
            # the kernel prints each 32-bit word in host (little-endian) order
            if sys.byteorder == "little":
                raw = b"".join(raw[i:i + 4][::-1] for i in range(0, len(raw), 4))
            found.append(ipaddress.ip_address(raw))
    return found
