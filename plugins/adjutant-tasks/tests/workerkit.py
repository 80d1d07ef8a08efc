"""``adjutant tasks ...`` in a process with the test capabilities (they are no entry
point, so ``adjutant`` itself would not load them): the same subcommand code as the
CLI (``adjutant_tasks._cli.run``) on a kernel built by ``taskkit.kernel_at``.

``python workerkit.py HOME BROKER HEARTBEAT_S tasks ARGS...``: run ``adjutant tasks
ARGS`` with ``plugins.tasks.broker = BROKER`` (``worker`` consumes until killed).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import anyio

sys.path.insert(0, str(Path(__file__).parent))

from taskkit import kernel_at


async def main(home: Path, broker: str, heartbeat_s: str, *args: str) -> int:
    from adjutant_tasks import _cli

    parser = argparse.ArgumentParser(prog="adjutant tasks")
    _cli.configure(parser)
    parsed = parser.parse_args(list(args))
    async with kernel_at(home, broker=broker, heartbeat_s=float(heartbeat_s)) as (h, _):
        return await _cli.run(h.kernel, parsed)


if __name__ == "__main__":
    assert sys.argv[4] == "tasks"
    sys.exit(anyio.run(main, Path(sys.argv[1]), sys.argv[2], sys.argv[3], *sys.argv[5:]))
