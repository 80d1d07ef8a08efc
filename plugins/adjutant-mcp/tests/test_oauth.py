"""OAuth for remote MCP servers: where tokens live, when they expire, what the user is
told. The protocol itself (discovery, registration, PKCE, scopes, token endpoint
authentication) is proved against the conformance suite's authorization servers in
`test_conformance.py` (auth/*)."""

from __future__ import annotations

import json
import os
import stat
import time
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

from adjutant_mcp._config import parse_server
from adjutant_mcp._oauth import SignInRequired, TokenFile, provider

pytestmark = pytest.mark.anyio

URL = "http://127.0.0.1:9/mcp"


def spec(**ours: Any) -> Any:
    entry: dict[str, Any] = {"type": "http", "url": URL}
    if ours:
        entry["adjutant"] = ours
    return parse_server("remote", entry, source="test", workspace="/", env={})


async def stored(home: Path, *, expires_in: int, refresh: str | None) -> TokenFile:
    tokens = TokenFile(home, "remote")
    await tokens.set_client_info(OAuthClientInformationFull(
        client_id="adjutant-1", redirect_uris=["http://127.0.0.1:5555/callback"]))
    await tokens.set_tokens(OAuthToken(access_token="old", expires_in=expires_in,
                                       refresh_token=refresh))
    return tokens


async def test_tokens_are_kept_owner_only_in_the_data_home(tmp_path: Path) -> None:
    tokens = await stored(tmp_path, expires_in=3600, refresh="r")
    assert tokens.path == tmp_path / "mcp" / "oauth" / "remote.json"
    assert stat.S_IMODE(tokens.path.stat().st_mode) == 0o600
    assert stat.S_IMODE(tokens.path.parent.stat().st_mode) == 0o700
    assert not list(tokens.path.parent.glob("*.tmp"))  # written whole, then renamed
    data = json.loads(tokens.path.read_text())
    assert data["tokens"]["access_token"] == "old"
    assert data["expires_at"] == pytest.approx(time.time() + 3600, abs=5)


async def test_a_token_file_others_can_read_is_refused(tmp_path: Path) -> None:
    tokens = await stored(tmp_path, expires_in=3600, refresh="r")
    tokens.path.chmod(0o640)
    with pytest.raises(PermissionError, match=r"can be read by others.*adjutant mcp login"):
        await tokens.get_tokens()


