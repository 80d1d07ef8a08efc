"""The Copilot Dock's figures: SSE fan-out, token → DOM latency, first page load, memory.

- Events per second delivered to 10 concurrent SSE clients on loopback (one run's
  stream: the client that started it plus 9 followers on the reconnect endpoint).
- Provider token → browser DOM latency, p50/p99 (Debian's chromium through
  Playwright; a provider that stamps each token as it yields it, a MutationObserver
  in the page that stamps it as it lands in the DOM; one clock, the machine's).
- First page load (navigation to the page's state loaded and rendered).
- Server memory (RSS of this process, which hosts the kernel and the dock) idle and
  after N runs (1,000; 50 with --quick) on LMDB stores.

Goal: token → DOM p99 under 50 ms. Run from the workspace root:
``.venv/bin/python bench/dock.py [--quick]``.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import httpx

import adjutant_guard
import adjutant_lmdb
import adjutant_write_gate
from adjutant.testing import Harness, ScriptedProvider
from adjutant_dock._serve import DockServer
from adjutant_hookspecs import CompletionChunk, CompletionRequest, Response, encode


class StampingProvider(ScriptedProvider):
    """Streams a response of ``words`` tokens, ``gap`` s apart, stamping each one's
    wall-clock send time (ms) by its index (a scripted provider: the harness takes one)."""

    def __init__(self) -> None:
        super().__init__(name="stamping")
        self.words = 100
        self.gap = 0.0
        self.sent: dict[int, float] = {}

    async def complete(self, request: CompletionRequest) -> AsyncIterator[CompletionChunk]:
        text = encode(Response(text="")).decode()
        head, tail = text.split('""', 1)
        yield CompletionChunk(text=head + '"')
        for i in range(self.words):
            if self.gap:
                await anyio.sleep(self.gap)
            self.sent[i] = time.time() * 1000
            yield CompletionChunk(text=f"t{i} ")
        yield CompletionChunk(text='"' + tail)
        yield CompletionChunk(finish_reason="stop")


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def body(prompt: str) -> dict[str, Any]:
    return {"threadId": "bench", "runId": uuid.uuid4().hex,
            "messages": [{"id": "m", "role": "user", "content": prompt}]}


async def drain(response: httpx.Response) -> int:
    frames = 0
    async for line in response.aiter_lines():
        frames += line.startswith("data:")
    return frames


async def fan_out(dock: DockServer, client: httpx.AsyncClient, provider: StampingProvider,
                  words: int, clients: int = 10) -> tuple[int, float]:
    provider.words, provider.gap = words, 0.0
    start_body = body("fan out")
    counts: list[int] = []
    started = time.perf_counter()

    begun = anyio.Event()

    async def starter() -> None:
        request = client.build_request("POST", "/api/copilot/run", json=start_body)
        response = await client.send(request, stream=True)
        begun.set()  # the run exists once its stream has answered
        counts.append(await drain(response))

    async def follower() -> None:
        await begun.wait()
        request = client.build_request(
            "GET", f"/api/copilot/runs/{start_body['runId']}/events?after=0")
        counts.append(await drain(await client.send(request, stream=True)))

    async with anyio.create_task_group() as tg:
        tg.start_soon(starter)
        for _ in range(clients - 1):
            tg.start_soon(follower)
    return sum(counts), time.perf_counter() - started


async def browser_figures(dock: DockServer, provider: StampingProvider, tokens: int,
                          ) -> tuple[list[float], float, float] | None:
    chromium = shutil.which("chromium")
    if chromium is None:
        print("token → DOM: skipped (no chromium; apt-get install chromium)")
        return None
    from playwright.async_api import async_playwright

    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        page = await browser.new_page()
        started = time.perf_counter()
        await page.goto(dock.url)
        await page.wait_for_selector("#modes button[aria-checked='true']")
        ready_ms = (time.perf_counter() - started) * 1000
        load_ms = await page.evaluate(
            "performance.getEntriesByType('navigation')[0].loadEventEnd")
        # stamp each token as it lands in the DOM
        await page.evaluate("""() => {
          window.seen = {};
          new MutationObserver(() => {
            const now = performance.timeOrigin + performance.now();
            for (const pre of document.querySelectorAll('pre.stream')) {
              for (const m of pre.textContent.matchAll(/t(\\d+) /g)) {
                if (!(m[1] in window.seen)) window.seen[m[1]] = now;
              }
            }
          }).observe(document.body, {subtree: true, childList: true, characterData: true});
        }""")
        provider.words, provider.gap, provider.sent = tokens, 0.02, {}
        await page.fill("#prompt", "latency")
        await page.press("#prompt", "Enter")
        await page.wait_for_selector("#messages .msg.assistant", timeout=60_000)
        seen = await page.evaluate("window.seen")
        await browser.close()
    latencies = [seen[str(i)] - sent for i, sent in provider.sent.items() if str(i) in seen]
    return latencies, ready_ms, load_ms


async def main(quick: bool) -> None:
    provider = StampingProvider()
    from adjutant import ModelPreset, Profile

    profile = Profile(model=ModelPreset(provider=provider.name))
    home = Path(tempfile.mkdtemp(prefix="bench-dock-"))
    async with Harness(adjutant_guard, adjutant_write_gate, adjutant_lmdb, provider=provider,
                       profile=profile, home=home) as h:
        dock = DockServer(h.kernel, port=0, approval_timeout_s=60)
        await dock.hub.copilot.set_mode("execute-with-confirmation", channel="user")
        ready = anyio.Event()
        async with anyio.create_task_group() as tg:
            tg.start_soon(lambda: dock.serve(ready=ready.set))
            await ready.wait()
            await anyio.sleep(0.2)
            idle = rss_mb()
            async with httpx.AsyncClient(base_url=dock.base, timeout=120, headers={
                    "Authorization": f"Bearer {dock.token}"}) as client:
                words = 2_000 if quick else 10_000
                await fan_out(dock, client, provider, 200)  # warm-up
                delivered, seconds = await fan_out(dock, client, provider, words)
                print(f"SSE fan-out: {delivered:,} events to 10 clients in {seconds:.2f} s "
                      f"= {delivered / seconds:,.0f} events/s "
                      f"({delivered / 10 / seconds:,.0f} per client)")
                figures = await browser_figures(dock, provider, 50 if quick else 200)
                if figures is not None:
                    latencies, ready_ms, load_ms = figures
                    q = statistics.quantiles(latencies, n=100, method="inclusive")
                    print(f"token → DOM latency over {len(latencies)} tokens: p50 "
                          f"{q[49]:.1f} ms, p99 {q[98]:.1f} ms, max {max(latencies):.1f} ms "
                          f"(goal: p99 < 50 ms)")
                    print(f"first page load: {load_ms:.0f} ms to the load event, "
                          f"{ready_ms:.0f} ms to the state rendered")
                runs = 50 if quick else 1_000
                provider.words, provider.gap = 5, 0.0
                started = time.perf_counter()
                for _ in range(runs):
                    request = client.build_request("POST", "/api/copilot/run", json=body("x"))
                    await drain(await client.send(request, stream=True))
                elapsed = time.perf_counter() - started
                await dock.hub.written()
                print(f"runs: {runs} in {elapsed:.1f} s ({elapsed / runs * 1000:.1f} ms each, "
                      "LMDB action log and history)")
                print(f"server memory (RSS): idle {idle:.0f} MB, after {runs} runs "
                      f"{rss_mb():.0f} MB")
            tg.cancel_scope.cancel()
    shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    anyio.run(main, parser.parse_args().quick)
