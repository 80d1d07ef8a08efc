"""Signing in to remote MCP servers: OAuth 2.1, authorization code with PKCE.

The SDK's `OAuthClientProvider` does the protocol (discovery of the protected
resource and authorization server metadata, dynamic or pre-registered clients, PKCE,
scopes and step-up, refresh); this module gives it what is Adjutant's:

- `TokenFile`: tokens and the client registration of one server in
  ``<data home>/mcp/oauth/<server>.json``, owner-only (0600 in a 0700 folder; a file
  others can read or another user owns is refused, as a leaked token would be), with
  the absolute expiry, so an expired token is known to be expired after a restart;
- the person: only ``adjutant mcp login NAME`` (`login_flow`) opens the browser and
  waits on a loopback port for the redirect. Everywhere else (a planned call, ``mcp
  serve``, a background listing) a server that needs a sign-in, or whose sign-in
  expired and cannot be refreshed, fails with `SignInRequired`, whose message says to
  reconnect with that command: nothing opens a browser behind the user's back.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from adjutant import SecretError, owner_only_folder, secret_file_problem

__all__ = ["LOGIN_TIMEOUT_S", "SignInRequired", "TokenFile", "login_flow", "provider"]

class _TraceOnlyWhenDebugging(logging.Filter):
    """The SDK logs each OAuth failure with its traceback (``logger.exception``);
    Adjutant says what failed in one line itself, so the trace shows only with -vv."""

    def filter(self, record: logging.LogRecord) -> bool:
        return logging.getLogger().isEnabledFor(logging.DEBUG)


for _name in ("mcp.client.auth.oauth2", "mcp.client.auth"):  # filters are per logger
    logging.getLogger(_name).addFilter(_TraceOnlyWhenDebugging())

#: How long ``adjutant mcp login`` waits for the browser to come back.
LOGIN_TIMEOUT_S = 300.0


class SignInRequired(RuntimeError):
    """The server wants a (new) sign-in, which needs its user: the message says how."""


def _reconnect(name: str, expired: bool) -> str:
    why = ("its sign-in expired and could not be refreshed" if expired
           else "it needs you to sign in (OAuth)")
    return (f"MCP server {name!r}: {why}; reconnect with `adjutant mcp login {name}` "
            "(a browser opens to sign in)")


class TokenFile:
    """The SDK's `TokenStorage` for one server, in one owner-only JSON file."""

    def __init__(self, home: Path, key: str) -> None:
        self.home = Path(home)
        self.path = self.home / "mcp" / "oauth" / f"{key}.json"

    def _folder(self) -> None:
        """Every folder from the data home down checked: a real folder, the user's, and
        writable by nobody else; ``oauth/`` closed to others (`owner_only_folder`)."""
        try:
            owner_only_folder(self.path.parent, self.home)
        except SecretError as exc:
            raise SecretError(f"{exc}; then sign in again with `adjutant mcp login`"
                              ) from None

    def _read(self) -> dict[str, Any]:
        self._folder()
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except FileNotFoundError:
            return {}
        with os.fdopen(fd, encoding="utf-8") as f:
            if problem := secret_file_problem(self.path, os.fstat(f.fileno())):
                raise SecretError(f"{problem}; sign in again with `adjutant mcp login`")
            data = json.load(f)
        return data if isinstance(data, dict) else {}

    def _write(self, data: dict[str, Any]) -> None:
        self._folder()
        tmp = self.path.with_suffix(f".{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(data, f)
        os.replace(tmp, self.path)  # whole or not at all

    def expired(self, now: float | None = None) -> bool:
        """There are tokens and the access token's time is up."""
        data = self._read()
        at = data.get("expires_at")
        return bool(data.get("tokens")) and at is not None and (now or time.time()) >= at

    def forget(self) -> None:
        self.path.unlink(missing_ok=True)

    # -- TokenStorage ------------------------------------------------------------------------

    async def get_tokens(self) -> Any:
        """The stored tokens, ``expires_in`` counted from now (0 once expired)."""
        from mcp.shared.auth import OAuthToken

        data = self._read()
        if not data.get("tokens"):
            return None
        token = OAuthToken.model_validate(data["tokens"])
        if data.get("expires_at") is not None:
            token.expires_in = max(0, int(data["expires_at"] - time.time()))
        return token

    async def set_tokens(self, tokens: Any) -> None:
        data = self._read()
        data["tokens"] = tokens.model_dump(mode="json", exclude_none=True)
        data["expires_at"] = (time.time() + tokens.expires_in
                              if tokens.expires_in is not None else None)
        self._write(data)

    async def get_client_info(self) -> Any:
        from mcp.shared.auth import OAuthClientInformationFull

        data = self._read().get("client")
        return OAuthClientInformationFull.model_validate(data) if data else None

    async def set_client_info(self, client_info: Any) -> None:
        data = self._read()
        data["client"] = client_info.model_dump(mode="json", exclude_none=True)
        self._write(data)

    # the loopback port the registered redirect URI names, kept so a later sign-in
    # matches the registration
    def redirect_port(self) -> int | None:
        port = self._read().get("redirect_port")
        return port if isinstance(port, int) else None

    def set_redirect_port(self, port: int) -> None:
        data = self._read()
        if data.get("redirect_port") != port:  # another port: register anew
            data.pop("client", None)
        data["redirect_port"] = port
        self._write(data)


#: Opens the authorization URL for the user (the browser).
Browser = Callable[[str], Awaitable[None]]


def provider(spec: Any, home: Path, *, login: tuple[int, Browser, Any] | None = None) -> Any:
    """The SDK's OAuth provider for an HTTP server ``spec``.

    :param login: for ``adjutant mcp login`` only: the loopback port, how to open the
        browser, and the callback's result (a `LoopbackCallback`). Without it a sign-in
        raises `SignInRequired`."""
    from mcp.client.auth import OAuthClientProvider
    from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata

    storage = TokenFile(home, spec.key)
    oauth = spec.oauth or {}
    port = login[0] if login else (storage.redirect_port() or 0)
    redirect = f"http://127.0.0.1:{port}/callback"
    metadata = OAuthClientMetadata(
        client_name="Adjutant", redirect_uris=[redirect],  # type: ignore[list-item]
        grant_types=["authorization_code", "refresh_token"], response_types=["code"],
        token_endpoint_auth_method="client_secret_basic" if oauth.get("clientSecret")
        else "none", scope=oauth.get("scope"))

    class Provider(OAuthClientProvider):
        async def _initialize(self) -> None:
            await super()._initialize()
            tokens = self.context.current_tokens
            if tokens is not None:  # the stored expiry holds after a restart
                self.context.update_token_expiry(tokens)
            if self.context.client_info is None and oauth.get("clientId"):
                # pre-registered with the authorization server (no dynamic registration)
                self.context.client_info = OAuthClientInformationFull(
                    client_id=oauth["clientId"], client_secret=oauth.get("clientSecret"),
                    redirect_uris=[redirect],  # type: ignore[list-item]
                    token_endpoint_auth_method=metadata.token_endpoint_auth_method)

    async def no_person(url: str) -> None:
        raise SignInRequired(_reconnect(spec.name, storage.expired()))

    async def callback() -> Any:
        assert login is not None
        return await login[2].result()

    async def browse(url: str) -> None:
        assert login is not None
        await login[2].ensure_open()  # listening before the browser can come back
        await login[1](url)

    if login is not None:
        storage.set_redirect_port(port)
        return Provider(spec.url, metadata, storage, redirect_handler=browse,
                        callback_handler=callback)
    return Provider(spec.url, metadata, storage, redirect_handler=no_person,
                    callback_handler=callback)


class LoopbackCallback:
    """A one-shot HTTP listener on 127.0.0.1 for the authorization redirect."""

    def __init__(self, listener: Any) -> None:
        from anyio.abc import SocketAttribute

        self._listener: Any = listener
        self.port: int = listener.extra(SocketAttribute.local_port)

    async def ensure_open(self) -> None:
        """Listen again (same port: the registered redirect URI) for another sign-in
        on the same connection, as a scope step-up needs."""
        if self._listener is None:
            self._listener = (await _listen(self.port))

    @classmethod
    async def open(cls, port: int | None) -> LoopbackCallback:
        """Listen on ``port`` (the one the client's registration names) when it is free,
        else on any free port."""
        if port:
            try:
                return cls(await _listen(port))
            except OSError:
                pass
        return cls(await _listen(0))

    async def result(self) -> Any:
        """Wait for ``GET /callback?code=...&state=...``; raise on an error redirect."""
        from urllib.parse import parse_qs, urlsplit

        import anyio
        from mcp.shared.auth import AuthorizationCodeResult

        await self.ensure_open()
        try:
            with anyio.fail_after(LOGIN_TIMEOUT_S):
                while True:
                    async with await self._listener.accept() as conn:
                        request = (await conn.receive(8192)).decode("latin-1")
                        parts = request.split(" ", 2)
                        url = urlsplit(parts[1] if len(parts) > 2 else "/")
                        query = {k: v[0] for k, v in parse_qs(url.query).items()}
                        done = url.path == "/callback" and ("code" in query or "error" in query)
                        body = (b"Signed in: you can close this tab and return to Adjutant.\n"
                                if "code" in query else b"Sign-in failed: see Adjutant.\n")
                        await conn.send(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
                                        b"Connection: close\r\nContent-Length: "
                                        + str(len(body)).encode() + b"\r\n\r\n" + body)
                    if done:
                        break
        except TimeoutError:
            raise SignInRequired(f"no sign-in came back within {LOGIN_TIMEOUT_S:g} s") from None
        finally:
            listener, self._listener = self._listener, None
            await listener.aclose()
        if "error" in query:
            raise SignInRequired(f"the sign-in was refused: {query['error']} "
                                 f"{query.get('error_description', '')}".strip())
        return AuthorizationCodeResult(code=query["code"], state=query.get("state"),
                                       iss=query.get("iss"))


async def _listen(port: int) -> Any:
    import anyio

    # one address: one socket listener
    return (await anyio.create_tcp_listener(local_host="127.0.0.1",
                                            local_port=port)).listeners[0]


async def login_flow(spec: Any, home: Path, browser: Browser) -> Any:
    """The OAuth provider for an interactive sign-in: the browser goes to the
    authorization server, which redirects to a listener on a loopback port."""
    listener = await LoopbackCallback.open(TokenFile(home, spec.key).redirect_port())
    return provider(spec, home, login=(listener.port, browser, listener))