async def test_a_token_file_that_is_a_link_is_not_followed(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text(json.dumps({"tokens": {"access_token": "planted"}}))
    elsewhere.chmod(0o600)
    link = TokenFile(tmp_path, "remote").path
    link.parent.mkdir(parents=True, mode=0o700)
    os.symlink(elsewhere, link)
    with pytest.raises(OSError, match="link"):
        await TokenFile(tmp_path, "remote").get_tokens()


@pytest.mark.parametrize("attack", ["linked folder", "0777 folder"])
async def test_a_token_folder_that_is_linked_or_open_is_refused(tmp_path: Path,
                                                               attack: str) -> None:
    """``$ADJUTANT_HOME/mcp/oauth`` made a link to a 0755 folder holding a 0600 token
    file, or a 0777 folder: the token was read and sent, and the 0700 applied when
    writing followed the link. Nothing is read, written or chmod'ed now."""
    home = tmp_path / "home"
    oauth = TokenFile(home, "remote").path.parent
    oauth.parent.mkdir(parents=True)
    if attack == "linked folder":
        elsewhere = tmp_path / "elsewhere"
        elsewhere.mkdir()
        os.chmod(elsewhere, 0o755)
        (elsewhere / "remote.json").write_text(json.dumps({"tokens": {"access_token": "x"}}))
        (elsewhere / "remote.json").chmod(0o600)
        oauth.symlink_to(elsewhere)
    else:
        oauth.mkdir()
        os.chmod(oauth, int(attack.split()[0], 8))
    tokens = TokenFile(home, "remote")
    with pytest.raises(PermissionError, match="adjutant mcp login"):
        await tokens.get_tokens()
    with pytest.raises(PermissionError):
        tokens._write({"tokens": {"access_token": "new"}})
    if attack == "linked folder":
        assert os.stat(tmp_path / "elsewhere").st_mode & 0o777 == 0o755
        assert sorted(p.name for p in (tmp_path / "elsewhere").iterdir()) == ["remote.json"]


async def test_an_expired_token_is_known_to_be_expired_after_a_restart(
        tmp_path: Path) -> None:
    tokens = await stored(tmp_path, expires_in=60, refresh="r")
    assert not tokens.expired()
    assert tokens.expired(now=time.time() + 61)
    data = json.loads(tokens.path.read_text())
    data["expires_at"] = time.time() - 1
    tokens.path.write_text(json.dumps(data))
    token = await tokens.get_tokens()
    assert token.expires_in == 0
    # a new process's provider: the token is not taken as valid
    auth = provider(spec(), tmp_path)
    await auth._initialize()
    assert not auth.context.is_token_valid()
    assert auth.context.can_refresh_token()


async def test_an_expired_token_is_refreshed_and_the_new_one_stored(tmp_path: Path) -> None:
    tokens = await stored(tmp_path, expires_in=0, refresh="refresh-1")
    auth = provider(spec(), tmp_path)
    flow = auth.async_auth_flow(httpx2.Request("POST", URL, json={}))
    refresh = await flow.__anext__()
    assert (refresh.method, refresh.url.path) == ("POST", "/token")
    body = dict(x.split("=") for x in refresh.content.decode().split("&"))
    assert body["grant_type"] == "refresh_token" and body["refresh_token"] == "refresh-1"
    request = await flow.asend(httpx2.Response(200, request=refresh, json={
        "access_token": "new", "token_type": "bearer", "expires_in": 3600}))
    assert request.headers["Authorization"] == "Bearer new"
    kept = await tokens.get_tokens()
    assert (kept.access_token, kept.refresh_token) == ("new", "refresh-1")
    assert not tokens.expired()
    await flow.aclose()


async def test_no_browser_opens_behind_the_user_s_back_they_are_told_to_reconnect(
        tmp_path: Path) -> None:
    await stored(tmp_path, expires_in=0, refresh=None)
    auth = provider(spec(), tmp_path)
    with pytest.raises(SignInRequired) as expired:
        await auth.context.redirect_handler("http://as.example/authorize?...")
    assert str(expired.value) == (
        "MCP server 'remote': its sign-in expired and could not be refreshed; reconnect "
        "with `adjutant mcp login remote` (a browser opens to sign in)")
    never = provider(spec(), tmp_path / "fresh")
    with pytest.raises(SignInRequired, match=r"it needs you to sign in.*adjutant mcp "
                       r"login remote"):
        await never.context.redirect_handler("http://as.example/authorize?...")


async def test_a_pre_registered_client_is_used_instead_of_registering(
        tmp_path: Path) -> None:
    auth = provider(spec(oauth={"clientId": "mine", "clientSecret": "s3"}), tmp_path)
    await auth._initialize()
    info = auth.context.client_info
    assert (info.client_id, info.client_secret) == ("mine", "s3")
    assert info.token_endpoint_auth_method == "client_secret_basic"


def test_login_is_for_remote_servers_and_says_so(tmp_path: Path) -> None:
    import subprocess
    import sys

    home = tmp_path / "home"
    home.mkdir()
    (home / "mcp.json").write_text(json.dumps({"mcpServers": {
        "local": {"command": sys.executable, "args": ["-c", "pass"]}}}))
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("ADJUTANT_")},
           "ADJUTANT_HOME": str(home), "ADJUTANT_WORKSPACE": str(tmp_path)}
    adjutant = str(Path(sys.executable).parent / "adjutant")
    for name, says in (("local", "stdio server: there is nothing to sign in to"),
                       ("nowhere", "no MCP server named 'nowhere'")):
        done = subprocess.run([adjutant, "mcp", "login", name], env=env, cwd=tmp_path,
                              capture_output=True, text=True, timeout=60,
                              stdin=subprocess.DEVNULL)
        assert done.returncode == 2 and says in done.stderr, done


def test_a_failed_sign_in_is_one_line_saying_what_to_try(tmp_path: Path) -> None:
    """OAuth failures printed the SDK's raw traceback. A server that asks for a sign-in
    (401) but publishes no authorization server metadata fails the flow."""
    import http.server
    import subprocess
    import sys
    import threading

    class AsksForSignIn(http.server.BaseHTTPRequestHandler):
        def _answer(self) -> None:
            if self.path.startswith("/mcp"):
                self.send_response(401)
                self.send_header("WWW-Authenticate", 'Bearer realm="x"')
            else:
                self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()

        do_GET = do_POST = _answer

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), AsksForSignIn)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        home = tmp_path / "home"
        home.mkdir()
        (home / "mcp.json").write_text(json.dumps({"mcpServers": {
            "remote": {"url": f"http://127.0.0.1:{server.server_port}/mcp"}}}))
        env = {**{k: v for k, v in os.environ.items() if not k.startswith("ADJUTANT_")},
               "ADJUTANT_HOME": str(home), "ADJUTANT_WORKSPACE": str(tmp_path),
               "BROWSER": "true"}
        done = subprocess.run([str(Path(sys.executable).parent / "adjutant"), "mcp",
                               "login", "remote"], env=env, cwd=tmp_path,
                              capture_output=True, text=True, timeout=120,
                              stdin=subprocess.DEVNULL)
    finally:
        server.shutdown()
        server.server_close()
    assert done.returncode == 1, done
    assert "Traceback" not in done.stderr, done.stderr
    assert "MCP server 'remote'" in done.stderr and "Registration failed" in done.stderr, \
        done.stderr
