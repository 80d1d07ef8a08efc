"""No network unless granted: the grant, the modes, and the URLs themselves."""

from typing import Any

import pytest

from adjutant_guard import Guard
from adjutant_guard._network import check_url

pytestmark = pytest.mark.anyio

MODES = ["off", "listen-only", "propose-only", "execute-with-confirmation", "execute-auto"]


async def decision(guard: Guard, request: Any) -> str:
    verdict = await guard.evaluate(request)
    assert (verdict.policy, bool(verdict.reason.strip())) == ("guard", True)
    return verdict.decision


async def test_network_needs_a_grant(world: Any, guard: Guard) -> None:
    url = "https://example.com/page"
    for mode in MODES:
        verdict = await guard.evaluate(world.request("web.fetch", url=url, mode=mode))
        assert verdict.decision == "deny"
        assert "network:web.fetch" in verdict.reason
    declared = world.request("web.search", network=True, note="q")
    assert await decision(guard, declared) == "deny"
    # Another tool's grant does not count.
    other = world.request("web.fetch", url=url, grants=["network:web.search"])
    assert await decision(guard, other) == "deny"


async def test_network_with_a_grant_asks_then_allows_in_auto(world: Any, guard: Guard) -> None:
    grants = ["network:web.fetch"]
    url = "https://example.com/page"
    asked = world.request("web.fetch", url=url, grants=grants)
    assert await decision(guard, asked) == "ask"
    auto = world.request("web.fetch", url=url, grants=grants, mode="execute-auto")
    assert await decision(guard, auto) == "allow"


async def test_a_family_grant_covers_its_prefix_only(world: Any, guard: Guard) -> None:
    grants = ["network:mcp.time.*"]
    covered = world.request("mcp.time.get_current_time", network=True, grants=grants)
    assert await decision(guard, covered) == "ask"
    for tool in ("mcp.timex.get", "mcp.get_time", "web.fetch"):
        outside = world.request(tool, network=True, grants=grants)
        assert await decision(guard, outside) == "deny", tool


@pytest.mark.parametrize(
    "url",
    ["file:///etc/passwd", "gopher://x", "ftp://example.com", "//example.com", "https://",
     "http://exa mple.com", "https://example.com:99999/", 42],
)
async def test_bad_urls_are_denied_even_with_a_grant(world: Any, guard: Guard, url: Any) -> None:
    request = world.request("web.fetch", url=url, grants=["network:web.fetch"], mode="execute-auto")
    assert await decision(guard, request) == "deny"


@pytest.mark.parametrize(
    "url",
    ["http://localhost:8080/", "http://127.0.0.1/", "http://169.254.169.254/latest/meta-data",
     "http://[::1]/", "http://10.0.0.2/", "http://2130706433/", "http://0x7f.1/",
     "http://printer.local/", "http://intranet/", "http://metadata.google.internal/"],
)
async def test_local_addresses_always_ask(world: Any, guard: Guard, url: str) -> None:
    request = world.request("web.fetch", url=url, grants=["network:web.fetch"], mode="execute-auto")
    verdict = await guard.evaluate(request)
    assert (verdict.decision, "local network" in verdict.reason) == ("ask", True)


@pytest.mark.parametrize(
    ("url", "outcome"),
    [
        ("https://example.com/a?b=c", None),
        ("wss://example.com/socket", None),
        ("HTTPS://EXAMPLE.COM/", None),
        ("https://93.184.216.34/", None),
        ("http://[::ffff:127.0.0.1]/", "ask"),
        ("http://0.0.0.0:8000/", "ask"),
        ("http://localhost./", "ask"),
        ("javascript:alert(1)", "deny"),
        ("data:text/plain,hi", "deny"),
        ("https://example.com/\x00", "deny"),
        ("https://example.com/\n", "deny"),
        ("x" * 9000, "deny"),
    ],
)
def test_check_url(url: str, outcome: str | None) -> None:
    result = check_url(url)
    assert (result[0] if result else None) == outcome, result
