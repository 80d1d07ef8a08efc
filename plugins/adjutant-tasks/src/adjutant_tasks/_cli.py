"""``adjutant tasks list|show|cancel|retry|watch|run``: the durable queue from a shell.

Every subcommand takes ``--json``. ``cancel`` and ``retry`` change a task through the
queue's owner: when a runner is alive (``adjutant tasks run``, a chat) they ask it and
wait for the change; when none is, this process takes the runner lock for the moment
it needs, so two processes never change one task at once. ``watch`` follows tasks in
the store until they finish: a progress bar on a terminal, plain lines when the output
is not a terminal or ``NO_COLOR`` is set.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from adjutant_hookspecs import Kernel

    from ._queue import Task, TaskQueue

__all__ = ["configure", "run"]

_REQUEST_WAIT_S = 10.0


def configure(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="tasks_command", metavar="ACTION")
    listing = sub.add_parser("list", help="the tasks, newest first")
    listing.add_argument("--status", choices=["queued", "running", "waiting_for_human", "done",
                                              "failed", "cancelled", "open"],
                         help="only tasks with this status (open: not finished)")
    listing.add_argument("-n", "--limit", type=int, default=50, help="at most this many "
                         "(default 50; 0: all)")
    for name, text in (("show", "one task: inputs, outputs, error, artifacts"),
                       ("cancel", "cancel a queued or running task"),
                       ("retry", "queue a failed or cancelled task again")):
        one = sub.add_parser(name, help=text)
        one.add_argument("task", help="the task id (a unique prefix is enough)")
    for name, text in (("approve", "approve the step a task waits for (bound to its "
                                   "preview)"),
                       ("deny", "deny the step a task waits for")):
        one = sub.add_parser(name, help=text)
        one.add_argument("task", help="the task id (a unique prefix is enough)")
        one.add_argument("--digest", help="the digest of the question you saw (adjutant "
                         "tasks show): refused if the question is another by now")
    watch = sub.add_parser("watch", help="follow tasks until they finish")
    watch.add_argument("task", nargs="*", help="task ids (default: every open task)")
    watch.add_argument("--interval", type=float, default=0.2, help=argparse.SUPPRESS)
    runner = sub.add_parser("run", help="run the queue in this process (until Ctrl-C)")
    runner.add_argument("--until-idle", action="store_true",
                        help="stop when nothing is running or due")
    worker = sub.add_parser("worker", help="run handed-off tasks from the Celery broker "
                            "(plugins.tasks.broker) until Ctrl-C")
    worker.add_argument("--name", help="this worker's name (default: worker-HOST-PID)")
    workers = sub.add_parser("workers", help="the Celery workers' last heartbeats")
    workers.add_argument("--stale-after", type=int, default=None, metavar="N",
                         help="stopped consuming: no heartbeat for N intervals "
                         "(default: plugins.tasks.stale_after)")
    sub.add_parser("schedules", help="the cron schedules")
    unschedule = sub.add_parser("unschedule", help="remove a cron schedule (the tasks it "
                                "queued stay)")
    unschedule.add_argument("schedule", help="the schedule's id (adjutant tasks schedules)")
    for child in sub.choices.values():
        child.add_argument("--json", action="store_true", help="JSON output")


async def run(kernel: Kernel, args: argparse.Namespace) -> int:
    from ._plugin import tasks_of
    from ._queue import NoStoreError, UnknownTaskError

    action = getattr(args, "tasks_command", None)
    if action is None:
        print("adjutant tasks: error: name an action: list, show, cancel, retry, approve, "
              "deny, watch, run, worker, workers, schedules, unschedule", file=sys.stderr)
        return 2
    try:
        plugin = tasks_of(kernel)
        queue = plugin.queue
        if action in ("worker", "workers"):
            return await _celery_command(kernel, args)
        if action in ("list", "show", "watch"):  # handed-off tasks: their news first
            from ._settings import tasks_settings

            settings = tasks_settings(kernel)
            if settings.broker is not None:
                from ._celery import reconcile_if_owner

                await reconcile_if_owner(kernel, queue, settings)
        if action == "list":
            return await _list(queue, args)
        if action == "show":
            task = await queue.find(args.task)
            children = [c for c in [await queue.get(i) for i in await queue.children(task.id)]
                        if c is not None]
            return _show(task, args.json, children)
        if action == "cancel" or action == "retry":
            return await _change(kernel, queue, await queue.find(args.task), action, args.json)
        if action in ("approve", "deny"):
            return await _answer(kernel, queue, await queue.find(args.task), action, args)
        if action == "watch":
            return await _watch(queue, args)
        if action == "schedules":
            return await _schedules(queue, args.json)
        if action == "unschedule":
            return await _unschedule(kernel, queue, args.schedule, args.json)
        return await _run(kernel, queue, args)
    except (UnknownTaskError, NoStoreError, LookupError) as exc:
        print(f"adjutant tasks {action}: error: {exc.args[0]}", file=sys.stderr)
        return 1


def _plain(task: Task) -> dict[str, Any]:
    import msgspec

    return msgspec.to_builtins(task)  # type: ignore[no-any-return]


def _when(ts: float | None) -> str:
    return "-" if ts is None else time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ts))


async def _list(queue: TaskQueue, args: argparse.Namespace) -> int:
    from ._queue import FINISHED

    tasks = [task async for task in queue.all()]
    if args.status == "open":
        tasks = [t for t in tasks if t.status not in FINISHED]
    elif args.status:
        tasks = [t for t in tasks if t.status == args.status]
    tasks.reverse()  # ids sort by creation: newest first
    if args.limit > 0:
        tasks = tasks[:args.limit]
    if args.json:
        print(json.dumps([_plain(t) for t in tasks], ensure_ascii=False))
        return 0
    if not tasks:
        print("no tasks")
        return 0
    for t in tasks:
        note = t.error or t.message
        print(f"{t.id}  {t.status:<17} {t.progress * 100:5.1f}%  {t.capability:<20} "
              f"{_when(t.created_at)}  {note[:60]}".rstrip())
    return 0


def _show(task: Task, as_json: bool, children: Sequence[Task] = ()) -> int:
    if as_json:
        plain = _plain(task)
        plain["children"] = [{"id": c.id, "capability": c.capability, "status": c.status}
                             for c in children]
        print(json.dumps(plain, ensure_ascii=False))
        return 0
    rows = [("id", task.id), ("capability", task.capability), ("status", task.status),
            ("progress", f"{task.progress * 100:.1f}% {task.message}".rstrip()),
            ("attempts", f"{task.attempts} of {task.max_attempts}"
                         + (f", resumed {task.resumes} times" if task.resumes else "")),
            ("created", _when(task.created_at)), ("due", _when(task.not_before)),
            ("started", _when(task.started_at)), ("finished", _when(task.finished_at)),
            ("timeout", f"{task.timeout_s:g} s"), ("parent run", task.parent_run or "-"),
            ("idempotency key", task.idempotency_key or "-"),
            ("input sha256", task.input_hash), ("artifacts", task.artifacts or "-")]
    if task.handoff:
        rows.append(("handed to", f"Celery, {task.handoff}"))
    if task.schedule_id:
        rows.append(("schedule", task.schedule_id))
    if task.error:
        rows.append(("error", task.error))
    if task.parent_task:
        rows.append(("nested in", f"task {task.parent_task} (it waits for this one)"))
    for child in children:
        rows.append(("nested task", f"{child.id} ({child.capability}, {child.status})"))
    if task.waiting_on:
        rows.append(("waits for", f"its nested step's task {task.waiting_on}"))
    for name, value in rows:
        print(f"{name + ':':<17}{value}")
    if task.question is not None:
        _question(task)
    print("inputs:")
    print(json.dumps(task.inputs, indent=2, ensure_ascii=False, sort_keys=True))
    if task.outputs is not None:
        print("outputs:")
        print(json.dumps(task.outputs, indent=2, ensure_ascii=False, sort_keys=True))
    return 0


async def _change(kernel: Kernel, queue: TaskQueue, task: Task,
                  op: Literal["cancel", "retry"], as_json: bool) -> int:
    from ._control import TaskControlError, change_task

    try:
        task = await change_task(kernel, queue, task, op, wait_s=_REQUEST_WAIT_S)
    except TaskControlError as exc:
        print(f"adjutant tasks {op}: error: {exc}", file=sys.stderr)
        return 1
    if as_json:
        print(json.dumps(_plain(task), ensure_ascii=False))
    else:
        print(f"task {task.id}: {task.status}")
    return 0


def _question(task: Task) -> None:
    q = task.question
    assert q is not None
    said = "asks" if task.status == "waiting_for_human" else "asked"
    print(f"{said}:           step {q.step}: {q.summary or q.tool} ({q.level})")
    print(f"  tool:          {q.tool}")
    print("  args:          " + json.dumps(q.args, sort_keys=True, ensure_ascii=False))
    for reason in q.reasons:
        print(f"  why:           {reason}")
    print(f"  digest:        {q.digest}")
    print("  preview:")
    for line in (q.preview or "(no preview)").splitlines():
        sys.stdout.write(f"    {line}\n")  # neutralised: a tool's preview is not ours


async def _answer(kernel: Kernel, queue: TaskQueue, task: Task, action: str,
                  args: argparse.Namespace) -> int:
    from ._control import TaskControlError, answer_task

    if task.status != "waiting_for_human" or task.question is None or task.waiting_on:
        what = (f"waits for its nested step's task {task.waiting_on}: answer that one"
                if task.waiting_on else f"is {task.status} and asks nothing")
        print(f"adjutant tasks {action}: error: task {task.id} {what}", file=sys.stderr)
        return 1
    digest = args.digest or task.question.digest  # what this command read and shows
    if not args.json:
        _question(task)
    by = f"user (adjutant tasks {action}, pid {os.getpid()})"
    try:
        task = await answer_task(kernel, queue, task,
                                 "approve" if action == "approve" else "deny",
                                 digest=digest, by=by, wait_s=_REQUEST_WAIT_S)
    except TaskControlError as exc:
        print(f"adjutant tasks {action}: error: {exc}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(_plain(task), ensure_ascii=False))
    else:
        print(f"task {task.id}: {'approved' if action == 'approve' else 'denied'}; "
              f"{task.status}")
    return 0


def _bar(task: Task, width: int = 30) -> str:
    filled = round(task.progress * width)
    return (f"{task.id[:12]} [{'#' * filled}{'.' * (width - filled)}] "
            f"{task.progress * 100:5.1f}% {task.status:<10} {task.message[:40]}")


def _control(sequence: str) -> None:
    """One of our own terminal controls: through the CLI's neutralising stream's
    ``control`` (which lets only its caller's sequences through), else as is."""
    control = getattr(sys.stdout, "control", None)
    if control is not None:
        control(sequence)
    else:
        sys.stdout.write(sequence)


async def _watch(queue: TaskQueue, args: argparse.Namespace) -> int:
    import anyio

    from ._queue import FINISHED

    ids = [(await queue.find(one)).id for one in args.task] or await queue.open_ids()
    if not ids:
        print("[]" if args.json else "no open tasks")
        return 0
    fancy = (not args.json and sys.stdout.isatty() and not os.environ.get("NO_COLOR")
             and os.environ.get("TERM") != "dumb")
    seen: dict[str, tuple[str, float, str]] = {}
    failed = False
    while True:
        tasks = [t for t in [await queue.get(i) for i in ids] if t is not None]
        lines = []
        for t in tasks:
            state = (t.status, round(t.progress, 3), t.message)
            if fancy:
                lines.append(_bar(t))
            elif seen.get(t.id) != state:
                if args.json:
                    print(json.dumps({"id": t.id, "status": t.status, "progress": t.progress,
                                      "message": t.message, "error": t.error}), flush=True)
                else:
                    print(f"{t.id} {t.status} {t.progress * 100:.0f}% {t.message}".rstrip()
                          + (f" error: {t.error}" if t.error else ""), flush=True)
            seen[t.id] = state
        if fancy:
            for n, line in enumerate(lines):
                if n:
                    sys.stdout.write("\n")
                _control("\r\x1b[K")
                sys.stdout.write(line)  # neutralised: a task's message is not ours
            if len(lines) > 1:
                _control(f"\x1b[{len(lines) - 1}A")
            sys.stdout.flush()
        if all(t.status in FINISHED for t in tasks):
            failed = any(t.status != "done" for t in tasks)
            break
        await anyio.sleep(args.interval)
    if fancy:
        sys.stdout.write("\n" * len(tasks))
        for t in tasks:
            print(f"{t.id} {t.status}" + (f": {t.error}" if t.error else ""))
    return 1 if failed else 0


async def _schedules(queue: TaskQueue, as_json: bool) -> int:
    import msgspec

    found = await queue.schedules()
    if as_json:
        print(json.dumps([msgspec.to_builtins(s) for s in found], ensure_ascii=False))
        return 0
    if not found:
        print("no schedules")
    for s in found:
        print(f"{s.id}  {s.cron:<16} next {_when(s.next_at)}  {s.capability}"
              + ("" if s.enabled else "  (disabled)"))
    return 0


async def _unschedule(kernel: Kernel, queue: TaskQueue, schedule_id: str,
                      as_json: bool) -> int:
    import anyio

    from ._runner import RunnerLock

    if "/" in schedule_id or await queue.get_schedule(schedule_id) is None:
        print(f"adjutant tasks unschedule: error: no schedule {schedule_id!r} (adjutant "
              "tasks schedules lists them)", file=sys.stderr)
        return 1
    lock = RunnerLock(kernel.home)
    if lock.try_acquire():  # no runner: nobody else rewrites schedules now
        try:
            await queue.delete_schedule(schedule_id)
        finally:
            lock.release()
    else:
        await queue.request(schedule_id, "unschedule")
        with anyio.move_on_after(_REQUEST_WAIT_S):
            while await queue.get_schedule(schedule_id) is not None:  # noqa: ASYNC110
                await anyio.sleep(0.05)
        if await queue.get_schedule(schedule_id) is not None:
            print(f"adjutant tasks unschedule: error: asked the runner; schedule "
                  f"{schedule_id} is still there after {_REQUEST_WAIT_S:g} s",
                  file=sys.stderr)
            return 1
    print(json.dumps({"removed": schedule_id}) if as_json else
          f"schedule {schedule_id}: removed")
    return 0


async def _run(kernel: Kernel, queue: TaskQueue, args: argparse.Namespace) -> int:
    from ._runner import Runner, RunnerBusyError
    from ._settings import tasks_settings

    runner = Runner(kernel, queue, tasks_settings(kernel))
    try:
        await runner.serve(until_idle=args.until_idle)
    except RunnerBusyError as exc:
        print(f"adjutant tasks run: error: {exc}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps({"stopped": True}))
    return 0


async def _celery_command(kernel: Kernel, args: argparse.Namespace) -> int:
    """``worker``: consume the broker; ``workers``: the heartbeats."""
    import anyio

    from ._settings import tasks_settings

    settings = tasks_settings(kernel)
    broker = settings.broker
    if broker is None:
        print(f"adjutant tasks {args.tasks_command}: error: no broker: set "
              "plugins.tasks.broker in the profile (filesystem:///a/folder, or "
              "redis://host:port/db for a second machine)", file=sys.stderr)
        return 1
    from ._celery import not_consuming, run_worker, waiting_since, workers

    if args.tasks_command == "worker":
        if args.json:
            def started() -> None:
                print(json.dumps({"consuming": True, "pid": os.getpid()}), flush=True)
        else:
            def started() -> None:
                print(f"adjutant tasks worker: consuming (pid {os.getpid()})", flush=True)
        await run_worker(kernel, settings, args.name, started=started)
        return 0
    if args.stale_after is not None:
        import attrs

        settings = attrs.evolve(settings, stale_after=max(2, args.stale_after))
    found = await anyio.to_thread.run_sync(workers, broker)
    waiting = await anyio.to_thread.run_sync(waiting_since, broker)
    now = time.time()
    rows = []
    for w in found:
        why = not_consuming(w, settings, now, waiting)
        gone = why is not None
        rows.append({"name": w.name, "host": w.host, "pid": w.pid, "last_heartbeat": w.at,
                     "last_consumed": w.consumed_at, "reason": why,
                     "oldest_waiting_s": None if waiting is None else round(now - waiting, 3),
                     "age_s": round(now - w.at, 3), "interval_s": w.interval_s,
                     "done": w.done, "failed": w.failed, "duplicates": w.duplicates,
                     "refused": w.refused, "cancelled": w.cancelled, "current": w.current,
                     "status": "stopped consuming" if gone else "consuming"})
    if args.json:
        print(json.dumps(rows, ensure_ascii=False))
        return 0
    if not rows:
        print("no workers have reported (adjutant tasks worker starts one)")
    for r in rows:
        print(f"{r['name']:<24} {r['host']}:{r['pid']:<8} {r['status']:<18} last heartbeat "
              f"{r['age_s']:.1f} s ago  done {r['done']}  failed {r['failed']}"
              + (f"  running {r['current']}" if r["current"] else "")
              + (f"  ({r['reason']})" if r["reason"] else ""))
    return 0
