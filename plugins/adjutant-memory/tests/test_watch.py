"""The watcher: a change to a project file triggers its ingestion (a stat poll), a
deleted file leaves the index, and a secret created meanwhile is never indexed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from memkit import write_project
from test_working import cli

from adjutant.testing import Harness
from adjutant_memory import MemoryPlugin

pytestmark = pytest.mark.anyio


async def test_a_changed_file_is_ingested_by_the_watcher() -> None:
    async with Harness(MemoryPlugin) as h:
        write_project(h.workspace)
        plugin = h.kernel.plugin("memory")
        assert isinstance(plugin, MemoryPlugin)
        service = plugin.require()
        root = str(h.workspace)
        send, receive = anyio.create_memory_object_stream[tuple[Any, Any]](10)

        async def changed(scan: Any, ingest: Any) -> None:
            await send.send((scan, ingest))

        async with send, receive, anyio.create_task_group() as tg:
            tg.start_soon(lambda: service.watch(root, interval_s=0.05, on_change=changed))
            with anyio.fail_after(60):  # a liveness bound, not a timing figure
                scan, ingest = await receive.receive()  # the first look indexes it all
                assert ingest.done == 14
                (h.workspace / "larkspur" / "exif.py").write_text(
                    '"""Reading GPS coordinates from the photo."""\n')
                (h.workspace / "docs" / "deployment.md").unlink()
                (h.workspace / ".env").write_text("TOKEN=kestrel-secret-123\n")
                scan, ingest = await receive.receive()
            tg.cancel_scope.cancel()
        assert (scan.queued, scan.removed, ingest.done) == (1, 1, 1)
        assert [p for p, _ in scan.refused] == [".env"]
        hits = await service.search(root, "GPS coordinates")
        assert hits[0].path == "larkspur/exif.py"
        states = service.index(root).states()
        assert "docs/deployment.md" not in states and ".env" not in states


def test_the_watch_command(tmp_path: Path) -> None:
    write_project(tmp_path / "p")
    done = cli(tmp_path, "watch", "p", "--rounds", "1", "--interval", "0.1")
    assert done.returncode == 0, done.stderr
    assert "watching" in done.stdout and "14 changed, 0 removed: 14 files indexed" in done.stdout
    status = json.loads(cli(tmp_path, "status", "--path", "p", "--json").stdout)
    assert status["index"]["done"] == 14
    bad = cli(tmp_path, "watch", "p", "--interval", "0")
    assert bad.returncode != 0
