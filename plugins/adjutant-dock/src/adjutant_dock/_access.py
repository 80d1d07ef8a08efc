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
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode

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
    """ASGI middleware enforcing the rules above before any route runs."""

    def __init__(self, app: Any, token: str, port: int) -> None:
        self.app = app
        self.token = token
        self.cookie = cookie_value(token).encode()
        self.port = port

    def hosts(self) -> set[bytes]:
        return {f"{h}:{self.port}".encode() for h in LOOPBACK}

    def origins(self) -> set[bytes]:
        return {f"http://{h}:{self.port}".encode() for h in LOOPBACK}

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers: dict[bytes, list[bytes]] = {}
        for key, value in scope["headers"]:
            headers.setdefault(key.lower(), []).append(value)
        host = headers.get(b"host", [b""])
        if len(host) != 1 or host[0] not in self.hosts():
            await _deny(send, 403, "wrong Host: the dock answers only to the loopback "
                        f"address it listens on (127.0.0.1:{self.port})")
            return
        origin = headers.get(b"origin")
        if origin is not None and (len(origin) != 1 or origin[0] not in self.origins()):
            await _deny(send, 403, "cross-origin request refused")
            return
        if headers.get(b"sec-fetch-site", [b""])[0] == b"cross-site":
            await _deny(send, 403, "cross-site request refused")
            return
        if scope["path"] == "/" and scope["method"] == "GET":
            query = parse_qs(scope.get("query_string", b"").decode())
            given = query.pop("token", None)
            if given is not None:
                await self._login(send, given[0], urlencode(query, doseq=True))
                return
        if not self._authorised(headers):
            await _deny(send, 401, "open the address `adjutant dock` printed (it carries "
                        "the token once), or send Authorization: Bearer <the token in "
                        "$ADJUTANT_HOME/dock/token>")
            return
        await self.app(scope, receive, send)

    def _authorised(self, headers: dict[bytes, list[bytes]]) -> bool:
        for raw in headers.get(b"cookie", []):
            for part in raw.split(b";"):
                name, _, value = part.strip().partition(b"=")
                if name == COOKIE.encode() and hmac.compare_digest(value, self.cookie):
                    return True
        bearer = headers.get(b"authorization", [])
        return len(bearer) == 1 and hmac.compare_digest(
            bearer[0], f"Bearer {self.token}".encode())

    async def _login(self, send: Any, given: str, rest: str) -> None:
        if not hmac.compare_digest(given.encode(), self.token.encode()):
            await _deny(send, 401, "that token is not this dock's: open the address "
                        "`adjutant dock` printed")
            return
        cookie = (f"{COOKIE}={self.cookie.decode()}; HttpOnly; SameSite=Strict; Path=/")
        await send({"type": "http.response.start", "status": 303, "headers": [
            (b"location", f"/?{rest}".encode() if rest else b"/"),
            (b"set-cookie", cookie.encode()),
            (b"cache-control", b"no-store"), (b"referrer-policy", b"no-referrer")]})
        await send({"type": "http.response.body", "body": b""})


async def _deny(send: Any, status: int, why: str) -> None:
    await send({"type": "http.response.start", "status": status, "headers": [
        (b"content-type", b"text/plain; charset=utf-8"), (b"cache-control", b"no-store")]})
    await send({"type": "http.response.body", "body": f"adjutant dock: {why}\n".encode()})
