"""Stdio servers never outlive Adjutant, even one killed with SIGKILL."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import anyio
import pytest

from adjutant_mcp import bridge_of
from adjutant_mcp._children import OWNER, orphans

from .helpers import HOSTILE, harness, stdio, write_config

SCRIPT = textwrap.dedent("""
    import sys, anyio
    sys.path.insert(0, {tests!r})
    from pathlib import Path
    from helpers import harness
    from adjutant_mcp import bridge_of

    async def main():
        async with harness(Path({home!r})) as h:
            await bridge_of(h.kernel).connections["s"].ensure()
            print("ready", flush=True)
            await anyio.sleep_forever()
    anyio.run(main)
""")


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _wait_gone(pid: int, seconds: float = 10) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not _alive(pid):
            return True
        time.sleep(0.05)
    return False


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs Linux /proc")
def test_a_killed_adjutant_leaves_no_server_behind(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir()
    home = tmp_path / "home"
    write_config(home, {"s": stdio(HOSTILE, "spawn", str(state))})
    script = SCRIPT.format(tests=str(Path(__file__).parent), home=str(home))
    adjutant = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE,
                                text=True, cwd=tmp_path)
    try:
        assert adjutant.stdout is not None
        assert adjutant.stdout.readline().strip() == "ready"
        server = int((state / "starts").read_text().split()[-1])
        grandchildren = [pid for pid in _marked(adjutant.pid) if pid != server]
        assert grandchildren, "the spawn server's grandchild should carry the owner mark"
        os.kill(adjutant.pid, signal.SIGKILL)
        adjutant.wait(10)
    finally:
        adjutant.kill()
        adjutant.wait(10)
        if adjutant.stdout is not None:
            adjutant.stdout.close()
    assert _wait_gone(server), "the server outlived a SIGKILLed Adjutant (pdeathsig)"
    # the grandchild ignores stdin EOF and got no death signal: found at the next start
    left = [pid for pid, _ in orphans()]
    assert set(grandchildren) <= set(left)
    async def next_start() -> list[int]:
        async with harness(tmp_path / "home2") as h:
            return list(bridge_of(h.kernel).reaped)

    reaped = anyio.run(next_start)
    # only a reap kills them; it is machine-wide, so another test worker's kernel may be first
    assert all(_wait_gone(pid) for pid in grandchildren)
    if os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1") == "1":
        assert set(grandchildren) <= set(reaped)


def _marked(owner: int) -> list[int]:
    """Processes carrying the owner mark of the Adjutant process ``owner``."""
    found = []
    mark = f"{OWNER}={owner}:".encode()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                env = (entry / "environ").read_bytes()
            except OSError:
                continue
            if any(item.startswith(mark) for item in env.split(b"\0")):
                found.append(int(entry.name))
    return found
