"""A process that queues and runs tasks, for the tests that SIGKILL it.

``python crashkit.py HOME queue-and-run [N]``: queue ``test.steps`` (N steps of 0.05 s, 40)
and five ``test.noop`` tasks behind it on the same resource, print their ids as JSON,
then run the queue until killed. ``python crashkit.py HOME sleepy``: queue and run
``test.sleepy`` (timeout 1 s; it writes ``started`` in its folder, then sleeps).
``python crashkit.py HOME bulk N``: queue N no-op tasks and exit.
``python crashkit.py HOME flows WORK``: store the flows ``write`` and ``outer`` (a delay,
a nested flow whose fs.write needs approval, then an fs.read of what it wrote), queue
``outer`` with cwd WORK and run the queue, printing every ``task.*`` event as a line.
``python crashkit.py HOME publish WORK``: queue ``test.publish`` (another plugin's
capability that asks the user through the shared TaskContext) with cwd WORK and run
the queue, printing the events.
``python crashkit.py HOME nest WORK``: queue ``test.nest`` (a capability that runs
``test.publish`` as its nested task through ``TaskContext.run_child``) with cwd WORK
and run the queue, printing the events.
``python crashkit.py HOME serve``: run the queue, printing the events.
``python crashkit.py HOME answer ID grant|deny [then-serve]``: answer a waiting task
(as ``adjutant tasks approve`` does when no runner is alive), print ``answered``, and
optionally run the queue.
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


async def _serve_printing(h: object, runner: object) -> None:
    async with anyio.create_task_group() as tg:
        events = h.kernel.bus.subscribe()  # type: ignore[attr-defined]

        async def echo() -> None:
            import msgspec

            from adjutant_hookspecs import event_name

            async for env in events:
                name = event_name(type(env.event))
                if name.startswith("task."):
                    value = msgspec.to_builtins(env.event)
                    print(json.dumps({"event": name, **value}), flush=True)

        tg.start_soon(echo)
        await runner.serve()  # type: ignore[attr-defined]


async def main(home: Path, what: str, *rest: str) -> None:
    import adjutant_files
    import adjutant_guard
    import adjutant_write_gate
    from adjutant_tasks import Runner, tasks_settings
    from adjutant_tasks._automations import FlowStore

    async with kernel_at(home, adjutant_files, adjutant_guard, adjutant_write_gate,
                         mode="execute-with-confirmation") as (h, plugin):
        runner = Runner(h.kernel, plugin.queue, tasks_settings(h.kernel))
        if what == "flows":
            work = rest[0]
            flows = FlowStore(home)
            flows.put({"name": "write", "steps": [
                {"id": "w", "tool": "fs.write",
                 "args": {"path": "out.txt", "content": "${input.text}"}}]})
            flows.put({"name": "outer", "cwd": work, "steps": [
                {"id": "pause", "delay": 0.5},
                {"id": "sub", "flow": "write", "input": {"text": "hello"}},
                {"id": "after", "tool": "fs.read", "args": {"path": "out.txt"}}]})
            task, _ = await plugin.submit("automation.run", {"flow": "outer"})
            print(json.dumps({"id": task.id}), flush=True)
            await _serve_printing(h, runner)
        elif what == "publish":
            task, _ = await plugin.submit("test.publish", {"path": "team.txt",
                                                           "cwd": rest[0]})
            print(json.dumps({"id": task.id, "dir": task.artifacts,
                              "handoff": task.handoff}), flush=True)
            await _serve_printing(h, runner)
        elif what == "nest":
            task, _ = await plugin.submit("test.nest", {"path": "team.txt", "cwd": rest[0]})
            print(json.dumps({"id": task.id, "dir": task.artifacts}), flush=True)
            await _serve_printing(h, runner)
        elif what == "serve":
            await _serve_printing(h, runner)
        elif what == "answer":
            from adjutant_tasks._human import answer
            from adjutant_tasks._runner import RunnerLock

            lock = RunnerLock(home)
            assert lock.try_acquire()
            task = await plugin.queue.get(rest[0])
            assert task is not None
            await answer(h.kernel, plugin.queue, task, rest[1], digest=None, by="crashkit")
            lock.release()
            print(json.dumps({"event": "answered"}), flush=True)
            if list(rest[2:]) == ["then-serve"]:  # (rest is a tuple)
                await _serve_printing(h, runner)
        elif what == "queue-and-run":
            n = int(rest[0]) if rest else 40
            steps, _ = await plugin.submit("test.steps", {"n": n, "delay": 0.05})
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
