"""URL arguments: what may be fetched at all, and what always deserves a question."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import ipaddress

__all__ = ["SCHEMES", "check_url"]

#: Schemes a url-role argument may use; ``file:`` would be a path read in disguise.
SCHEMES = frozenset({"http", "https", "ws", "wss"})
MAX_URL = 8192
_LOCAL_SUFFIXES = (".localhost", ".local", ".internal", ".lan", ".home.arpa")


def check_url(value: object) -> tuple[str, str] | None:
    """``("deny"|"ask", reason)`` for a url-role value, or None when it is unremarkable."""
    if not isinstance(value, str):
        return "deny", f"a URL must be a string, got {type(value).__name__}"
    if len(value) > MAX_URL:
        return "deny", f"the URL is longer than {MAX_URL} characters"
    if any(c.isspace() or ord(c) < 0x20 or c == "\x7f" for c in value):
        return "deny", f"the URL {value[:80]!r} contains spaces or control characters"
    from urllib.parse import urlsplit  # only for tools that take URLs

    try:
        parts = urlsplit(value)
        host = parts.hostname
        parts.port  # noqa: B018 - raises ValueError on a malformed port
    except ValueError as exc:
        return "deny", f"the URL {value[:80]!r} does not parse: {exc}"
    scheme = parts.scheme.lower()
    if scheme not in SCHEMES:
        shown = f"{scheme}:" if scheme else "a URL without a scheme"
        return "deny", f"{value[:80]!r}: only http, https, ws and wss URLs are allowed, not {shown}"
    if not host:
        return "deny", f"the URL {value[:80]!r} has no host"
    if _is_local(host):
        return "ask", (
            f"{value[:80]} points at this machine or the local network ({host}): "
            "confirm this request"
        )
    return None


def _is_local(host: str) -> bool:
    """Loopback, private, link-local (cloud metadata) or local-only names.

    Names that resolve to such addresses (DNS rebinding) are beyond a string check:
    the network sandbox decides what is reachable.
    """
    name = host.rstrip(".").lower()
    if name == "localhost" or name.endswith(_LOCAL_SUFFIXES):
        return True
    address = _address(name)
    if address is not None:
        return not address.is_global
    return "." not in name  # a single label ("intranet") only resolves locally


def _address(name: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """An IP literal, including ``127.1``, ``0x7f.0.0.1`` and ``2130706433``: the
    legacy forms inet_aton (and so curl and most resolvers) accept."""
    import ipaddress  # only for tools that take URLs
    import socket

    try:
        return ipaddress.ip_address(name)
    except ValueError:
        pass
    if not name or any(c not in "0123456789abcdefx." for c in name):
        return None
    try:
        return ipaddress.IPv4Address(socket.inet_aton(name))
    except OSError:
        return None
