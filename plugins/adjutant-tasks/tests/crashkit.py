"""A process that queues and runs tasks, for the tests that SIGKILL it.

``python crashkit.py HOME queue-and-run``: queue ``test.steps`` (40 steps of 0.05 s)
and five ``test.noop`` tasks behind it on the same resource, print their ids as JSON,
then run the queue until killed. ``python crashkit.py HOME sleepy``: queue and run
``test.sleepy`` (timeout 1 s; it writes ``started`` in its folder, then sleeps).
``python crashkit.py HOME bulk N``: queue N no-op tasks and exit.
``python crashkit.py HOME drain``: start (recovering what was running) and run the
queue until nothing is due; print the recovery time in seconds as JSON.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import anyio

sys.path.insert(0, str(Path(__file__).parent))

from taskkit import kernel_at


async def main(home: Path, what: str, *rest: str) -> None:
    from adjutant_tasks import Runner, tasks_settings

    async with kernel_at(home) as (h, plugin):
        runner = Runner(h.kernel, plugin.queue, tasks_settings(h.kernel))
        if what == "queue-and-run":
            steps, _ = await plugin.submit("test.steps", {"n": 40, "delay": 0.05})
            noops = [(await plugin.submit("test.noop", {"i": i}))[0].id for i in range(5)]
            print(json.dumps({"steps": steps.id, "steps_dir": steps.artifacts,
                              "noops": noops}), flush=True)
            await runner.serve()
        elif what == "sleepy":
            task, _ = await plugin.submit("test.sleepy", {})
            print(json.dumps({"id": task.id, "dir": task.artifacts}), flush=True)
            await runner.serve()
        elif what == "bulk":
            for i in range(int(rest[0])):
                await plugin.submit("test.noop", {"i": i})
        elif what == "drain":
            started = time.perf_counter()
            recovered = await runner.recover()
            recovery_s = time.perf_counter() - started
            await runner.serve(until_idle=True)
            print(json.dumps({"recovery_s": recovery_s, "recovered": len(recovered)}),
                  flush=True)


if __name__ == "__main__":
    anyio.run(main, Path(sys.argv[1]), *sys.argv[2:])
