"""Who may talk to the dock: the user's browser on this machine, nobody else.

- A per-install token in ``$ADJUTANT_HOME/dock/token`` (owner-only, the same code
  as ``mcp serve``'s). The browser gets it once, in the URL ``adjutant dock``
  opens (``/?token=...``); the answer sets an HttpOnly, SameSite=Strict cookie
  and redirects to ``/`` (other parameters kept, e.g. ``thread``) so the token
  leaves the address bar and history.
- ``Host`` must name the loopback address and port the dock listens on (a DNS
  rebinding page sends its own host name): 403 otherwise.
- ``Origin``, when sent, must be the dock's own (a cross-site page's fetch): 403;
  ``Sec-Fetch-Site: cross-site`` likewise.
- Anything else without the cookie (or ``Authorization: Bearer <token>``, for
  scripts) is 401.
"""

from __future__ import annotations

import hashlib
import hmac
from typing import TYPE_CHECKING
from urllib.parse import parse_qs, urlencode

if TYPE_CHECKING:
    from pathlib import Path

    from starlette.types import ASGIApp, Receive, Scope, Send

    from ._state import DockState

__all__ = ["COOKIE", "Guard", "token_file"]

COOKIE = "adjutant_dock"
LOOPBACK = ("127.0.0.1", "localhost", "[::1]")


def token_file(home: Path) -> Path:
    from adjutant import owner_only_secret

    return owner_only_secret(home / "dock" / "token")


def cookie_value(token: str) -> str:
    """What the cookie holds: derived from the token, so the cookie is not the token."""
    return hmac.new(token.encode(), b"adjutant-dock-cookie", hashlib.sha256).hexdigest()


class Guard:
    """ASGI middleware enforcing the rules above before any route runs; the token and
    the port are the app's (``app.state.dock``: the port is known once bound)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        dock: DockState = scope["app"].state.dock
        headers: dict[bytes, list[bytes]] = {}
        for key, value in scope["headers"]:
            headers.setdefault(key.lower(), []).append(value)
        host = headers.get(b"host", [b""])
        if len(host) != 1 or host[0] not in {f"{h}:{dock.port}".encode() for h in LOOPBACK}:
            await _deny(send, 403, "wrong Host: the dock answers only to the loopback "
                        f"address it listens on (127.0.0.1:{dock.port})")
            return
        origin = headers.get(b"origin")
        origins = {f"http://{h}:{dock.port}".encode() for h in LOOPBACK}
        if origin is not None and (len(origin) != 1 or origin[0] not in origins):
            await _deny(send, 403, "cross-origin request refused")
            return
        if headers.get(b"sec-fetch-site", [b""])[0] == b"cross-site":
            await _deny(send, 403, "cross-site request refused")
            return
        if scope["path"] == "/" and scope["method"] == "GET":
            query = parse_qs(scope.get("query_string", b"").decode())
            given = query.pop("token", None)
            if given is not None:
                await _login(send, dock, given[0], urlencode(query, doseq=True))
                return
        if not _authorised(dock, headers):
            await _deny(send, 401, "open the address `adjutant dock` printed (it carries "
                        "the token once), or send Authorization: Bearer <the token in "
                        "$ADJUTANT_HOME/dock/token>")
            return
        await self.app(scope, receive, send)


def _authorised(dock: DockState, headers: dict[bytes, list[bytes]]) -> bool:
    for raw in headers.get(b"cookie", []):
        for part in raw.split(b";"):
            name, _, value = part.strip().partition(b"=")
            if name == COOKIE.encode() and hmac.compare_digest(value, dock.cookie):
                return True
    bearer = headers.get(b"authorization", [])
    return len(bearer) == 1 and hmac.compare_digest(
        bearer[0], f"Bearer {dock.token}".encode())


async def _login(send: Send, dock: DockState, given: str, rest: str) -> None:
    if not hmac.compare_digest(given.encode(), dock.token.encode()):
        await _deny(send, 401, "that token is not this dock's: open the address "
                    "`adjutant dock` printed")
        return
    cookie = f"{COOKIE}={dock.cookie.decode()}; HttpOnly; SameSite=Strict; Path=/"
    await send({"type": "http.response.start", "status": 303, "headers": [
        (b"location", f"/?{rest}".encode() if rest else b"/"),
        (b"set-cookie", cookie.encode()),
        (b"cache-control", b"no-store"), (b"referrer-policy", b"no-referrer")]})
    await send({"type": "http.response.body", "body": b""})


async def _deny(send: Send, status: int, why: str) -> None:
    await send({"type": "http.response.start", "status": status, "headers": [
        (b"content-type", b"text/plain; charset=utf-8"), (b"cache-control", b"no-store")]})
    await send({"type": "http.response.body", "body": f"adjutant dock: {why}\n".encode()})
