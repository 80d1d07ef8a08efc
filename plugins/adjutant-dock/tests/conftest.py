"""A real dock for each test: a harness kernel (scripted model, the guard and the
write-gate, a fake read and write tool), the dock's server under uvicorn on a free
loopback port, and an httpx client that holds the token."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # the test kit, beside this file


def pytest_configure(config: pytest.Config) -> None:
    config.pluginmanager.import_plugin("adjutant.testing")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # uvicorn serves on asyncio only


@pytest.fixture
async def dock(request: pytest.FixtureRequest) -> AsyncIterator[Any]:
    # imported here, not above: the kit imports adjutant.testing, which pytest must
    # load as a plugin first (to rewrite its asserts)
    from dockkit import start_dock

    options: dict[str, Any] = getattr(request, "param", {})
    async with start_dock(**options) as running:
        yield running


@pytest.fixture
async def browser() -> AsyncIterator[Any]:
    """Debian's chromium, launched once per test (sandbox off: the test runs as root)."""
    from dockkit import CHROMIUM
    from playwright.async_api import async_playwright

    async with async_playwright() as pw:
        chromium = await pw.chromium.launch(executable_path=CHROMIUM, args=[
            "--no-sandbox", "--disable-gpu", "--disable-background-networking"])
        yield chromium
        await chromium.close()
